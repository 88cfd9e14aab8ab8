//! Large batches of vertex rows placed and kept on every core.
//!
//! Placing: the batch is cut into slices, each placed apart — its positions checked, its
//! chunks numbered in a lookup of its own in the order the slice first sees them. The slices'
//! chunks are then numbered in slice order, which is the order one pass over the whole batch
//! first sees them: the chunk numbers, and so the store, are those of the one-thread path.
//! The error returned is the first in vertex order, as that path would return it.
//!
//! Keeping: the occupied chunks are cut into one contiguous range per thread, of about equal
//! record counts; each thread reads the whole batch and appends the records of its own
//! chunks, in vertex order. It is taken only when the batch fits the memory budget (nothing
//! is spilled mid-batch) and every attribute is numeric (categorical codes are given in
//! arrival order, one row after another).

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::columns::Cells;
use super::lookup::ChunkLookup;
use super::options::OutOfBounds;
use super::placement::{grow, too_far, Grid};
use super::spill::{SpillChunk, SpillHeader};
use super::vertices::{Placed, Placement, DROPPED};
use super::ZvWriter;
use crate::document::Attribute;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::metadata::ChunkKey;

/// Batches with fewer vertices are placed and kept on one thread.
pub(super) const PARALLEL_MIN: usize = 1 << 16;

/// Whether a batch of `n` vertices is worth the threads.
pub(super) fn parallel(n: usize) -> bool {
    n >= PARALLEL_MIN && rayon::current_num_threads() > 1
}

/// One slice of a batch, placed apart.
struct SlicePlaced {
    /// The slice-local chunk of each vertex placed ([`DROPPED`] for one dropped).
    local: Vec<u32>,
    /// The coordinates of each slice-local chunk (`ndim` values each), in first-seen order.
    keys: Vec<i64>,
    /// The batch index of the first vertex of each slice-local chunk.
    first: Vec<usize>,
    /// The vertices of each slice-local chunk.
    counts: Vec<u32>,
    /// The extent of the vertices kept.
    extent: Placement,
    /// The first error, with its vertex's batch index (the slice stops there).
    error: Option<(usize, Error)>,
}

impl ZvWriter {
    /// [`ZvWriter::place_batch`] on every core (a batch worth it: [`parallel`]); the chunks
    /// are numbered and the error chosen as one pass would number and choose them.
    pub(super) fn place_batch_parallel(
        &mut self,
        coords: &[f64],
        item: impl Fn(usize) -> InputItem + Sync,
    ) -> Result<Placed> {
        let occupied = self.spill.keys().len();
        let placed = self.try_place_parallel(coords, item);
        if placed.is_err() {
            self.spill.truncate(occupied);
        }
        placed
    }

