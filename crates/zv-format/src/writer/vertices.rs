//! Batches of vertex rows (point clouds, graphs, skeletons, meshes): their checks, and how a
//! checked batch is kept (a record per vertex in its chunk, with its object or bin).

use std::collections::BTreeMap;

use super::options::OutOfBounds;
use super::placement::Extent;
use super::spill::{SpillHeader, HEADER_LEN};
use super::ZvWriter;
use crate::document::Attribute;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;

/// A checked batch of vertices: which are inside the bounds (kept only under
/// [`OutOfBounds::Ignore`], the one policy that drops vertices).
#[derive(Debug)]
pub(super) struct CheckedRows {
    inside: Option<Vec<bool>>,
}

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

    /// Converts and checks every vertex of a batch, before anything is kept.
    pub(super) fn check_vertex_rows(&self, coords: &[f64]) -> Result<CheckedRows> {
        let nd = self.grid.ndim;
        let first = self.n_vertices;
        let ignore = self.opts.out_of_bounds == OutOfBounds::Ignore;
        let mut inside = Vec::with_capacity(if ignore { coords.len() / nd } else { 0 });
        let mut stored = vec![0.0; nd];
        for (i, p) in coords.chunks_exact(nd).enumerate() {
            let item = || InputItem::Vertex(first + i as u64);
            self.grid.store_into(p, item, &mut stored)?;
            let ok = self.extent.admit(&stored, item)?;
            if ok || !ignore {
                self.grid.check_range(&stored, item)?;
            }
            if ignore {
                inside.push(ok);
            }
        }
        Ok(CheckedRows {
            inside: ignore.then_some(inside),
        })
    }

    /// Keeps a checked batch: each vertex kept becomes a record of its chunk, keyed by its
    /// object (or, without objects, its bin).
    pub(super) fn keep_vertices(
        &mut self,
        coords: &[f64],
        rows: &CheckedRows,
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let point_cloud = self.opts.geometry == Geometry::PointCloud;
        self.objects_given = Some(object_ids.is_some() || !point_cloud);
        let objects_mode = self.has_objects();
        let skeleton = self.opts.geometry == Geometry::Skeleton;
        let nd = self.grid.ndim;
        let record_len = self.record_len();
        let mut place = Placement::new(nd);
        let mut cells = self.columns.cells(attributes);
        for (i, p) in coords.chunks_exact(nd).enumerate() {
            if rows.inside.as_ref().is_some_and(|inside| !inside[i]) {
                continue;
            }
            let item = || InputItem::Vertex(self.n_vertices);
            self.grid.store_into(p, item, &mut place.stored)?;
            place.note();
            self.grid.chunk_into(&place.stored, &mut place.chunk);
            let ci = self.spill.index(&place.chunk);
            let object = object_ids.map_or(0, |ids| ids[i]);
            let header = SpillHeader {
                fragment: if objects_mode {
                    object
                } else {
                    self.grid.bin_of(&place.stored, &place.chunk)
                },
                order: self.n_vertices,
                vertex: self.n_vertices,
            };
            let rec = self.spill.record(ci, record_len);
            header.encode_into(rec);
            self.grid.put(&place.stored, rec);
            cells.push_row(i, rec);
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
        place.finish(&mut self.extent);
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
        match &mut self.seen {
            None => self.seen = Some((self.stored.clone(), self.stored.clone())),
            Some((lo, hi)) => {
                for ((l, h), &x) in lo.iter_mut().zip(hi.iter_mut()).zip(&self.stored) {
                    *l = l.min(x);
                    *h = h.max(x);
                }
            }
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
