//! Batches of vertex rows (point clouds, graphs, skeletons, meshes): their checks, and how a
//! checked batch is kept (a record per vertex in its chunk, with its object or bin).

use std::collections::BTreeMap;

use super::options::OutOfBounds;
use super::placement::{grow, too_far, Extent};
use super::spill::{SpillHeader, HEADER_LEN};
use super::ZvWriter;
use crate::document::Attribute;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;

/// A checked batch of vertices, placed: the chunk of each vertex ([`DROPPED`] for one outside
/// the bounds under [`OutOfBounds::Ignore`], the one policy that drops vertices), the records
/// each chunk gets (counted for batches at least as large as the number of occupied chunks)
/// and the extent of the vertices kept.
#[derive(Debug)]
pub(super) struct Placed {
    /// The chunk index of each vertex.
    pub(super) chunk_of: Vec<u32>,
    pub(super) counts: Option<Vec<u32>>,
    pub(super) extent: Placement,
}

/// The chunk index of a vertex that is not kept.
pub(super) const DROPPED: u32 = u32::MAX;

/// The chunk index of a polyline vertex in a chunk another part of a distributed write owns:
/// the part skips it (the owner writes it), but it still shapes the polyline's pieces.
pub(super) const FOREIGN: u32 = u32::MAX - 1;

/// Checks that a batch of `n` vertices has `n` object ids, if it has any.
pub(crate) fn check_id_count(object_ids: Option<&[u64]>, n: usize) -> Result<()> {
    match object_ids {
        Some(ids) if ids.len() != n => Err(Error::input(
            InputItem::ObjectIds,
            format!("{} object ids for {n} vertices", ids.len()),
        )),
        _ => Ok(()),
    }
}

impl ZvWriter {
    /// The number of vertices in `coords` (`ndim` values each).
    pub(super) fn whole_vertices(&self, coords: &[f64]) -> Result<usize> {
        let nd = self.grid.ndim;
        if coords.len() % nd != 0 {
            return Err(super::bad(format!(
                "{} coordinates are not whole vertices of {nd} axes",
                coords.len()
            )));
        }
        Ok(coords.len() / nd)
    }

    /// Checks that a batch with (`given`) or without object ids agrees with the earlier ones
    /// (point clouds: either every batch has object ids or none has).
    pub(super) fn check_id_mode(&self, given: bool) -> Result<()> {
        if self.objects_given.is_some_and(|prev| prev != given) {
            return Err(Error::input(
                InputItem::ObjectIds,
                "either every batch of points has object ids or none has",
            ));
        }
        Ok(())
    }

    /// Converts and checks every vertex of a batch and finds its chunk (`item(i)` names
    /// vertex `i` of the batch in errors). Chunks met for the first time become occupied; if
    /// the batch is refused they are forgotten again, so a refused batch changes nothing.
    /// In a part of a distributed write, a vertex in a chunk another part owns is refused,
    /// except a polyline's, which is [`FOREIGN`] (a part takes whole polylines and writes the
    /// pieces in its own chunks).
    pub(super) fn place_batch(
        &mut self,
        coords: &[f64],
        item: impl Fn(usize) -> InputItem,
    ) -> Result<Placed> {
        let occupied = self.spill.keys().len();
        let placed = self.try_place(coords, item);
        if placed.is_err() {
            self.spill.truncate(occupied);
        }
        placed
    }

    /// [`ZvWriter::place_batch`] without the rollback.
    fn try_place(&mut self, coords: &[f64], item: impl Fn(usize) -> InputItem) -> Result<Placed> {
        let nd = self.grid.ndim;
        let n = coords.len() / nd;
        let ignore = self.opts.out_of_bounds == OutOfBounds::Ignore;
        let skip_foreign = self.owner.is_some() && self.opts.geometry.is_sequential();
        let mut placed = Placed {
            chunk_of: Vec::with_capacity(n),
            // counting costs a slot per occupied chunk: only for batches at least that large
            counts: (n >= self.spill.keys().len()).then(Vec::new),
            extent: Placement::new(nd),
        };
        let place = &mut placed.extent;
        for (i, p) in coords.chunks_exact(nd).enumerate() {
            let item = || item(i);
            self.grid.store_into(p, item, &mut place.stored)?;
            let inside = self.extent.admit(&place.stored, item)?;
            if !inside && ignore {
                placed.chunk_of.push(DROPPED);
                continue;
            }
            if let Some((x, bin)) = self.grid.chunk_in_range(&place.stored, &mut place.chunk) {
                return Err(too_far(x, bin, item()));
            }
            if skip_foreign && !self.owns_chunk(&place.chunk) {
                placed.chunk_of.push(FOREIGN);
                continue;
            }
            place.note();
            let occupied = self.spill.keys().len();
            let ci = self.spill.index(&place.chunk);
            if ci as usize == occupied {
                self.check_owned(&place.chunk, item)?;
            }
            if let Some(c) = &mut placed.counts {
                if c.len() <= ci as usize {
                    c.resize(ci as usize + 1, 0);
                }
                c[ci as usize] += 1;
            }
            placed.chunk_of.push(ci);
        }
        Ok(placed)
    }