    fn try_place_parallel(
        &mut self,
        coords: &[f64],
        item: impl Fn(usize) -> InputItem + Sync,
    ) -> Result<Placed> {
        let nd = self.grid.ndim.max(1);
        let n = coords.len() / nd;
        let counting = n >= self.spill.keys().len();
        let per = n.div_ceil(rayon::current_num_threads().max(1) * 4).max(1);
        let template = self.spill.lookup();
        let mut slices: Vec<SlicePlaced> = coords
            .par_chunks(per * nd)
            .enumerate()
            .map(|(k, c)| self.place_slice(c, k * per, template, &item))
            .collect();
        // the slices' chunks numbered in slice order; the first error in vertex order
        let mut maps = Vec::with_capacity(slices.len());
        for s in &mut slices {
            let mut map = Vec::with_capacity(s.first.len());
            let mut owner_error = None;
            for (k, key) in s.keys.chunks_exact(nd).enumerate() {
                let before = self.spill.keys().len();
                let ci = self.spill.index(key);
                if ci as usize == before && owner_error.is_none() {
                    // chunks are first seen in vertex order: this is the slice's first
                    if let Err(e) = self.check_owned(key, || item(s.first[k])) {
                        owner_error = Some((s.first[k], e));
                    }
                }
                map.push(ci);
            }
            let error = match (owner_error, s.error.take()) {
                (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
                (a, b) => a.or(b),
            };
            if let Some((_, e)) = error {
                return Err(e);
            }
            maps.push(map);
        }
        let mut chunk_of = vec![0u32; n];
        chunk_of
            .par_chunks_mut(per)
            .zip(slices.par_iter().zip(&maps))
            .for_each(|(out, (s, map))| {
                for (o, &l) in out.iter_mut().zip(&s.local) {
                    *o = if l == DROPPED {
                        DROPPED
                    } else {
                        map[l as usize]
                    };
                }
            });
        let counts = counting.then(|| {
            let mut counts = vec![0u32; self.spill.keys().len()];
            for (s, map) in slices.iter().zip(&maps) {
                for (&c, &ci) in s.counts.iter().zip(map) {
                    counts[ci as usize] += c;
                }
            }
            counts
        });
        let mut extent = Placement::new(nd);
        for s in slices {
            extent.absorb(s.extent);
        }
        Ok(Placed {
            chunk_of,
            counts,
            extent,
        })
    }

    /// Places the vertices of `coords` (batch indices from `start`) in a lookup of their own
    /// (an empty copy of `template`), stopping at the first error. The loop is compiled for
    /// two and three axes apart (fixed-size scratch, so that its per-axis loops unroll), and
    /// once for any other count.
    fn place_slice(
        &self,
        coords: &[f64],
        start: usize,
        template: &ChunkLookup,
        item: &(impl Fn(usize) -> InputItem + Sync),
    ) -> SlicePlaced {
        match self.grid.ndim {
            2 => self.place_slice_in(
                coords,
                start,
                template,
                item,
                Scratch::<[f64; 2], [i64; 2]>::new(2),
            ),
            3 => self.place_slice_in(
                coords,
                start,
                template,
                item,
                Scratch::<[f64; 3], [i64; 3]>::new(3),
            ),
            nd => self.place_slice_in(
                coords,
                start,
                template,
                item,
                Scratch::<Vec<f64>, Vec<i64>>::new(nd.max(1)),
            ),
        }
    }

    fn place_slice_in<F: Axes<f64>, I: Axes<i64>>(
        &self,
        coords: &[f64],
        start: usize,
        template: &ChunkLookup,
        item: &(impl Fn(usize) -> InputItem + Sync),
        mut scratch: Scratch<F, I>,
    ) -> SlicePlaced {
        let nd = scratch.stored.as_ref().len();
        let ignore = self.opts.out_of_bounds == OutOfBounds::Ignore;
        let mut lookup = template.empty_like();
        let mut out = SlicePlaced {
            local: Vec::with_capacity(coords.len() / nd),
            keys: Vec::new(),
            first: Vec::new(),
            counts: Vec::new(),
            extent: Placement::new(nd),
            error: None,
        };
        let mut seen = false;
        for (j, p) in coords.chunks_exact(nd).enumerate() {
            let i = start + j;
            let item = || item(i);
            let stored = scratch.stored.as_mut();
            let chunk = scratch.chunk.as_mut();
            let placed = (|| -> Result<Option<u32>> {
                self.grid.store_into(p, item, stored)?;
                let inside = self.extent.admit(stored, item)?;
                if !inside && ignore {
                    return Ok(None);
                }
                if let Some((x, bin)) = self.grid.chunk_in_range(stored, chunk) {
                    return Err(too_far(x, bin, item()));
                }
                Ok(Some(match lookup.get(chunk) {
                    Some(id) => id,
                    None => {
                        let id = out.first.len() as u32;
                        lookup.insert(chunk, id);
                        out.keys.extend_from_slice(chunk);
                        out.first.push(i);
                        out.counts.push(0);
                        id
                    }
                }))
            })();
            match placed {
                Ok(Some(id)) => {
                    let (lo, hi) = (scratch.lo.as_mut(), scratch.hi.as_mut());
                    if seen {
                        grow(lo, hi, stored);
                    } else {
                        lo.copy_from_slice(stored);
                        hi.copy_from_slice(stored);
                        seen = true;
                    }
                    out.counts[id as usize] += 1;
                    out.local.push(id);
                }
                Ok(None) => out.local.push(DROPPED),
                Err(e) => {
                    out.error = Some((i, e));
                    break;
                }
            }
        }
        if seen {
            out.extent
                .note_extent(scratch.lo.as_ref(), scratch.hi.as_ref());
        }
        out
    }

    /// Whether a placed batch of `n` vertices with `attributes` is kept on every core: it is
    /// worth it, every attribute is numeric and all its records fit the memory budget.
    pub(super) fn keeps_in_parallel(
        &self,
        n: usize,
        attributes: &BTreeMap<String, Attribute>,
    ) -> bool {
        let numeric = attributes
            .values()
            .all(|a| matches!(a.values, crate::document::AttributeValues::Numeric { .. }));
        parallel(n)
            && numeric
            && self
                .spill
                .fits((n as u64).saturating_mul(self.record_len() as u64))
    }

    /// [`ZvWriter::keep_vertices`] on every core, for a batch [`ZvWriter::keeps_in_parallel`]
    /// accepts: the same records in the same order.
    pub(super) fn keep_vertices_parallel(
        &mut self,
        coords: &[f64],
        placed: Placed,
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let (chunk_of, objects_mode, record_len) = self.begin_keep(placed, object_ids);
        let nd = self.grid.ndim.max(1);
        let first = self.n_vertices;
        // the number of each vertex: the vertices kept before it, from the first
        let numbers: Option<Vec<u64>> = chunk_of.contains(&DROPPED).then(|| {
            let mut next = first;
            chunk_of
                .iter()
                .map(|&c| {
                    let v = next;
                    next += u64::from(c != DROPPED);
                    v
                })
                .collect()
        });
        let kept = chunk_of.iter().filter(|&&c| c != DROPPED).count();
        let cells = self.columns.cells(attributes);
        let grid = &self.grid;
        let (keys, chunks) = self.spill.split_mut();
        // one contiguous range of chunks per thread, of about equal record counts
        let mut records = vec![0u64; chunks.len()];
        for &c in &chunk_of {
            if c != DROPPED {
                records[c as usize] += 1;
            }
        }
        let threads = rayon::current_num_threads().max(1) as u64;
        let mut ranges = Vec::new();
        let (mut rest, mut lo, mut sum) = (chunks, 0usize, 0u64);
        for (ci, &r) in records.iter().enumerate() {
            sum += r;
            let last = ci + 1 == records.len();
            if last || sum * threads >= (ranges.len() as u64 + 1) * kept as u64 {
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(ci + 1 - lo);
                ranges.push((lo, mine));
                rest = tail;
                lo = ci + 1;
            }
        }
        let job = KeepJob {
            grid,
            coords,
            chunk_of: &chunk_of,
            numbers: numbers.as_deref(),
            first,
            object_ids,
            objects_mode,
            keys,
            cells: &cells,
            record_len,
        };
        ranges.into_par_iter().try_for_each(|(lo, mine)| match nd {
            2 => job.keep_range::<[f64; 2]>(lo, mine),
            3 => job.keep_range::<[f64; 3]>(lo, mine),
            _ => job.keep_range::<Vec<f64>>(lo, mine),
        })?;
        self.spill.filled(kept as u64 * record_len as u64);
        self.n_vertices += kept as u64;
        let kept_objects = || {
            object_ids
                .unwrap_or_default()
                .iter()
                .zip(&chunk_of)
                .filter(|(_, &c)| c != DROPPED)
                .map(|(&o, _)| o)
        };
        if objects_mode {
            // without ids every vertex is object 0, as in the one-thread path
            let max = match object_ids {
                Some(_) => kept_objects().max(),
                None => (kept > 0).then_some(0),
            };
            if let Some(max) = max {
                self.max_object = Some(self.max_object.map_or(max, |m| m.max(max)));
            }
        }
        if self.opts.geometry == Geometry::Skeleton {
            if object_ids.is_some() {
                self.vertex_object.extend(kept_objects());
            } else {
                self.vertex_object.extend(std::iter::repeat_n(0, kept));
            }
        }
        Ok(())
    }
}

/// A buffer of one value per axis: a fixed-size array for the usual axis counts, a vector for
/// others.
trait Axes<T>: AsRef<[T]> + AsMut<[T]> {
    /// `nd` zeros (an array has its own length).
    fn zeroed(nd: usize) -> Self;
}

impl<T: Copy + Default, const N: usize> Axes<T> for [T; N] {
    fn zeroed(_: usize) -> Self {
        [T::default(); N]
    }
}

impl<T: Copy + Default> Axes<T> for Vec<T> {
    fn zeroed(nd: usize) -> Self {
        vec![T::default(); nd]
    }
}

/// The scratch of placing one vertex: its stored coordinates and chunk, and the extent of the
/// vertices placed.
struct Scratch<F, I> {
    stored: F,
    chunk: I,
    lo: F,
    hi: F,
}

impl<F: Axes<f64>, I: Axes<i64>> Scratch<F, I> {
    fn new(nd: usize) -> Self {
        Self {
            stored: F::zeroed(nd),
            chunk: I::zeroed(nd),
            lo: F::zeroed(nd),
            hi: F::zeroed(nd),
        }
    }
}

/// What keeping a placed batch on every core shares (see
/// [`ZvWriter::keep_vertices_parallel`]).
struct KeepJob<'a> {
    grid: &'a Grid,
    coords: &'a [f64],
    chunk_of: &'a [u32],
    /// The number of each vertex, when some are dropped (else `first` + batch index).
    numbers: Option<&'a [u64]>,
    first: u64,
    object_ids: Option<&'a [u64]>,
    objects_mode: bool,
    keys: &'a [ChunkKey],
    cells: &'a Cells<'a>,
    record_len: usize,
}

