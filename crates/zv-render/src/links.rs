//! Links that leave a chunk, drawn after every chunk has been read: what the chunk pass must
//! remember ([`Deferred`]) and the segments and triangles they make.
//!
//! Two kinds, following the reader's rules for an object's links:
//!
//! - sequential geometries (lines, polylines, streamlines) with an object index: consecutive
//!   vertices of an object's manifest order are linked, so the last vertex of each fragment
//!   is linked to the first vertex of the next fragment in the manifest (which is often in
//!   another chunk);
//! - explicit geometries (graphs, skeletons, meshes, others), and sequential ones without an
//!   object index: the delta-0 cross-chunk records. A skeleton's record also takes its child
//!   out of the chunk's sequential parent rule.
//!
//! Only the vertices these links name are remembered (their pixel position and ink), so the
//! memory is bounded by the number of links that cross chunks, not by the vertex count.

use std::collections::{HashMap, HashSet};

use zv_format::reader::ObjectIndex;
use zv_format::Level;

use crate::error::{RenderError, Result};
use crate::raster::Vert;

/// A vertex: chunk coordinates and row.
pub(crate) type VertexKey = (Vec<i64>, u64);

/// An end of a fragment: chunk coordinates, fragment, and whether it is the last vertex.
pub(crate) type FragmentEnd = (Vec<i64>, u64, bool);

/// A remembered vertex: where it is drawn and whether it is inside the box.
pub(crate) type Seen = (Vert, bool);

/// What the chunk pass remembers for the links drawn last.
#[derive(Debug, Default)]
pub(crate) struct Deferred {
    /// Sequential geometries: pairs of fragment ends to link.
    pub pairs: Vec<(FragmentEnd, FragmentEnd)>,
    /// The fragment ends needed, by chunk coordinates: `(fragment, last)`.
    pub ends_needed: HashMap<Vec<i64>, Vec<(u64, bool)>>,
    /// Cross-chunk records: the vertices of each record.
    pub records: Vec<Vec<VertexKey>>,
    /// The rows the records name, by chunk coordinates.
    pub rows_needed: HashMap<Vec<i64>, Vec<u64>>,
    /// Skeletons: the children whose parent a record gives.
    pub remote_children: HashSet<VertexKey>,
}

impl Deferred {
    /// The fragment-boundary pairs of every manifest of `index`. A manifest whose ranges
    /// expand to more references than `limit` is refused (a hostile index must not make the
    /// renderer allocate without bound).
    pub(crate) fn from_manifests(index: &ObjectIndex, limit: u64) -> Result<Self> {
        let mut out = Deferred::default();
        let mut count = 0u64;
        for (id, m) in index.manifests.iter().enumerate() {
            if !index.contains(id as u64) {
                continue;
            }
            let mut prev: Option<(Vec<i64>, u64)> = None;
            for (coords, f) in m.refs() {
                count += 1;
                if count > limit {
                    return Err(too_many(limit));
                }
                if let Some((pc, pf)) = prev.take() {
                    out.ends_needed
                        .entry(pc.clone())
                        .or_default()
                        .push((pf, true));
                    out.ends_needed
                        .entry(coords.to_vec())
                        .or_default()
                        .push((f, false));
                    out.pairs
                        .push(((pc, pf, true), (coords.to_vec(), f, false)));
                }
                prev = Some((coords.to_vec(), f));
            }
        }
        Ok(out)
    }

    /// The delta-0 cross-chunk records of `level` (none without the group); for skeletons,
    /// the child of each record is remembered (the first endpoint, or the second when the
    /// records are parent first).
    pub(crate) fn from_records(level: &Level, skeleton: bool) -> Result<Self> {
        let mut out = Deferred::default();
        let Some(ccl) = level.cross_chunk_links(0)? else {
            return Ok(out);
        };
        let child = usize::from(skeleton && level.skeleton_ccl_parent_first()?);
        let links = &ccl.links;
        for r in 0..links.len() {
            let mut ends = Vec::with_capacity(links.link_width());
            for e in 0..links.link_width() {
                // a record ends at its first placeholder endpoint
                let Some((coords, row)) = links.endpoint(r, e) else {
                    break;
                };
                ends.push((coords.to_vec(), row));
            }
            for (coords, row) in &ends {
                out.rows_needed
                    .entry(coords.clone())
                    .or_default()
                    .push(*row);
            }
            if skeleton {
                if let Some(c) = ends.get(child) {
                    out.remote_children.insert(c.clone());
                }
            }
            out.records.push(ends);
        }
        Ok(out)
    }
}

/// The error of an object index that names too many fragments.
fn too_many(limit: u64) -> RenderError {
    RenderError::InvalidOption(format!(
        "the object index names more than {limit} fragments (more than the level can hold); \
         render with --color attribute:NAME or check the store with `zv validate`"
    ))
}

/// What the chunk pass found of the deferred vertices.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Fragment ends.
    pub ends: HashMap<FragmentEnd, Seen>,
    /// Record vertices.
    pub rows: HashMap<VertexKey, Seen>,
}

impl Found {
    /// Adds what one chunk found.
    pub(crate) fn extend(&mut self, other: Found) {
        self.ends.extend(other.ends);
        self.rows.extend(other.rows);
    }
}

/// The primitives the deferred links make, given what was found: a segment per pair of
/// fragment ends, and per record a segment (two endpoints) or a polygon (three or four).
pub(crate) fn primitives(deferred: &Deferred, found: &Found) -> Vec<Vec<Seen>> {
    let mut out = Vec::new();
    for (a, b) in &deferred.pairs {
        if let (Some(a), Some(b)) = (found.ends.get(a), found.ends.get(b)) {
            out.push(vec![*a, *b]);
        }
    }
    for r in &deferred.records {
        let seen: Option<Vec<Seen>> = r.iter().map(|k| found.rows.get(k).copied()).collect();
        if let Some(seen) = seen.filter(|s| s.len() >= 2) {
            out.push(seen);
        }
    }
    out
}
