//! Filling the columns of a group of objects, chunk by chunk.

use std::collections::BTreeMap;

use super::super::level_scan::{LevelScan, ScannedChunk};
use super::super::{blob_err, ChunkRefs, Level, Positions};
use super::plan::ObjectRefs;
use super::Gathered;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::layout::fragment_index::FragmentRows;
use crate::names;

/// One reference to copy: the group-local object, the reference's place in the object's
/// manifest, its fragment and, once counted, the fragment's rows when they are a range
/// (`start..end`; [`EXPLICIT`] as `start` for a list, looked up again when copied).
#[derive(Clone, Copy, Default)]
struct Task {
    object: u32,
    reference: u32,
    fragment: u32,
    start: u64,
    end: u64,
}

/// [`Task::start`] of a fragment whose rows are an explicit list.
const EXPLICIT: u64 = u64::MAX;

/// One object's columns, laid out at their exact size and filled in place.
struct Columns {
    chunk: Vec<u32>,
    row: Vec<u64>,
    values: Vec<f64>,
    /// Per vertex attribute of the scan: the rows' little-endian bytes (empty: the object
    /// has no rows of it).
    attrs: Vec<Vec<u8>>,
    /// The object-local first row of each reference, for an object whose references are
    /// not in chunk order (empty for the others, whose references are written one after
    /// the other as the chunks are walked, from `next`).
    starts: Vec<u64>,
    /// The next row to write of an object whose references are in chunk order.
    next: usize,
}

impl Columns {
    /// `rows` zeroed rows of the object of `refs` (rows of chunks without an attribute
    /// read as zero bytes).
    fn new(refs: &ObjectRefs, rows: usize, ndim: usize) -> Self {
        Self {
            chunk: vec![0; rows],
            row: vec![0; rows],
            values: vec![0.0; rows * ndim],
            attrs: widths(refs)
                .into_iter()
                .map(|w| vec![0; rows * w])
                .collect(),
            starts: Vec::new(),
            next: 0,
        }
    }
}

/// The byte width of a row of each attribute of `refs`, `0` where it has none.
fn widths(refs: &ObjectRefs) -> Vec<usize> {
    refs.attrs
        .iter()
        .map(|l| l.map_or(0, |(t, c)| c * t.size().unwrap_or(1)))
        .collect()
}

