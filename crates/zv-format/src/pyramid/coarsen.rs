//! Coarsening per geometry: how the vertices of a fine level become the metavertices of the
//! next one. Each module says what its coarsening keeps:
//!
//! - point clouds ([`points`]): one metavertex per occupied coarse bin per object;
//! - polylines and streamlines ([`polylines`]): endpoints kept, interior vertices merged per
//!   coarse bin in path order, each object one connected polyline; lines likewise, which keeps
//!   them whole (both vertices are endpoints);
//! - skeletons ([`skeletons`]): roots, branch points and leaves kept, chains between them merged
//!   per coarse bin, each object a forest with the same roots;
//! - graphs and meshes ([`linked`]): vertices contracted per coarse bin per object, links
//!   remapped, degenerate and duplicate links dropped.

pub mod linked;
pub mod points;
pub mod polylines;
pub mod skeletons;

/// The coarse bin of a position: `floor(p_i / bin_i)` on every axis (the writer's and the
/// reader's rule for chunks and bins).
pub fn bin_of(position: &[f64], bin_shape: &[f64], out: &mut Vec<i64>) {
    out.clear();
    out.extend(
        position
            .iter()
            .zip(bin_shape)
            .map(|(p, b)| (p / b).floor() as i64),
    );
}

/// The objects read at once by the geometries coarsened object by object.
pub(crate) const OBJECT_BATCH: usize = 4096;

/// The objects of `batch` to read: those `keep` keeps that have vertices.
pub(crate) fn kept(
    source: &crate::pyramid::source::SourceLevel,
    keep: &[bool],
    batch: &[u64],
) -> Vec<u64> {
    batch
        .iter()
        .copied()
        .filter(|&o| {
            keep.get(o as usize) == Some(&true) && source.nonempty.get(o as usize) == Some(&true)
        })
        .collect()
}
