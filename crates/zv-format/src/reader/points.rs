//! Points with their rows and vertex attributes, as columns ([`Points`]): the answer of a
//! whole-level read ([`Level::points`]) and of a box query ([`Level::query_box_with`]).
//!
//! Both read each chunk once, in parallel: its vertices and the requested vertex attributes
//! (two store reads per blob, its `zarr.json` and its chunk). The chunks' parts are then put
//! back to back in key order: positions converted to `f64` into one buffer, rows as a chunk
//! index and a row number, attribute rows concatenated.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::{blob_err, AttributeInfo, ChunkRefs, Level, Positions, Vertices};
use crate::error::Result;
use crate::layout::attributes::AttributeRows;
use crate::layout::invalid;
use crate::metadata::ChunkKey;
use crate::names;

/// Points read from a level: where each comes from, its position and the requested vertex
/// attributes, all as columns in the same order (chunks in key order, rows in row order
/// within a chunk).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Points {
    /// `(chunk, row)` of each point.
    pub rows: ChunkRefs,
    /// The positions.
    pub positions: Positions,
    /// The requested vertex attributes, row-aligned with `positions` (an attribute no chunk
    /// read has a blob for is absent).
    pub vertex_attributes: BTreeMap<String, AttributeRows>,
}

impl Points {
    /// The number of points.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// The points one chunk contributes: its vertices, the rows kept (`None`: all) and the rows of
/// each requested attribute (`None`: no blob).
pub(crate) struct ChunkPart {
    pub vertices: Vertices,
    pub rows: Option<Vec<u64>>,
    pub attributes: Vec<Option<AttributeRows>>,
}

impl ChunkPart {
    /// The decoded bytes held: positions and attribute rows (about).
    pub(crate) fn byte_len(&self) -> usize {
        let rows = self.vertices.len().max(1);
        let per_row = self.vertices.byte_len() / rows
            + self
                .attributes
                .iter()
                .flatten()
                .map(|a| a.data_type().size().unwrap_or(8) * a.channels())
                .sum::<usize>();
        per_row * rows
    }
}

/// The points one chunk contributes, gathered: its vertices and attribute rows hold the kept
/// rows only, in order; `rows` are their row numbers in the chunk (`None`: every row).
struct KeptRows {
    vertices: Vertices,
    rows: Option<Vec<u64>>,
    attributes: Vec<Option<AttributeRows>>,
}

/// Attribute rows appended chunk after chunk into one buffer.
pub(crate) struct Column {
    rows: Option<AttributeRows>,
    bytes: Vec<u8>,
    /// Rows expected in all (room is reserved for them when the first rows give the width).
    expected: usize,
}

impl Column {
    pub(crate) fn new() -> Self {
        Self::expecting(0)
    }

    /// A column expecting about `rows` rows: room for them is reserved once the first rows
    /// give the row width (if the allocation fails, the column grows as it goes).
    pub(crate) fn expecting(rows: usize) -> Self {
        Self {
            rows: None,
            bytes: Vec::new(),
            expected: rows,
        }
    }