impl Level {
    /// The columns of the objects of `refs` (their references resolved), filled chunk by
    /// chunk.
    pub(super) fn fill(&self, scan: &LevelScan, refs: Vec<ObjectRefs>) -> Result<Vec<Gathered>> {
        let ndim = self.root.ndim();
        let key = || self.p(&[names::OBJECT_INDEX, "zarr.json"]);
        let bad = |what: String| Error::inconsistent(key(), what);
        // the references sorted by chunk (object order, then manifest order, within a chunk)
        let mut heads = vec![0usize; scan.chunks.len() + 1];
        for r in &refs {
            for &ci in &r.chunks {
                heads[ci as usize + 1] += 1;
            }
        }
        for i in 1..heads.len() {
            heads[i] += heads[i - 1];
        }
        let mut next = heads.clone();
        let mut tasks = vec![Task::default(); heads[scan.chunks.len()]];
        for (o, r) in refs.iter().enumerate() {
            for (k, (&ci, &f)) in r.chunks.iter().zip(&r.fragments).enumerate() {
                let (Ok(object), Ok(reference), Ok(fragment)) =
                    (u32::try_from(o), u32::try_from(k), u32::try_from(f))
                else {
                    return Err(bad("too many fragment references".into()));
                };
                tasks[next[ci as usize]] = Task {
                    object,
                    reference,
                    fragment,
                    start: EXPLICIT,
                    end: 0,
                };
                next[ci as usize] += 1;
            }
        }
        drop(next);
        // each object's rows, counted chunk by chunk (each fragment's rows checked against
        // its chunk's, so that the columns hold no more than the references name)
        let mut rows = vec![0usize; refs.len()];
        for (ci, c) in scan.chunks.iter().enumerate() {
            let have = c.rows();
            for t in &mut tasks[heads[ci]..heads[ci + 1]] {
                let f = t.fragment;
                let n = match c.chunk.fragments.get(f as usize) {
                    Some(FragmentRows::Range(r)) if r.end <= have => {
                        (t.start, t.end) = (r.start, r.end);
                        r.end - r.start
                    }
                    Some(FragmentRows::Explicit(list)) if list.iter().all(|&x| x < have) => {
                        list.len() as u64
                    }
                    Some(r) => {
                        return Err(bad(format!("rows {r:?} of chunk {}", c.key())));
                    }
                    None => return Err(bad(format!("fragment {f} of chunk {}", c.key()))),
                };
                rows[t.object as usize] += n as usize;
            }
        }
        // the columns at their exact size; an object whose references are out of chunk
        // order has each reference's place laid out first
        let mut cols: Vec<Columns> = refs
            .iter()
            .zip(&rows)
            .map(|(r, &n)| {
                let mut col = Columns::new(r, n, ndim);
                if !r.ordered {
                    col.starts = spans(scan, r).map(|(a, _)| a).collect();
                }
                col
            })
            .collect();
        drop(rows);
        let mut sources: Vec<Option<(&[u8], usize)>> = Vec::new();
        for (ci, c) in scan.chunks.iter().enumerate() {
            let bucket = &tasks[heads[ci]..heads[ci + 1]];
            if bucket.is_empty() {
                continue;
            }
            sources.clear();
            sources.extend(c.attributes.iter().map(|a| {
                a.as_ref().map(|a| {
                    let w = a.data_type().size().unwrap_or(1) * a.channels();
                    (a.as_le_bytes(), w)
                })
            }));
            for t in bucket {
                let o = t.object as usize;
                self.copy_fragment(scan, c, ci as u32, t, &sources, &mut cols[o], ndim)?;
            }
        }
        refs.into_iter()
            .zip(cols)
            .map(|(r, c)| self.gathered(scan, r, c, ndim))
            .collect()
    }

    /// Copies the fragment of task `t` of chunk `c` (index `ci` of `scan`, attribute rows
    /// `sources`: bytes and row width) to its place in `out`: the next rows when the
    /// object's references are in chunk order, else the reference's laid-out place.
    #[allow(clippy::too_many_arguments)]
    fn copy_fragment(
        &self,
        scan: &LevelScan,
        c: &ScannedChunk,
        ci: u32,
        t: &Task,
        sources: &[Option<(&[u8], usize)>],
        out: &mut Columns,
        ndim: usize,
    ) -> Result<()> {
        let f = t.fragment;
        let bad =
            |what: String| Error::inconsistent(self.p(&[names::OBJECT_INDEX, "zarr.json"]), what);
        let rows = if t.start == EXPLICIT {
            c.chunk
                .fragments
                .get(f as usize)
                .ok_or_else(|| bad(format!("fragment {f} of chunk {}", c.key())))?
        } else {
            FragmentRows::Range(t.start..t.end)
        };
        let n = rows.len();
        let s = if out.starts.is_empty() {
            out.next += n;
            out.next - n
        } else {
            out.starts
                .get(t.reference as usize)
                .copied()
                .unwrap_or(u64::MAX) as usize
        };
        let end = s.saturating_add(n);
        let (Some(chunk), Some(numbers), Some(values)) = (
            out.chunk.get_mut(s..end),
            out.row.get_mut(s..end),
            out.values
                .get_mut(s.saturating_mul(ndim)..end.saturating_mul(ndim)),
        ) else {
            return Err(bad(format!(
                "fragment {f} of chunk {} does not fit its plan",
                c.key()
            )));
        };
        chunk.fill(ci);
        let vertices = &c.chunk.vertices;
        match &rows {
            FragmentRows::Range(r) => {
                if !vertices.write_rows(r.clone(), values) {
                    return Err(bad(format!("rows {r:?} of chunk {}", c.key())));
                }
                numbers.iter_mut().zip(r.clone()).for_each(|(o, x)| *o = x);
            }
            FragmentRows::Explicit(list) => {
                let per_row = values.chunks_exact_mut(ndim.max(1));
                for ((&x, o), v) in list.iter().zip(numbers).zip(per_row) {
                    *o = x;
                    if !vertices.write_rows(x..x + 1, v) {
                        return Err(bad(format!("row {x} of chunk {}", c.key())));
                    }
                }
            }
        }
        for (a, (src, dest)) in sources.iter().zip(&mut out.attrs).enumerate() {
            let Some((bytes, w)) = *src else { continue };
            // an object without rows of the attribute has none laid out
            let Some(dest) = dest.get_mut(s * w..end * w).filter(|d| !d.is_empty()) else {
                continue;
            };
            let outside = |x: u64| self.attribute_outside(scan, c, a, bytes.len() / w.max(1), x);
            match &rows {
                FragmentRows::Range(r) => {
                    let src = bytes
                        .get(r.start as usize * w..r.end as usize * w)
                        .ok_or_else(|| outside(r.end.saturating_sub(1)))?;
                    crate::short_copy::copy(dest, src);
                }
                FragmentRows::Explicit(list) => {
                    for (d, &x) in dest.chunks_exact_mut(w.max(1)).zip(list.iter()) {
                        let at = x as usize * w;
                        let src = bytes.get(at..at + w).ok_or_else(|| outside(x))?;
                        crate::short_copy::copy(d, src);
                    }
                }
            }
        }
        Ok(())
    }

