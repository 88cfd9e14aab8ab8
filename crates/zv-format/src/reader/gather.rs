//! Objects gathered chunk by chunk: the vertices, rows, fragments and vertex attributes of
//! many objects, copied out of the scanned chunks in one pass over the chunks.
//!
//! Reading objects transposes a level: chunks hold their rows by chunk, objects want them in
//! manifest order. Going object by object touches every chunk for every object, a cache miss
//! per fragment reference. Here the requested objects are split into a few groups, one per
//! worker; a group lists each object's fragment references, then walks the chunks in order
//! and copies each chunk's fragments to their places: a chunk's data is read while it is in
//! cache, and each object's columns are written in place. An object whose references come in
//! chunk order (as writers lay point clouds out) simply grows by appending; for any other,
//! the place of each reference is laid out first from the fragment lengths.

use std::collections::BTreeMap;

use rayon::prelude::*;
use zv_core::data_type::DataType;

use super::level_scan::{LevelScan, ScannedChunk};
use super::{blob_err, ChunkRefs, Level, ObjectIndex, Positions};
use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::layout::fragment_index::FragmentRows;
use crate::layout::manifest::BlockFragments;
use crate::names;

/// One object's vertices, rows, fragments and vertex attributes, as columns.
pub(crate) struct Gathered {
    /// `(chunk, fragment)` references in manifest order.
    pub fragments: ChunkRefs,
    /// `(chunk, row)` of each vertex.
    pub rows: ChunkRefs,
    /// The vertex positions.
    pub vertices: Positions,
    /// The vertex attributes, row-aligned with `vertices`.
    pub vertex_attributes: BTreeMap<String, AttributeRows>,
    /// The object-local vertex span of each fragment reference.
    pub spans: Vec<(u64, u64)>,
}

/// Where one object's rows go.
struct Plan {
    /// Fragment references `(chunk index, fragment)` in manifest order.
    refs: Vec<(u32, u64)>,
    /// The object-local index of the first row of each reference; empty when the references
    /// are in chunk order (each is appended as the chunks are walked).
    starts: Vec<u64>,
    /// The number of rows (0 when `starts` is empty).
    total: u64,
    /// Per vertex attribute: the type and channels of its rows (`None`: no chunk of the
    /// object has the attribute).
    attrs: Vec<Option<(DataType, usize)>>,
}

/// One object's columns, filled in place.
struct Columns {
    chunk: Vec<u32>,
    row: Vec<u64>,
    values: Vec<f64>,
    attrs: Vec<Vec<u8>>,
    /// The object-local index of the first row of each reference, as filled.
    starts: Vec<u64>,
}

impl Columns {
    /// Columns of `rows` rows for the object planned in `plan`.
    fn new(plan: &Plan, rows: usize, ndim: usize) -> Self {
        Self {
            chunk: vec![0; rows],
            row: vec![0; rows],
            values: vec![0.0; rows * ndim],
            attrs: plan
                .attrs
                .iter()
                .map(|l| vec![0; rows * l.map_or(0, |(t, c)| c * t.size().unwrap_or(1))])
                .collect(),
            starts: vec![0; plan.refs.len()],
        }
    }
}

impl Level {
    /// The vertices, rows, fragments and vertex attributes of objects `ids` (existing ids of
    /// `index`), from `scan`, which holds every chunk their manifests name; manifests are
    /// checked against the chunks' fragment counts first.
    pub(crate) fn gather_objects(
        &self,
        index: &ObjectIndex,
        ids: &[u64],
        scan: &LevelScan,
    ) -> Result<Vec<Gathered>> {
        let workers = rayon::current_num_threads().max(1) * 2;
        let size = ids.len().div_ceil(workers).max(1);
        let groups: Vec<Result<Vec<Gathered>>> = ids
            .par_chunks(size)
            .map(|group| {
                let plans = group
                    .iter()
                    .map(|&id| self.plan(index, id, scan))
                    .collect::<Result<Vec<_>>>()?;
                self.fill(scan, &plans)
            })
            .collect();
        let mut out = Vec::with_capacity(ids.len());
        for g in groups {
            out.extend(g?);
        }
        Ok(out)
    }