    /// Starts keeping a placed batch: notes its extent and, while the batch fits the memory
    /// budget, makes room for its records in each chunk, so that they are written without
    /// growing buffers. Returns the chunk of each vertex.
    pub(super) fn settle(&mut self, placed: Placed, record_len: usize) -> Vec<u32> {
        placed.extent.finish(&mut self.extent);
        if let Some(c) = placed.counts {
            self.spill.reserve(&c, record_len);
        }
        placed.chunk_of
    }

    /// Starts keeping a placed batch with (or without) `object_ids`: fixes whether the store
    /// has objects and settles the batch ([`ZvWriter::settle`]). Returns the chunk of each
    /// vertex, whether records are keyed by object, and the record length.
    pub(super) fn begin_keep(
        &mut self,
        placed: Placed,
        object_ids: Option<&[u64]>,
    ) -> (Vec<u32>, bool, usize) {
        let point_cloud = self.opts.geometry == Geometry::PointCloud;
        self.objects_given = Some(object_ids.is_some() || !point_cloud);
        let record_len = self.record_len();
        let chunk_of = self.settle(placed, record_len);
        (chunk_of, self.has_objects(), record_len)
    }

    /// Keeps a checked batch: each vertex kept becomes a record of its chunk, keyed by its
    /// object (or, without objects, its bin).
    pub(super) fn keep_vertices(
        &mut self,
        coords: &[f64],
        placed: Placed,
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let (chunk_of, objects_mode, record_len) = self.begin_keep(placed, object_ids);
        let skeleton = self.opts.geometry == Geometry::Skeleton;
        let nd = self.grid.ndim;
        let mut place = Placement::new(nd);
        let mut cells = self.columns.cells(attributes);
        let mut rec = Vec::with_capacity(record_len);
        for (i, p) in coords.chunks_exact(nd).enumerate() {
            let ci = chunk_of[i];
            if ci == DROPPED {
                continue;
            }
            let item = || InputItem::Vertex(self.n_vertices);
            self.grid.store_into(p, item, &mut place.stored)?;
            let object = object_ids.map_or(0, |ids| ids[i]);
            let fragment = if objects_mode {
                object
            } else {
                let chunk = &self.spill.keys()[ci as usize].0;
                self.grid.bin_of(&place.stored, chunk)
            };
            rec.clear();
            SpillHeader {
                fragment,
                vertex: self.n_vertices,
            }
            .encode_into(&mut rec);
            self.grid.put(&place.stored, &mut rec);
            cells.push_row(i, &mut rec);
            self.spill.push(ci, &rec);
            if objects_mode {
                self.max_object = Some(self.max_object.map_or(object, |m| m.max(object)));
            }
            if skeleton {
                self.vertex_object.push(object);
            }
            self.n_vertices += 1;
            if self.spill.over_budget() {
                self.spill.spill_all()?;
            }
        }
        self.spill.unstage();
        Ok(())
    }

    /// The length of a spill record: header, coordinates, attribute cells.
    pub(super) fn record_len(&self) -> usize {
        HEADER_LEN + self.grid.vertex_bytes() + self.columns.record_len()
    }
}

/// Scratch space for placing one vertex after another, and the extent of those placed.
#[derive(Debug)]
pub(super) struct Placement {
    /// The stored coordinates of the current vertex.
    pub(super) stored: Vec<f64>,
    /// Its chunk coordinates.
    pub(super) chunk: Vec<i64>,
    /// The extent of the vertices placed so far (`None` before the first).
    seen: Option<(Vec<f64>, Vec<f64>)>,
}

impl Placement {
    /// Scratch space for `ndim` axes.
    pub(super) fn new(ndim: usize) -> Self {
        Self {
            stored: vec![0.0; ndim],
            chunk: vec![0; ndim],
            seen: None,
        }
    }

    /// Grows the extent to hold the current vertex.
    pub(super) fn note(&mut self) {
        grow_seen(&mut self.seen, &self.stored);
    }

    /// Grows the extent to hold the box `lo..=hi` (the extent of some vertices).
    pub(super) fn note_extent(&mut self, lo: &[f64], hi: &[f64]) {
        match &mut self.seen {
            None => self.seen = Some((lo.to_vec(), hi.to_vec())),
            Some(_) => {
                grow_seen(&mut self.seen, lo);
                grow_seen(&mut self.seen, hi);
            }
        }
    }

    /// Grows the extent to hold the extent of `other`.
    pub(super) fn absorb(&mut self, other: Placement) {
        if let Some((lo, hi)) = other.seen {
            grow_seen(&mut self.seen, &lo);
            grow_seen(&mut self.seen, &hi);
        }
    }

    /// Notes the extent of the vertices placed in `extent` (its corners hold them all).
    pub(super) fn finish(self, extent: &mut Extent) {
        if let Some((lo, hi)) = self.seen {
            extent.note(&lo);
            extent.note(&hi);
        }
    }
}

/// Grows the extent `seen` (`None`: empty) to hold `p`.
fn grow_seen(seen: &mut Option<(Vec<f64>, Vec<f64>)>, p: &[f64]) {
    match seen {
        None => *seen = Some((p.to_vec(), p.to_vec())),
        Some((lo, hi)) => grow(lo, hi, p),
    }
}