    /// The error of row `x` of attribute `a` of chunk `c`, which has `have` rows of it.
    #[cold]
    fn attribute_outside(
        &self,
        scan: &LevelScan,
        c: &ScannedChunk,
        a: usize,
        have: usize,
        x: u64,
    ) -> Error {
        let name = &scan.infos[a].name;
        let path = self.chunk_blob(&[names::VERTEX_ATTRIBUTES, name], c.key());
        blob_err(path)(crate::layout::invalid(
            "attribute rows",
            format!("row {x} is outside the {have} rows"),
        ))
    }

    /// The columns `cols` of the object of `refs`, as results.
    fn gathered(
        &self,
        scan: &LevelScan,
        refs: ObjectRefs,
        cols: Columns,
        ndim: usize,
    ) -> Result<Gathered> {
        let spans = if self.geometry == Geometry::Skeleton {
            spans(scan, &refs).collect()
        } else {
            Vec::new()
        };
        let mut vertex_attributes = BTreeMap::new();
        for ((info, layout), bytes) in scan.infos.iter().zip(&refs.attrs).zip(cols.attrs) {
            let Some((data_type, channels)) = *layout else {
                continue;
            };
            let rows = AttributeRows::from_le(data_type, channels, bytes)
                .map_err(blob_err(self.p(&[names::VERTEX_ATTRIBUTES, &info.name])))?;
            vertex_attributes.insert(info.name.clone(), rows);
        }
        Ok(Gathered {
            fragments: ChunkRefs::from_columns(scan.keys.clone(), refs.chunks, refs.fragments),
            rows: ChunkRefs::from_columns(scan.keys.clone(), cols.chunk, cols.row),
            vertices: Positions::from_flat(ndim, cols.values)?,
            vertex_attributes,
            spans,
        })
    }
}

/// The object-local vertex span of each reference of `refs`, in manifest order.
fn spans<'a>(scan: &'a LevelScan, refs: &'a ObjectRefs) -> impl Iterator<Item = (u64, u64)> + 'a {
    let mut start = 0u64;
    refs.chunks
        .iter()
        .zip(&refs.fragments)
        .map(move |(&ci, &f)| {
            let fragments = &scan.chunks[ci as usize].chunk.fragments;
            let n = fragments.get(f as usize).map_or(0, |x| x.len()) as u64;
            start += n;
            (start - n, start)
        })
}
