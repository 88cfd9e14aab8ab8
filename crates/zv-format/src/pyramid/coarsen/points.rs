//! Point clouds: one metavertex per occupied coarse bin per object (per bin when the level
//! has no objects). What it keeps:
//!
//! - position: the arithmetic mean of the fine positions (computed in `f64`; as the mean of
//!   values inside the bin it stays inside the bin, also once rounded to the vertex type);
//! - numeric vertex attributes: the mean per channel (integer types rounded to nearest, bool
//!   true when at least half are);
//! - categorical vertex attributes: the mode (ties: the smallest category; missing values
//!   count as a category that sorts first);
//! - the object id.
//!
//! Metavertices are numbered in (object, bin) order, bins compared by coordinate tuple.

use std::collections::BTreeMap;

use zv_core::data_type::DataType;

use super::bin_of;
use crate::document::{Attribute, AttributeValues};
use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::metadata::ChunkKey;
use crate::pyramid::links::{ParentMap, NO_PARENT};
use crate::pyramid::source::{SourceChunk, SourceColumn, SourceLevel};
use crate::writer::ZvWriter;

/// The sums of one metavertex.
#[derive(Debug, Clone)]
struct Accumulator {
    position: Vec<f64>,
    count: u64,
    /// Per numeric column, per channel.
    numeric: Vec<Vec<f64>>,
    /// Per categorical column, the count of each category.
    categorical: Vec<BTreeMap<Option<String>, u64>>,
}

/// The schema of a column: numeric (data type, channels) or categorical.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ColumnKind {
    Numeric(DataType, usize),
    Categorical,
}

/// The metavertices of one coarse chunk, as they are built.
#[derive(Debug)]
pub(crate) struct PointCoarsener {
    bin_shape: Vec<f64>,
    /// The vertex attributes' names and `channel_names`.
    names: Vec<(String, Option<Vec<String>>)>,
    kinds: Vec<ColumnKind>,
    /// (object or `u64::MAX`, bin) → accumulator index.
    slots: BTreeMap<(u64, Vec<i64>), usize>,
    acc: Vec<Accumulator>,
    bin: Vec<i64>,
}

/// The metavertices of one coarse chunk, ready for the writer.
#[derive(Debug)]
pub(crate) struct Metavertices {
    /// Positions, `ndim` values per metavertex, in metavertex order.
    pub(crate) positions: Vec<f64>,
    /// Their objects (empty when the level has none).
    pub(crate) objects: Vec<u64>,
    /// The vertex attributes.
    pub(crate) attributes: BTreeMap<String, Attribute>,
    /// The metavertex of each accumulator (the numbers [`PointCoarsener::add`] returned).
    pub(crate) rank: Vec<u64>,
}

impl PointCoarsener {
    /// A coarsener into bins of `bin_shape`, for vertex attributes `names` (with their
    /// `channel_names`, kept where the channels agree) of `kinds`.
    pub(crate) fn new(
        bin_shape: Vec<f64>,
        names: Vec<(String, Option<Vec<String>>)>,
        kinds: Vec<ColumnKind>,
    ) -> Self {
        Self {
            bin_shape,
            names,
            kinds,
            slots: BTreeMap::new(),
            acc: Vec::new(),
            bin: Vec::new(),
        }
    }

    /// Adds row `r` of `chunk` (of object `object`) and returns its accumulator's number.
    pub(crate) fn add(&mut self, chunk: &SourceChunk, r: usize, object: Option<u64>) -> usize {
        let ndim = self.bin_shape.len();
        let p = &chunk.positions[r * ndim..(r + 1) * ndim];
        bin_of(p, &self.bin_shape, &mut self.bin);
        let key = (object.unwrap_or(u64::MAX), self.bin.clone());
        let next = self.acc.len();
        let slot = *self.slots.entry(key).or_insert(next);
        if slot == next {
            self.acc.push(Accumulator {
                position: vec![0.0; ndim],
                count: 0,
                numeric: self
                    .kinds
                    .iter()
                    .filter_map(|k| match k {
                        ColumnKind::Numeric(_, c) => Some(vec![0.0; *c]),
                        ColumnKind::Categorical => None,
                    })
                    .collect(),
                categorical: self
                    .kinds
                    .iter()
                    .filter(|k| **k == ColumnKind::Categorical)
                    .map(|_| BTreeMap::new())
                    .collect(),
            });
        }
        let a = &mut self.acc[slot];
        a.count += 1;
        a.position.iter_mut().zip(p).for_each(|(s, x)| *s += x);
        let (mut n, mut c) = (0, 0);
        for column in &chunk.columns {
            match column {
                SourceColumn::Numeric(rows) => {
                    for (ch, s) in a.numeric[n].iter_mut().enumerate() {
                        *s += rows.get_f64(r, ch).unwrap_or(0.0);
                    }
                    n += 1;
                }
                SourceColumn::Categorical(values) => {
                    let v = values.get(r).cloned().flatten();
                    *a.categorical[c].entry(v).or_insert(0) += 1;
                    c += 1;
                }
            }
        }
        slot
    }