    /// The layout of object `id`'s output (its manifest checked first).
    fn plan(&self, index: &ObjectIndex, id: u64, scan: &LevelScan) -> Result<Plan> {
        let okey = self.p(&[names::OBJECT_INDEX, "zarr.json"]);
        index.check_object(id, &okey, |c| scan.fragments_of(c))?;
        let mut plan = Plan {
            refs: Vec::new(),
            starts: Vec::new(),
            total: 0,
            attrs: vec![None; scan.infos.len()],
        };
        let Some(manifest) = index.manifests.get(id as usize) else {
            return Ok(plan);
        };
        for block in &manifest.blocks {
            // the check above found every chunk and fragment
            let ci = scan.index(&block.chunk).ok_or_else(|| {
                Error::inconsistent(&okey, format!("object {id} names a chunk not read"))
            })?;
            let c = &scan.chunks[ci];
            for (i, a) in c.attributes.iter().enumerate() {
                let Some(a) = a else { continue };
                let layout = (a.data_type(), a.channels());
                match plan.attrs[i] {
                    None => plan.attrs[i] = Some(layout),
                    Some(l) if l != layout => {
                        let name = &scan.infos[i].name;
                        return Err(blob_err(self.p(&[names::VERTEX_ATTRIBUTES, name]))(
                            crate::layout::invalid(
                                "attribute rows",
                                "appending rows of another type or width",
                            ),
                        ));
                    }
                    Some(_) => {}
                }
            }
            let mut add = |f: u64| plan.refs.push((ci as u32, f));
            match &block.fragments {
                BlockFragments::Single(f) => add(*f),
                BlockFragments::Range { start, count } => {
                    (*start..start.saturating_add(*count)).for_each(add)
                }
                BlockFragments::Explicit(fs) => fs.iter().copied().for_each(add),
            }
        }
        if plan.refs.windows(2).any(|w| w[0].0 > w[1].0) {
            for &(ci, f) in &plan.refs {
                plan.starts.push(plan.total);
                let rows = scan.chunks[ci as usize].chunk.fragments.get(f as usize);
                plan.total += rows.map_or(0, |r| r.len() as u64);
            }
        }
        Ok(plan)
    }

