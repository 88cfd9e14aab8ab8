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

use super::lookup::ChunkLookup;
use super::options::OutOfBounds;
use super::placement::too_far;
use super::spill::SpillHeader;
use super::vertices::{Placed, Placement, DROPPED};
use super::ZvWriter;
use crate::document::Attribute;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;

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
    /// (an empty copy of `template`), stopping at the first error.
    fn place_slice(
        &self,
        coords: &[f64],
        start: usize,
        template: &ChunkLookup,
        item: &(impl Fn(usize) -> InputItem + Sync),
    ) -> SlicePlaced {
        let nd = self.grid.ndim.max(1);
        let ignore = self.opts.out_of_bounds == OutOfBounds::Ignore;
        let mut lookup = template.empty_like();
        let mut place = Placement::new(nd);
        let mut out = SlicePlaced {
            local: Vec::with_capacity(coords.len() / nd),
            keys: Vec::new(),
            first: Vec::new(),
            counts: Vec::new(),
            extent: Placement::new(nd),
            error: None,
        };
        for (j, p) in coords.chunks_exact(nd).enumerate() {
            let i = start + j;
            let item = || item(i);
            let placed = (|| -> Result<Option<u32>> {
                self.grid.store_into(p, item, &mut place.stored)?;
                let inside = self.extent.admit(&place.stored, item)?;
                if !inside && ignore {
                    return Ok(None);
                }
                if let Some((x, bin)) = self.grid.chunk_in_range(&place.stored, &mut place.chunk) {
                    return Err(too_far(x, bin, item()));
                }
                Ok(Some(match lookup.get(&place.chunk) {
                    Some(id) => id,
                    None => {
                        let id = out.first.len() as u32;
                        lookup.insert(&place.chunk, id);
                        out.keys.extend_from_slice(&place.chunk);
                        out.first.push(i);
                        out.counts.push(0);
                        id
                    }
                }))
            })();
            match placed {
                Ok(Some(id)) => {
                    out.extent.note_position(&place.stored);
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
        ranges.into_par_iter().try_for_each(|(lo, mine)| {
            let hi = lo + mine.len();
            let mut stored = vec![0.0; nd];
            let mut rec = Vec::with_capacity(record_len);
            for (i, p) in coords.chunks_exact(nd).enumerate() {
                let ci = chunk_of[i] as usize;
                if ci < lo || ci >= hi {
                    continue; // another thread's chunk, or dropped
                }
                let vertex = numbers.as_ref().map_or(first + i as u64, |v| v[i]);
                grid.store_into(p, || InputItem::Vertex(vertex), &mut stored)?;
                let object = object_ids.map_or(0, |ids| ids[i]);
                let fragment = if objects_mode {
                    object
                } else {
                    grid.bin_of(&stored, &keys[ci].0)
                };
                rec.clear();
                SpillHeader { fragment, vertex }.encode_into(&mut rec);
                grid.put(&stored, &mut rec);
                cells.push_numeric_row(i, &mut rec);
                mine[ci - lo].push(&rec);
            }
            for c in mine.iter_mut() {
                c.unstage();
            }
            Ok::<(), Error>(())
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
