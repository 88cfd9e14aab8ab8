//! Points as typed columns for array libraries ([`PointColumns`], [`Level::point_columns`]):
//! positions in the stored vertex type, each point's object, and vertex attributes, each one
//! buffer that a caller can hand over without converting (numpy, in the Python package).
//!
//! Unlike [`Level::points`] (positions converted to `f64`, every chunk decoded before the
//! result is assembled), chunks are read a window at a time, in parallel, and each window is
//! appended to the columns before the next one is read: memory is the result plus the chunks
//! of one window, and a decoded chunk's rows are copied once, into the result. A whole-level
//! read reserves the columns for the level's recorded vertex count first.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use rayon::prelude::*;
use zv_core::data_type::DataType;

use super::points::{ChunkPart, Column};
use super::{AttributeInfo, Level};
use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::layout::fragment_index::FragmentIndex;
use crate::layout::manifest::BlockFragments;
use crate::metadata::ChunkKey;
use crate::names;

/// Chunks read at once (in parallel) per thread before they are appended, at first; the
/// window then grows while the chunks are small, up to [`WINDOW_MAX_PER_THREAD`] per thread
/// and [`WINDOW_BYTES`] of decoded chunks (fewer windows: threads sleep and wake less).
const WINDOW_PER_THREAD: usize = 2;

/// The most chunks read at once per thread.
const WINDOW_MAX_PER_THREAD: usize = 32;

/// The decoded bytes a window may hold (besides the columns being built).
const WINDOW_BYTES: usize = 64 << 20;

/// Points as columns: positions as stored, each point's object, vertex attributes as stored.
/// Points are in chunk key order, rows in row order within a chunk (in bin order for a box
/// query over a binned point cloud), as [`Level::points`] and [`Level::query_box_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct PointColumns {
    /// Values per point.
    pub ndim: usize,
    /// The stored vertex type (float16, float32 or float64).
    pub vertex_type: DataType,
    /// The positions: little-endian values of `vertex_type`, `ndim` per point, row-major.
    pub positions: Vec<u8>,
    /// Each point's object (the lowest id whose manifest names its fragment; −1 for a point
    /// no manifest names), when asked for and the level has an object index.
    pub object_ids: Option<Vec<i64>>,
    /// The requested vertex attributes, row-aligned with the positions (an attribute no chunk
    /// read has a blob for is absent).
    pub attributes: BTreeMap<String, AttributeRows>,
}