    /// The columns of the objects planned in `plans`, filled chunk by chunk.
    fn fill(&self, scan: &LevelScan, plans: &[Plan]) -> Result<Vec<Gathered>> {
        let ndim = self.root.ndim();
        // the references of each chunk: (object, reference)
        let mut counts = vec![0usize; scan.chunks.len() + 1];
        for p in plans {
            for &(ci, _) in &p.refs {
                counts[ci as usize + 1] += 1;
            }
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        // (object, reference, fragment, start), by chunk; an object's references in manifest
        // order
        let mut next = counts.clone();
        let mut tasks = vec![(0u32, 0u32, 0u64, 0u64); counts[scan.chunks.len()]];
        for (o, p) in plans.iter().enumerate() {
            for (r, &(ci, f)) in p.refs.iter().enumerate() {
                tasks[next[ci as usize]] = (o as u32, r as u32, f, 0);
                next[ci as usize] += 1;
            }
        }
        // the starts: planned, or (references in chunk order) appended as the chunks come
        let mut total: Vec<u64> = plans.iter().map(|p| p.total).collect();
        for (ci, c) in scan.chunks.iter().enumerate() {
            for (o, r, f, start) in &mut tasks[counts[ci]..counts[ci + 1]] {
                let (o, r) = (*o as usize, *r as usize);
                *start = match plans[o].starts.get(r) {
                    Some(&s) => s,
                    None => {
                        let s = total[o];
                        let rows = c.chunk.fragments.get(*f as usize);
                        total[o] += rows.map_or(0, |x| x.len() as u64);
                        s
                    }
                };
            }
        }
        let mut cols: Vec<Columns> = plans
            .iter()
            .zip(&total)
            .map(|(p, &n)| Columns::new(p, n as usize, ndim))
            .collect();
        for (ci, c) in scan.chunks.iter().enumerate() {
            for &(o, r, f, start) in &tasks[counts[ci]..counts[ci + 1]] {
                let col = &mut cols[o as usize];
                self.copy_fragment(scan, c, ci as u32, f, start, col)?;
                col.starts[r as usize] = start;
            }
        }
        plans
            .iter()
            .zip(cols)
            .map(|(p, c)| self.gathered(scan, p, c, ndim))
            .collect()
    }

    /// Copies fragment `f` of chunk `c` (index `ci` of `scan`) into `out` from object-local
    /// row `start`.
    fn copy_fragment(
        &self,
        scan: &LevelScan,
        c: &ScannedChunk,
        ci: u32,
        f: u64,
        start: u64,
        out: &mut Columns,
    ) -> Result<()> {
        let ndim = self.root.ndim();
        let key = c.key();
        let bad =
            |what: String| Error::inconsistent(self.p(&[names::OBJECT_INDEX, "zarr.json"]), what);
        let rows = c
            .chunk
            .fragments
            .get(f as usize)
            .ok_or_else(|| bad(format!("fragment {f} of chunk {key}")))?;
        let s = start as usize;
        let n = rows.len();
        let (Some(chunk), Some(numbers), Some(values)) = (
            out.chunk.get_mut(s..s + n),
            out.row.get_mut(s..s + n),
            out.values.get_mut(s * ndim..(s + n) * ndim),
        ) else {
            return Err(bad(format!(
                "fragment {f} of chunk {key} does not fit its plan"
            )));
        };
        chunk.fill(ci);
        let vertices = &c.chunk.vertices;
        match &rows {
            FragmentRows::Range(r) => {
                if !vertices.write_rows(r.clone(), values) {
                    return Err(bad(format!("rows {r:?} of chunk {key}")));
                }
                numbers.iter_mut().zip(r.clone()).for_each(|(o, x)| *o = x);
            }
            FragmentRows::Explicit(list) => {
                for ((k, &x), o) in list.iter().enumerate().zip(numbers.iter_mut()) {
                    *o = x;
                    if !vertices.write_rows(x..x + 1, &mut values[k * ndim..(k + 1) * ndim]) {
                        return Err(bad(format!("row {x} of chunk {key}")));
                    }
                }
            }
        }
        for ((a, dest), info) in c
            .attributes
            .iter()
            .zip(&mut out.attrs)
            .zip(scan.infos.iter())
        {
            let Some(a) = a else { continue };
            let w = a.data_type().size().unwrap_or(1) * a.channels();
            let path = || self.chunk_blob(&[names::VERTEX_ATTRIBUTES, &info.name], key);
            let outside = |x: u64| {
                blob_err(path())(crate::layout::invalid(
                    "attribute rows",
                    format!("row {x} is outside the {} rows", a.num_rows()),
                ))
            };
            let Some(dest) = dest.get_mut(s * w..(s + n) * w) else {
                continue;
            };
            match &rows {
                FragmentRows::Range(r) => {
                    let src = a
                        .as_le_bytes()
                        .get(r.start as usize * w..r.end as usize * w)
                        .ok_or_else(|| outside(r.end.saturating_sub(1)))?;
                    dest.copy_from_slice(src);
                }
                FragmentRows::Explicit(list) => {
                    for (d, &x) in dest.chunks_exact_mut(w.max(1)).zip(list.iter()) {
                        d.copy_from_slice(a.row_bytes(x as usize).ok_or_else(|| outside(x))?);
                    }
                }
            }
        }
        Ok(())
    }

    /// The columns `cols` of the object planned in `plan`, as results.
    fn gathered(
        &self,
        scan: &LevelScan,
        plan: &Plan,
        cols: Columns,
        ndim: usize,
    ) -> Result<Gathered> {
        let (chunks, fragments): (Vec<u32>, Vec<u64>) = plan.refs.iter().copied().unzip();
        let total = cols.chunk.len() as u64;
        let spans = cols
            .starts
            .iter()
            .zip(cols.starts.iter().skip(1).chain([&total]))
            .map(|(&a, &b)| (a, b))
            .collect();
        let mut vertex_attributes = BTreeMap::new();
        for ((info, layout), bytes) in scan.infos.iter().zip(&plan.attrs).zip(cols.attrs) {
            let Some((data_type, channels)) = *layout else {
                continue;
            };
            let rows = AttributeRows::from_le(data_type, channels, bytes)
                .map_err(blob_err(self.p(&[names::VERTEX_ATTRIBUTES, &info.name])))?;
            vertex_attributes.insert(info.name.clone(), rows);
        }
        Ok(Gathered {
            fragments: ChunkRefs::from_columns(scan.keys.clone(), chunks, fragments),
            rows: ChunkRefs::from_columns(scan.keys.clone(), cols.chunk, cols.row),
            vertices: Positions::from_flat(ndim, cols.values)?,
            vertex_attributes,
            spans,
        })
    }
}
