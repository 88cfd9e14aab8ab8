//! Batches of vertex rows (point clouds, graphs, skeletons, meshes): their checks, and how a
//! checked batch is kept (spilled per chunk, with the object or bin of each vertex).

use std::collections::{BTreeMap, HashMap};

use super::options::OutOfBounds;
use super::spill::{SpillHeader, HEADER_LEN};
use super::ZvWriter;
use crate::document::Attribute;
use crate::error::{Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::metadata::ChunkKey;

/// A batch of vertices converted to the vertex type and checked.
#[derive(Debug)]
pub(super) struct CheckedRows {
    /// The stored bytes of the coordinates.
    bytes: Vec<u8>,
    /// The stored coordinates.
    stored: Vec<f64>,
    /// Whether each vertex is inside the bounds.
    inside: Vec<bool>,
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
        let n = coords.len() / nd;
        let first = self.n_vertices;
        let mut rows = CheckedRows {
            bytes: Vec::with_capacity(n * self.grid.vertex_bytes()),
            stored: Vec::with_capacity(n * nd),
            inside: Vec::with_capacity(n),
        };
        for i in 0..n {
            let item = || InputItem::Vertex(first + i as u64);
            self.grid.convert_into(
                &coords[i * nd..(i + 1) * nd],
                item,
                &mut rows.bytes,
                &mut rows.stored,
            )?;
            let p = &rows.stored[i * nd..];
            let ok = self.extent.admit(p, item)?;
            if ok || self.opts.out_of_bounds != OutOfBounds::Ignore {
                self.grid.check_range(p, item)?;
            }
            rows.inside.push(ok);
        }
        Ok(rows)
    }

    /// Keeps a checked batch: each vertex kept goes to its chunk's spill file, keyed by its
    /// object (or, without objects, its bin).
    pub(super) fn keep_vertices(
        &mut self,
        rows: &CheckedRows,
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let point_cloud = self.opts.geometry == Geometry::PointCloud;
        self.objects_given = Some(object_ids.is_some() || !point_cloud);
        let objects_mode = self.has_objects();
        let skeleton = self.opts.geometry == Geometry::Skeleton;
        let ignore = self.opts.out_of_bounds == OutOfBounds::Ignore;
        let (nd, vb) = (self.grid.ndim, self.grid.vertex_bytes());
        let mut grouped: HashMap<ChunkKey, Vec<u8>> = HashMap::new();
        for (i, &inside) in rows.inside.iter().enumerate() {
            if !inside && ignore {
                continue;
            }
            let p = &rows.stored[i * nd..(i + 1) * nd];
            self.extent.note(p);
            let key = self.grid.chunk_of(p);
            self.spill.index(&key);
            let object = object_ids.map_or(0, |ids| ids[i]);
            let header = SpillHeader {
                fragment: if objects_mode {
                    object
                } else {
                    self.grid.bin_of(p, &key)
                },
                order: self.n_vertices,
                vertex: self.n_vertices,
            };
            let rec = grouped.entry(key).or_default();
            header.encode_into(rec);
            rec.extend_from_slice(&rows.bytes[i * vb..(i + 1) * vb]);
            self.columns.push_row(attributes, i, rec);
            if objects_mode {
                self.max_object = Some(self.max_object.map_or(object, |m| m.max(object)));
            }
            if skeleton {
                self.vertex_object.push(object);
            }
            self.n_vertices += 1;
        }
        self.spill.append(grouped, self.record_len())
    }

    /// The length of a spill record: header, coordinates, attribute cells.
    pub(super) fn record_len(&self) -> usize {
        HEADER_LEN + self.grid.vertex_bytes() + self.columns.record_len()
    }
}