    /// Checks that `rows` have the type and width of the rows before (an error naming
    /// `path` if not).
    fn check(&mut self, rows: &AttributeRows, path: &impl Fn() -> String) -> Result<()> {
        match &self.rows {
            None => {
                let width = rows.data_type().size().unwrap_or(0) * rows.channels();
                let _ = self
                    .bytes
                    .try_reserve_exact(self.expected.saturating_mul(width));
                self.rows = Some(AttributeRows::empty(rows.data_type(), rows.channels()));
            }
            Some(first)
                if first.data_type() != rows.data_type() || first.channels() != rows.channels() =>
            {
                return Err(blob_err(path())(invalid(
                    "attribute rows",
                    "appending rows of another type or width",
                )));
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Appends every row of `rows` (see [`Column::push_rows`]).
    pub(crate) fn push_all(
        &mut self,
        rows: &AttributeRows,
        path: impl Fn() -> String,
    ) -> Result<()> {
        self.check(rows, &path)?;
        self.bytes.extend_from_slice(rows.as_le_bytes());
        Ok(())
    }

    /// Appends rows `which` of `rows`; a row outside `rows`, or rows of another type or width
    /// than those before, is an error naming `path`.
    pub(crate) fn push_rows(
        &mut self,
        rows: &AttributeRows,
        which: impl IntoIterator<Item = u64>,
        path: impl Fn() -> String,
    ) -> Result<()> {
        self.check(rows, &path)?;
        for r in which {
            match usize::try_from(r).ok().and_then(|r| rows.row_bytes(r)) {
                Some(b) => self.bytes.extend_from_slice(b),
                None => {
                    return Err(blob_err(path())(invalid(
                        "attribute rows",
                        format!("row {r} is outside the {} rows", rows.num_rows()),
                    )))
                }
            }
        }
        Ok(())
    }

    /// The rows appended, `None` if nothing was.
    pub(crate) fn finish(
        self,
        name: &str,
        path: impl FnOnce() -> String,
    ) -> Result<Option<(String, AttributeRows)>> {
        let Some(first) = self.rows else {
            return Ok(None);
        };
        AttributeRows::from_le(first.data_type(), first.channels(), self.bytes)
            .map(|r| Some((name.to_owned(), r)))
            .map_err(blob_err(path()))
    }
}

impl Level {
    /// Every point of the level with the vertex attributes named in `attributes`: each chunk
    /// is read once (its vertices and those attributes), in parallel, and the result is in
    /// chunk key order. Equal to the union of [`Level::vertices`] and
    /// [`Level::vertex_attribute`] over [`Level::chunk_keys`].
    pub fn points(&self, attributes: &[&str]) -> Result<Points> {
        let keys = self.chunk_keys()?;
        let infos = self.attribute_infos_of(attributes)?;
        let parts: Vec<Option<ChunkPart>> = self.with_store_pool(|| {
            keys.par_iter()
                .map(|k| self.chunk_part(k, &infos, |_| Ok(None)))
                .collect::<Result<_>>()
        })?;
        self.assemble(keys, parts, &infos)
    }

    /// How each vertex attribute named in `names` is stored.
    pub(crate) fn attribute_infos_of(&self, names: &[&str]) -> Result<Vec<AttributeInfo>> {
        names
            .iter()
            .map(|n| self.vertex_attribute_info(n))
            .collect()
    }

    /// The part of chunk `key` that `select` keeps (`None` from `select`: every row) with the
    /// attributes `infos`; `None` if the chunk has no vertices or `select` keeps no row.
    pub(crate) fn chunk_part(
        &self,
        key: &ChunkKey,
        infos: &[AttributeInfo],
        select: impl Fn(&Vertices) -> Result<Option<Vec<u64>>>,
    ) -> Result<Option<ChunkPart>> {
        let Some(vertices) = self.vertices(key)? else {
            return Ok(None);
        };
        let rows = select(&vertices)?;
        if rows.as_ref().is_some_and(Vec::is_empty) {
            return Ok(None);
        }
        let n = vertices.len() as u64;
        let attributes = infos
            .iter()
            .map(|i| self.vertex_attribute(i, key, n))
            .collect::<Result<_>>()?;
        Ok(Some(ChunkPart {
            vertices,
            rows,
            attributes,
        }))
    }

    /// The kept rows of `part` (chunk `key`, attributes `infos`): a kept row outside the
    /// vertices or an attribute's rows is an error naming the blob.
    fn keep_rows(
        &self,
        part: ChunkPart,
        key: &ChunkKey,
        infos: &[AttributeInfo],
    ) -> Result<KeptRows> {
        let Some(kept) = part.rows else {
            return Ok(KeptRows {
                vertices: part.vertices,
                rows: None,
                attributes: part.attributes,
            });
        };
        let outside = |blob: String, n: usize| {
            let r = kept.iter().find(|&&r| r >= n as u64).copied().unwrap_or(0);
            blob_err(blob)(invalid(
                "kept rows",
                format!("row {r} is outside the {n} rows"),
            ))
        };
        let vertices = match part.vertices.select(&kept) {
            Some(v) => v,
            None => {
                let blob = self.chunk_blob(&[names::VERTICES], key);
                return Err(outside(blob, part.vertices.len()));
            }
        };
        let attributes = part
            .attributes
            .iter()
            .zip(infos)
            .map(|(a, info)| match a {
                None => Ok(None),
                Some(a) => a.select(&kept).map(Some).ok_or_else(|| {
                    let blob = self.chunk_blob(&[names::VERTEX_ATTRIBUTES, &info.name], key);
                    outside(blob, a.num_rows())
                }),
            })
            .collect::<Result<_>>()?;
        Ok(KeptRows {
            vertices,
            rows: Some(kept),
            attributes,
        })
    }

    /// The parts of the chunks `keys` (one per key, `None`: nothing) back to back; the chunk
    /// table of the rows holds the chunks that contribute.
    pub(crate) fn assemble(
        &self,
        keys: Vec<ChunkKey>,
        parts: Vec<Option<ChunkPart>>,
        infos: &[AttributeInfo],
    ) -> Result<Points> {
        let ndim = self.root.ndim();
        // the table holds the chunks that contribute
        let (keys, parts): (Vec<ChunkKey>, Vec<ChunkPart>) = keys
            .into_iter()
            .zip(parts)
            .filter_map(|(k, p)| p.map(|p| (k, p)))
            .unzip();
        let table: Arc<[ChunkKey]> = keys.into();
        // the kept rows of each chunk are gathered in parallel, then the chunks are put back to
        // back, each as one run of rows
        let parts = parts
            .into_par_iter()
            .zip(table.par_iter())
            .map(|(part, key)| self.keep_rows(part, key, infos))
            .collect::<Result<Vec<_>>>()?;
        let total: usize = parts.iter().map(|p| p.vertices.len()).sum();
        let mut rows = ChunkRefs::new(table.clone());
        rows.reserve(total);
        let mut positions = Positions::with_capacity(ndim, total);
        let mut columns: Vec<Column> = infos.iter().map(|_| Column::new()).collect();
        for (c, (key, part)) in table.iter().zip(&parts).enumerate() {
            part.vertices.push_all(positions.values_mut());
            match &part.rows {
                None => rows.extend(c as u32, 0..part.vertices.len() as u64),
                Some(kept) => rows.extend(c as u32, kept.iter().copied()),
            }
            for ((info, column), a) in infos.iter().zip(&mut columns).zip(&part.attributes) {
                let Some(a) = a else { continue };
                let path = || self.chunk_blob(&[names::VERTEX_ATTRIBUTES, &info.name], key);
                column.push_all(a, path)?;
            }
        }
        let mut vertex_attributes = BTreeMap::new();
        for (info, column) in infos.iter().zip(columns) {
            let path = || self.p(&[names::VERTEX_ATTRIBUTES, &info.name]);
            if let Some((name, rows)) = column.finish(&info.name, path)? {
                vertex_attributes.insert(name, rows);
            }
        }
        Ok(Points {
            rows,
            positions,
            vertex_attributes,
        })
    }
}