impl PointColumns {
    /// The number of points.
    pub fn len(&self) -> usize {
        let row = self.ndim * self.vertex_type.size().unwrap_or(4);
        self.positions.len().checked_div(row).unwrap_or(0)
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// The manifest blocks that name each chunk read: `(object, fragments)`, by the chunk's place
/// in the keys read.
type Owners = Vec<Vec<(u64, BlockFragments)>>;

/// The smallest and largest coordinate per axis of `keys` (empty ranges for no keys).
fn key_range(keys: &[ChunkKey]) -> (Vec<i64>, Vec<i64>) {
    let n = keys.first().map_or(0, |k| k.coords().len());
    let mut lo = vec![i64::MAX; n];
    let mut hi = vec![i64::MIN; n];
    for k in keys {
        for ((l, h), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(k.coords()) {
            *l = (*l).min(x);
            *h = (*h).max(x);
        }
    }
    (lo, hi)
}

/// Objects per part when the object index is decoded for the owners of the chunks read.
const OWNER_PART_OBJECTS: usize = 256;

impl Level {
    /// The points of the level, or of the axis-aligned box `[lo, hi]` (inclusive; only the
    /// chunks, and for binned point clouds the bins, that meet it are read), with the vertex
    /// attributes named in `attributes` and, with `object_ids`, each point's object when the
    /// level has an object index. Chunks are read a window at a time (see the
    /// [module docs](self)); every manifest block naming a chunk read is checked against the
    /// chunk's fragment count before it is expanded.
    pub fn point_columns(
        &self,
        bbox: Option<(&[f64], &[f64])>,
        attributes: &[&str],
        object_ids: bool,
    ) -> Result<PointColumns> {
        self.point_columns_in(None, bbox, attributes, object_ids)
    }

    /// [`Level::point_columns`] over the chunks `chunks` only (of those, the ones that meet
    /// the box, if one is given), in the order given; `None`: every chunk of the level. A
    /// chunk the level does not have gives no points. Readers that split a level between
    /// workers (`zv.dask.read_points`) read their share this way.
    pub fn point_columns_in(
        &self,
        chunks: Option<&[ChunkKey]>,
        bbox: Option<(&[f64], &[f64])>,
        attributes: &[&str],
        object_ids: bool,
    ) -> Result<PointColumns> {
        // as many chunks in flight as the store wants (32 requests for an object store)
        self.with_store_pool(|| self.read_point_columns(chunks, bbox, attributes, object_ids))
    }

    /// [`Level::point_columns_in`], on the store's pool.
    fn read_point_columns(
        &self,
        chunks: Option<&[ChunkKey]>,
        bbox: Option<(&[f64], &[f64])>,
        attributes: &[&str],
        object_ids: bool,
    ) -> Result<PointColumns> {
        let keys = match (chunks, bbox) {
            (None, Some((lo, hi))) => self.box_keys(lo, hi)?,
            (None, None) => self.chunk_keys()?,
            (Some(c), None) => c.to_vec(),
            (Some(c), Some((lo, hi))) => {
                let meets: std::collections::HashSet<ChunkKey> =
                    self.box_keys(lo, hi)?.into_iter().collect();
                c.iter().filter(|k| meets.contains(k)).cloned().collect()
            }
        };
        let bins = match bbox {
            Some(_) => self.binned_fragments()?.map(|bpc| (bpc, self.bin_shape())),
            None => None,
        };
        if chunks.is_some() || bbox.is_some() {
            self.prefetch_cells(&keys, attributes, bins.is_some() || object_ids)?;
        }
        let infos = self.attribute_infos_of(attributes)?;
        // the blocks naming each chunk read, from the object index decoded a part at a time
        // in parallel; only blocks of chunks read are kept (a box reads few of the level's)
        let mut owners: Owners = Vec::new();
        let has_index = object_ids && {
            let slot: FxHashMap<&[i64], usize> = keys
                .iter()
                .enumerate()
                .map(|(i, k)| (k.coords(), i))
                .collect();
            owners = vec![Vec::new(); keys.len()];
            // a part of the level (a box, a chunk subset): its blocks scanned out of the index
            // without decoding the others
            let scanned = match (chunks, bbox) {
                (None, None) => None,
                _ => {
                    // the corners of the chunks read: most blocks fail this before hashing
                    let (lo, hi) = key_range(&keys);
                    let inside = |c: &[i64]| {
                        c.len() == lo.len()
                            && c.iter()
                                .zip(&lo)
                                .zip(&hi)
                                .all(|((x, a), b)| a <= x && x <= b)
                    };
                    self.object_index_blocks_where(|c| inside(c) && slot.contains_key(c))?
                }
            };
            if let Some(blocks) = scanned {
                for (oid, b) in blocks {
                    if let Some(&s) = slot.get(b.chunk.as_slice()) {
                        owners[s].push((oid, b.fragments));
                    }
                }
                true
            } else {
                self.object_index_parts(OWNER_PART_OBJECTS, |first, manifests| {
                    if first == 0 {
                        owners.iter_mut().for_each(Vec::clear);
                    }
                    for (i, m) in manifests.iter().enumerate() {
                        for b in &m.blocks {
                            if let Some(&s) = slot.get(b.chunk.as_slice()) {
                                owners[s].push((first + i as u64, b.fragments.clone()));
                            }
                        }
                    }
                })?
                .is_some()
            }
        };
        let mut out = PointColumns {
            ndim: self.root.ndim(),
            vertex_type: self.vertex_type,
            positions: Vec::new(),
            object_ids: has_index.then(Vec::new),
            attributes: BTreeMap::new(),
        };
        // a whole level has the recorded vertex count: room for it is reserved up front, so
        // the columns never grow by reallocating (a copy, and old and new buffers at once);
        // a count the allocator refuses (a wrong one) leaves them growing as they go
        let expected = match (chunks, bbox) {
            (None, None) => usize::try_from(self.metadata.vertex_count).unwrap_or(0),
            _ => 0,
        };
        let row = out.ndim * self.vertex_type.size().unwrap_or(4);
        let _ = out
            .positions
            .try_reserve_exact(expected.saturating_mul(row));
        if let Some(ids) = out.object_ids.as_mut() {
            let _ = ids.try_reserve_exact(expected);
        }
        let mut columns: Vec<Column> = infos.iter().map(|_| Column::expecting(expected)).collect();
        let threads = rayon::current_num_threads().max(1);
        let mut window = threads * WINDOW_PER_THREAD;
        let mut start = 0;
        while start < keys.len() {
            let first = start;
            let window_keys = &keys[first..(first + window).min(keys.len())];
            start += window_keys.len();
            let parts: Vec<Option<(ChunkPart, Option<Vec<i64>>)>> = window_keys
                .par_iter()
                .enumerate()
                .map(|(j, k)| {
                    let part = self.chunk_part(k, &infos, |v| match bbox {
                        Some((lo, hi)) => self.rows_in_box(k, v, lo, hi, bins.as_ref()).map(Some),
                        None => Ok(None),
                    })?;
                    let Some(part) = part else { return Ok(None) };
                    let ids = match has_index {
                        true => {
                            let blocks = owners.get(first + j).map_or(&[][..], Vec::as_slice);
                            Some(self.row_objects(k, &part, blocks)?)
                        }
                        false => None,
                    };
                    Ok(Some((part, ids)))
                })
                .collect::<Result<_>>()?;
            let held: usize = parts.iter().flatten().map(|(p, _)| p.byte_len()).sum();
            for (key, p) in window_keys.iter().zip(parts) {
                let Some((part, ids)) = p else { continue };
                self.append(key, &part, ids, &infos, &mut columns, &mut out)?;
            }
            // the next window: as many chunks of this window's average size as fit
            let per_chunk = held / window_keys.len().max(1);
            window =
                (WINDOW_BYTES / per_chunk.max(1)).clamp(threads, threads * WINDOW_MAX_PER_THREAD);
        }
        for (info, column) in infos.iter().zip(columns) {
            let path = || self.p(&[names::VERTEX_ATTRIBUTES, &info.name]);
            if let Some((name, rows)) = column.finish(&info.name, path)? {
                out.attributes.insert(name, rows);
            }
        }
        Ok(out)
    }

    /// Appends the rows `part` keeps of chunk `key` to `out` and `columns`.
    fn append(
        &self,
        key: &ChunkKey,
        part: &ChunkPart,
        ids: Option<Vec<i64>>,
        infos: &[AttributeInfo],
        columns: &mut [Column],
        out: &mut PointColumns,
    ) -> Result<()> {
        let v = &part.vertices;
        match &part.rows {
            None => out.positions.extend_from_slice(v.as_le_bytes()),
            Some(kept) => {
                for &r in kept {
                    let row = usize::try_from(r).ok().and_then(|r| v.row_bytes(r));
                    let row = row.ok_or_else(|| {
                        Error::inconsistent(
                            self.chunk_blob(&[names::VERTICES], key),
                            format!("row {r} is outside the {} rows", v.len()),
                        )
                    })?;
                    out.positions.extend_from_slice(row);
                }
            }
        }
        if let (Some(all), Some(ids)) = (out.object_ids.as_mut(), ids) {
            match &part.rows {
                None => all.extend_from_slice(&ids),
                // rows were checked above
                Some(kept) => all.extend(kept.iter().map(|&r| ids[r as usize])),
            }
        }
        for ((info, column), a) in infos.iter().zip(columns.iter_mut()).zip(&part.attributes) {
            let Some(a) = a else { continue };
            let path = || self.chunk_blob(&[names::VERTEX_ATTRIBUTES, &info.name], key);
            match &part.rows {
                None => column.push_all(a, path)?,
                Some(kept) => column.push_rows(a, kept.iter().copied(), path)?,
            }
        }
        Ok(())
    }

    /// The object of every row of chunk `key` (−1: none), from the manifest blocks naming
    /// it; a block naming a fragment the chunk does not have is an error naming the object
    /// index.
    fn row_objects(
        &self,
        key: &ChunkKey,
        part: &ChunkPart,
        blocks: &[(u64, BlockFragments)],
    ) -> Result<Vec<i64>> {
        let rows = part.vertices.len();
        let mut ids = vec![-1i64; rows];
        if blocks.is_empty() {
            return Ok(ids);
        }
        let fragments: FragmentIndex = self.fragments(key, rows as u64)?;
        let n = fragments.len() as u64;
        let mut owner: Vec<Option<u64>> = vec![None; fragments.len()];
        for (oid, block) in blocks {
            let oid = *oid;
            let fits = match block {
                BlockFragments::Single(x) => *x < n,
                BlockFragments::Range { start, count } => {
                    start.checked_add(*count).is_some_and(|e| e <= n)
                }
                BlockFragments::Explicit(v) => v.iter().all(|x| *x < n),
            };
            if !fits {
                return Err(Error::inconsistent(
                    self.p(&[names::OBJECT_INDEX]),
                    format!("object {oid} names fragments {block:?} of chunk {key}, which has {n}"),
                ));
            }
            for f in block.iter() {
                let slot = &mut owner[f as usize];
                *slot = Some(slot.map_or(oid, |s| s.min(oid)));
            }
        }
        for (frag, o) in fragments.iter().zip(owner) {
            // ids index the manifests (a `Vec`), so they fit an `i64`
            let Some(o) = o.map(|o| o as i64) else {
                continue;
            };
            for r in frag.iter() {
                let slot = ids.get_mut(r as usize).ok_or_else(|| {
                    Error::inconsistent(
                        self.chunk_blob(&[names::VERTEX_FRAGMENTS], key),
                        format!("a fragment names row {r} of {rows}"),
                    )
                })?;
                *slot = if *slot < 0 { o } else { (*slot).min(o) };
            }
        }
        Ok(ids)
    }
}