impl KeepJob<'_> {
    /// Appends the records of the chunks `lo..lo + mine.len()` (`mine`), in vertex order. The
    /// loop is compiled for two and three axes apart (`F`: the stored position's scratch).
    fn keep_range<F: Axes<f64>>(&self, lo: usize, mine: &mut [SpillChunk]) -> Result<()> {
        let grid = self.grid;
        let nd = grid.ndim.max(1);
        let hi = lo + mine.len();
        let mut stored = F::zeroed(nd);
        let stored = stored.as_mut();
        let mut rec = Vec::with_capacity(self.record_len);
        for (i, p) in self.coords.chunks_exact(stored.len()).enumerate() {
            let ci = self.chunk_of[i] as usize;
            if ci < lo || ci >= hi {
                continue; // another thread's chunk, or dropped
            }
            let vertex = self.numbers.map_or(self.first + i as u64, |v| v[i]);
            grid.store_into(p, || InputItem::Vertex(vertex), stored)?;
            let fragment = if self.objects_mode {
                self.object_ids.map_or(0, |ids| ids[i])
            } else {
                grid.bin_of(stored, &self.keys[ci].0)
            };
            rec.clear();
            SpillHeader { fragment, vertex }.encode_into(&mut rec);
            grid.put(stored, &mut rec);
            self.cells.push_numeric_row(i, &mut rec);
            mine[ci - lo].push(&rec);
        }
        for c in mine.iter_mut() {
            c.unstage();
        }
        Ok(())
    }
}
