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
/// manifest and its fragment.
#[derive(Clone, Copy, Default)]
struct Task {
    object: u32,
    reference: u32,
    fragment: u32,
}

/// One object's columns, filled in place.
struct Columns {
    chunk: Vec<u32>,
    row: Vec<u64>,
    values: Vec<f64>,
    /// Per vertex attribute of the scan: the rows' little-endian bytes (none: the object has
    /// no rows of it).
    attrs: Vec<Vec<u8>>,
    /// The object-local first row of each reference, for an object whose references are
    /// not in chunk order (laid out in full first; the others grow as the chunks are walked,
    /// and this is empty).
    starts: Vec<u64>,
}

impl Columns {
    /// Room for `rows` rows of the object of `refs`: laid out (zeroed, to be written in
    /// place) when `laid`, else reserved to be appended to.
    fn new(refs: &ObjectRefs, rows: usize, laid: bool, ndim: usize) -> Self {
        let laid = if laid { rows } else { 0 };
        let column = |width: usize| {
            let mut v = Vec::with_capacity(rows * width);
            v.resize(laid * width, 0u8);
            v
        };
        let mut values = Vec::with_capacity(rows * ndim);
        values.resize(laid * ndim, 0.0);
        let mut chunk = Vec::with_capacity(rows);
        chunk.resize(laid, 0);
        let mut row = Vec::with_capacity(rows);
        row.resize(laid, 0);
        Self {
            chunk,
            row,
            values,
            attrs: widths(refs).into_iter().map(column).collect(),
            starts: Vec::new(),
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
                    return Err(Error::inconsistent(key(), "too many fragment references"));
                };
                tasks[next[ci as usize]] = Task {
                    object,
                    reference,
                    fragment,
                };
                next[ci as usize] += 1;
            }
        }
        drop(next);
        // room for each object's rows: objects in chunk order grow as the chunks are walked,
        // from an estimate (the level's mean fragment length, a tenth over); the others have
        // their rows laid out in manifest order first
        let fragments: usize = scan.chunks.iter().map(|c| c.chunk.fragments.len()).sum();
        let per_fragment = scan.total() as f64 / fragments.max(1) as f64;
        let cap = scan.total() as usize;
        let cols: Vec<Columns> = refs
            .iter()
            .map(|r| {
                if r.ordered || r.fragments.is_empty() {
                    let estimate = (r.fragments.len() as f64 * per_fragment * 1.1) as usize + 8;
                    return Columns::new(r, estimate.min(cap), false, ndim);
                }
                let starts: Vec<(u64, u64)> = spans(scan, r).collect();
                let total = starts.last().map_or(0, |s| s.1) as usize;
                let mut col = Columns::new(r, total, true, ndim);
                col.starts = starts.into_iter().map(|(a, _)| a).collect();
                col
            })
            .collect();
        let mut cols = cols;
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
    /// `sources`: bytes and row width) into `out`: appended when the object's references
    /// are in chunk order, else written at its laid-out place.
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
        let rows = c
            .chunk
            .fragments
            .get(f as usize)
            .ok_or_else(|| bad(format!("fragment {f} of chunk {}", c.key())))?;
        let n = rows.len();
        let outside = |a: usize, x: u64, have: usize| {
            let name = &scan.infos[a].name;
            let path = self.chunk_blob(&[names::VERTEX_ATTRIBUTES, name], c.key());
            blob_err(path)(crate::layout::invalid(
                "attribute rows",
                format!("row {x} is outside the {have} rows"),
            ))
        };
        let vertices = &c.chunk.vertices;
        if out.starts.is_empty() {
            // references in chunk order: append
            let s = out.chunk.len();
            out.chunk.extend(std::iter::repeat_n(ci, n));
            let ok = match &rows {
                FragmentRows::Range(r) => {
                    out.row.extend(r.clone());
                    vertices.push_rows(r.clone(), &mut out.values)
                }
                FragmentRows::Explicit(list) => {
                    out.row.extend_from_slice(list);
                    list.iter()
                        .all(|&x| vertices.push_rows(x..x + 1, &mut out.values))
                }
            };
            if !ok {
                return Err(bad(format!("rows {rows:?} of chunk {}", c.key())));
            }
            for (a, (src, dest)) in sources.iter().zip(&mut out.attrs).enumerate() {
                let Some((bytes, w)) = *src else { continue };
                if dest.capacity() == 0 {
                    // the object has no rows of this attribute (its width is 0)
                    continue;
                }
                // rows of chunks without the attribute before these read as zero bytes
                dest.resize(s * w, 0);
                let have = bytes.len() / w.max(1);
                match &rows {
                    FragmentRows::Range(r) => {
                        let src = bytes
                            .get(r.start as usize * w..r.end as usize * w)
                            .ok_or_else(|| outside(a, r.end.saturating_sub(1), have))?;
                        crate::short_copy::append(dest, src);
                    }
                    FragmentRows::Explicit(list) => {
                        for &x in list.iter() {
                            let at = x as usize * w;
                            let src = bytes.get(at..at + w).ok_or_else(|| outside(a, x, have))?;
                            crate::short_copy::append(dest, src);
                        }
                    }
                }
            }
            return Ok(());
        }
        // references out of chunk order: write at the laid-out place
        let s = out
            .starts
            .get(t.reference as usize)
            .copied()
            .unwrap_or(u64::MAX) as usize;
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
            let Some(dest) = dest.get_mut(s * w..end * w) else {
                continue;
            };
            let have = bytes.len() / w.max(1);
            match &rows {
                FragmentRows::Range(r) => {
                    let src = bytes
                        .get(r.start as usize * w..r.end as usize * w)
                        .ok_or_else(|| outside(a, r.end.saturating_sub(1), have))?;
                    dest.copy_from_slice(src);
                }
                FragmentRows::Explicit(list) => {
                    for (d, &x) in dest.chunks_exact_mut(w.max(1)).zip(list.iter()) {
                        let at = x as usize * w;
                        d.copy_from_slice(
                            bytes.get(at..at + w).ok_or_else(|| outside(a, x, have))?,
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// The columns `cols` of the object of `refs`, as results.
    fn gathered(
        &self,
        scan: &LevelScan,
        refs: ObjectRefs,
        cols: Columns,
        ndim: usize,
    ) -> Result<Gathered> {
        let rows = cols.chunk.len();
        let spans = if self.geometry == Geometry::Skeleton {
            spans(scan, &refs).collect()
        } else {
            Vec::new()
        };
        let mut vertex_attributes = BTreeMap::new();
        for ((info, layout), mut bytes) in scan.infos.iter().zip(&refs.attrs).zip(cols.attrs) {
            let Some((data_type, channels)) = *layout else {
                continue;
            };
            // rows of chunks without the attribute read as zero bytes
            bytes.resize(rows * channels * data_type.size().unwrap_or(1), 0);
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