    /// Whether no row was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.acc.is_empty()
    }

    /// The metavertices, in (object, bin) order; `with_objects` keeps their object ids.
    pub(crate) fn finish(self, with_objects: bool) -> Result<Metavertices> {
        let ndim = self.bin_shape.len();
        let mut rank = vec![0u64; self.acc.len()];
        let mut positions = Vec::with_capacity(self.acc.len() * ndim);
        let mut objects = Vec::new();
        let mut numeric: Vec<Vec<f64>> =
            vec![Vec::new(); self.acc.first().map_or(0, |a| a.numeric.len())];
        let mut categorical: Vec<Vec<Option<String>>> =
            vec![Vec::new(); self.acc.first().map_or(0, |a| a.categorical.len())];
        for (i, ((object, _), &slot)) in self.slots.iter().enumerate() {
            rank[slot] = i as u64;
            let a = &self.acc[slot];
            let n = a.count as f64;
            positions.extend(a.position.iter().map(|s| s / n));
            if with_objects {
                objects.push(*object);
            }
            for (out, sums) in numeric.iter_mut().zip(&a.numeric) {
                out.extend(sums.iter().map(|s| s / n));
            }
            for (out, counts) in categorical.iter_mut().zip(&a.categorical) {
                let mut best: Option<(&Option<String>, u64)> = None;
                for (v, &k) in counts {
                    if best.is_none_or(|(_, b)| k > b) {
                        best = Some((v, k));
                    }
                }
                out.push(best.and_then(|(v, _)| v.clone()));
            }
        }
        let mut attributes = BTreeMap::new();
        let (mut numeric, mut categorical) = (numeric.into_iter(), categorical.into_iter());
        for ((name, channel_names), kind) in self.names.into_iter().zip(self.kinds) {
            let channel_names = match kind {
                ColumnKind::Numeric(_, c) => channel_names.filter(|n| n.len() == c),
                ColumnKind::Categorical => None,
            };
            let values = match kind {
                ColumnKind::Numeric(dt, channels) => {
                    let means: Vec<f64> = numeric.next().unwrap_or_default();
                    let values: Vec<f64> = means.into_iter().map(|m| cast_mean(dt, m)).collect();
                    let rows = AttributeRows::from_f64s(dt, channels, &values).map_err(|e| {
                        Error::attribute(crate::error::AttributeKind::Vertex, &name, e.to_string())
                    })?;
                    AttributeValues::Numeric {
                        rows,
                        present: None,
                    }
                }
                ColumnKind::Categorical => {
                    AttributeValues::Categorical(categorical.next().unwrap_or_default())
                }
            };
            attributes.insert(
                name,
                Attribute {
                    values,
                    channel_names,
                },
            );
        }
        Ok(Metavertices {
            positions,
            objects,
            attributes,
            rank,
        })
    }
}

/// Writes the metavertices of the fine chunks `nested` (grouped by the coarse chunk they nest
/// in) into `writer`, one coarse chunk at a time; rows of objects `keep` drops (when the
/// level has objects) get none. Returns each fine vertex's metavertex.
pub(crate) fn coarsen_level(
    source: &SourceLevel,
    keep: &[bool],
    bin_shape: &[f64],
    nested: BTreeMap<Vec<i64>, Vec<ChunkKey>>,
    writer: &mut ZvWriter,
) -> Result<ParentMap> {
    // the parents go to a temporary file a fine chunk at a time
    let mut parents = ParentMap::spilling()?;
    coarsen_groups(
        source,
        keep,
        bin_shape,
        nested.into_values(),
        writer,
        &mut |key, rows| parents.push(key, rows),
        None,
    )?;
    Ok(parents)
}

/// What [`coarsen_groups`] calls with each group's metavertex positions.
pub(crate) type OnGroup<'a> = &'a mut dyn FnMut(&ZvWriter, &[f64]);

/// Coarsens the fine chunks of `groups` a group at a time (a group: the fine chunks of one
/// coarse chunk, so that only its metavertices are held): each group's metavertices, in
/// (object, bin) order, go to `writer`, then `on_chunk(key, parents)` gets each of its fine
/// chunks' rows' metavertices (as the writer numbers them; [`NO_PARENT`] for a row of an
/// object `keep` drops). `on_group(writer, positions)`, when given, gets the positions of
/// each group's metavertices (flat, in their order) once they are written. Returns the
/// number of metavertices written.
pub(crate) fn coarsen_groups(
    source: &SourceLevel,
    keep: &[bool],
    bin_shape: &[f64],
    groups: impl IntoIterator<Item = Vec<ChunkKey>>,
    writer: &mut ZvWriter,
    on_chunk: &mut dyn FnMut(ChunkKey, Vec<u64>) -> Result<()>,
    mut on_group: Option<OnGroup<'_>>,
) -> Result<u64> {
    let ndim = bin_shape.len();
    let objects = source.has_objects();
    let names = source.columns();
    let mut written = 0u64;
    for fine_keys in groups {
        let mut coarsener: Option<PointCoarsener> = None;
        let mut slots: Vec<(ChunkKey, Vec<usize>)> = Vec::new();
        for key in &fine_keys {
            let Some(chunk) = source.chunk(key)? else {
                continue;
            };
            let c = coarsener.get_or_insert_with(|| {
                PointCoarsener::new(bin_shape.to_vec(), names.clone(), column_kinds(&chunk))
            });
            let rows = chunk.rows(ndim);
            let mut of_rows = Vec::with_capacity(rows);
            for r in 0..rows {
                let object = if objects {
                    match chunk.objects[r] {
                        Some(o) if keep.get(o as usize) == Some(&true) => Some(o),
                        _ => {
                            of_rows.push(usize::MAX);
                            continue;
                        }
                    }
                } else {
                    None
                };
                of_rows.push(c.add(&chunk, r, object));
            }
            slots.push((chunk.key, of_rows));
        }
        let Some(c) = coarsener.filter(|c| !c.is_empty()) else {
            for (k, rows) in slots {
                on_chunk(k, vec![NO_PARENT; rows.len()])?;
            }
            continue;
        };
        let m = c.finish(objects)?;
        let ids = objects.then_some(m.objects.as_slice());
        let first = writer.add_vertices_flat(&m.positions, ids, &m.attributes)?;
        if let Some(f) = on_group.as_mut() {
            f(writer, &m.positions);
        }
        written += m.rank.len() as u64;
        for (key, rows) in slots {
            let p = rows
                .iter()
                .map(|&s| m.rank.get(s).map_or(NO_PARENT, |r| first + r))
                .collect();
            on_chunk(key, p)?;
        }
    }
    Ok(written)
}

/// The kinds of the vertex attribute columns of a chunk.
pub(crate) fn column_kinds(chunk: &SourceChunk) -> Vec<ColumnKind> {
    chunk
        .columns
        .iter()
        .map(|c| match c {
            SourceColumn::Numeric(rows) => ColumnKind::Numeric(rows.data_type(), rows.channels()),
            SourceColumn::Categorical(_) => ColumnKind::Categorical,
        })
        .collect()
}

/// A mean in `data_type`: integers rounded to nearest, bool true at one half or more.
fn cast_mean(data_type: DataType, m: f64) -> f64 {
    match data_type {
        DataType::Bool => f64::from(u8::from(m >= 0.5)),
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Complex64
        | DataType::Complex128 => m,
        _ => m.round(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::ChunkKey;

    #[test]
    fn one_metavertex_per_object_and_bin_with_means_and_modes() {
        let chunk = SourceChunk {
            key: ChunkKey(vec![0, 0]),
            positions: vec![1.0, 1.0, 3.0, 1.0, 5.0, 5.0, 2.0, 2.0],
            objects: vec![Some(1), Some(1), Some(1), Some(0)],
            columns: vec![
                SourceColumn::Numeric(
                    AttributeRows::from_f64s(DataType::Int32, 1, &[1.0, 2.0, 9.0, 4.0]).unwrap(),
                ),
                SourceColumn::Categorical(vec![
                    Some("b".into()),
                    Some("a".into()),
                    Some("c".into()),
                    None,
                ]),
            ],
        };
        let mut c = PointCoarsener::new(
            vec![4.0, 4.0],
            vec![("n".into(), None), ("s".into(), None)],
            vec![
                ColumnKind::Numeric(DataType::Int32, 1),
                ColumnKind::Categorical,
            ],
        );
        let slots: Vec<usize> = (0..4).map(|r| c.add(&chunk, r, chunk.objects[r])).collect();
        assert_eq!(slots, vec![0, 0, 1, 2]);
        let m = c.finish(true).unwrap();
        // (object 0, bin 0,0), (object 1, bin 0,0), (object 1, bin 1,1)
        assert_eq!(m.objects, vec![0, 1, 1]);
        assert_eq!(m.rank, vec![1, 2, 0]);
        assert_eq!(m.positions, vec![2.0, 2.0, 2.0, 1.0, 5.0, 5.0]);
        let AttributeValues::Numeric { rows, .. } = &m.attributes["n"].values else {
            panic!("numeric")
        };
        assert_eq!(
            (0..3)
                .map(|r| rows.get_f64(r, 0).unwrap())
                .collect::<Vec<_>>(),
            vec![4.0, 2.0, 9.0] // 1.5 rounds to 2
        );
        assert_eq!(
            m.attributes["s"].values,
            AttributeValues::Categorical(vec![None, Some("a".into()), Some("c".into())])
        );
    }
}
