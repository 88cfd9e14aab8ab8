//! Graphs and meshes: vertices contracted per coarse bin per object, links remapped. What it
//! keeps:
//!
//! - one metavertex per occupied coarse bin per kept object (per bin when the level has no
//!   objects), as for points ([`super::points`]): mean position (inside the bin), mean numeric
//!   vertex attributes, mode of categorical ones, the object id; metavertices are numbered in
//!   (object, bin) order over the whole level;
//! - every fine link (graph edge, mesh face) becomes the link of its corners' metavertices, in
//!   the fine level's link order (chunk by chunk in key order, then the cross-chunk records),
//!   except:
//!   - a link with a corner whose object was dropped (it has no metavertex);
//!   - a **degenerate** link, two of whose corners fall on one metavertex: a graph self-loop,
//!     a face with two corners in one cluster (a quad too: one arity per store, so it does
//!     not become a triangle);
//!   - a **duplicate**: a link with the same set of metavertices as a link kept before. Graph
//!     edges are thus undirected for duplicates (`[a, b]` and `[b, a]` are one edge; ZV 0.7
//!     stores no direction flag, and 0.9.2 files graph links as an undirected family), faces
//!     are duplicates whatever their winding; the first link keeps its direction or winding;
//! - links between objects (the writer allows them) are kept like any other.
//!
//! Link attributes (graph edge and face attributes) are refused before anything is written
//! ([`check_no_link_attributes`]): merged links would need a rule per attribute.
//!
//! The fine level is read a chunk at a time, twice: its vertices (their metavertices and each
//! fine vertex's parent), then its links, numbered over the whole level as [`crate::export`]
//! numbers them (the chunks back to back in key order, then the cross-chunk records). No fine
//! link is held beyond its chunk; what grows with the level is the parent of each fine vertex
//! (the cross-level links need it) and the coarse links, which the writer holds until it
//! finishes.

use std::collections::HashSet;

use super::points::{column_kinds, PointCoarsener};
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;
use crate::pyramid::links::{ParentMap, NO_PARENT};
use crate::pyramid::source::SourceLevel;
use crate::reader::level_scan::CoordsMap;
use crate::reader::links::{Endpoints, NumberedLink};
use crate::writer::ZvWriter;
use crate::Level;

/// Refuses a level with link attributes (on its chunks' links or its cross-chunk records).
pub(crate) fn check_no_link_attributes(level: &Level) -> Result<()> {
    let mut names = level.link_attribute_names()?;
    names.extend(level.cross_chunk_link_attribute_names()?);
    if let Some(name) = names.first() {
        return Err(Error::Unsupported {
            key: format!("{}/link_attributes/{name}", level.id()),
            what: format!(
                "pyramids of {} geometry with link attributes (merged links would need a rule per attribute; remove `{name}` or store it on the vertices)",
                level.geometry().name()
            ),
        });
    }
    Ok(())
}

/// The coarse link of a fine link whose corners have metavertices `corners`: `None` when it
/// is degenerate (a metavertex twice) or a duplicate of a link in `seen` (same set of
/// metavertices); else the corners, in their order, and the set is remembered.
pub(crate) fn remap(corners: Vec<u64>, seen: &mut HashSet<Vec<u64>>) -> Option<Vec<u64>> {
    let mut set = corners.clone();
    set.sort_unstable();
    if set.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    seen.insert(set).then_some(corners)
}

/// Writes the coarse graph or mesh of the objects `keep` keeps into `writer`, and returns
/// each fine vertex's metavertex.
pub(crate) fn coarsen_level(
    source: &SourceLevel,
    keep: &[bool],
    bin_shape: &[f64],
    writer: &mut ZvWriter,
) -> Result<ParentMap> {
    let level = &source.level;
    check_no_link_attributes(level)?;
    let ndim = bin_shape.len();
    let chunks = level.chunk_keys()?;
    let objects = source.has_objects();
    let names = source.columns();
    let mut coarsener: Option<PointCoarsener> = None;
    // the accumulator of every fine vertex (level-global order), usize::MAX for none
    let mut slot: Vec<usize> = Vec::new();
    let mut rows_of: Vec<(ChunkKey, usize)> = Vec::with_capacity(chunks.len());
    for key in &chunks {
        let Some(chunk) = source.chunk(key)? else {
            continue;
        };
        let c = coarsener.get_or_insert_with(|| {
            PointCoarsener::new(bin_shape.to_vec(), names.clone(), column_kinds(&chunk))
        });
        let rows = chunk.rows(ndim);
        for r in 0..rows {
            let object = if objects {
                match chunk.objects[r] {
                    Some(o) if keep.get(o as usize) == Some(&true) => Some(o),
                    _ => {
                        slot.push(usize::MAX);
                        continue;
                    }
                }
            } else {
                None
            };
            slot.push(c.add(&chunk, r, object));
        }
        rows_of.push((key.clone(), rows));
    }
    let mut parents = ParentMap::default();
    let Some(c) = coarsener.filter(|c| !c.is_empty()) else {
        parents.chunks = rows_of
            .into_iter()
            .map(|(k, rows)| (k, vec![NO_PARENT; rows]))
            .collect();
        return Ok(parents);
    };
    let m = c.finish(objects)?;
    let metavertex =
        |v: u64| -> Option<u64> { slot.get(v as usize).and_then(|&s| m.rank.get(s)).copied() };
    let mut start = 0usize;
    for (key, rows) in rows_of {
        let p = (start..start + rows)
            .map(|v| metavertex(v as u64).unwrap_or(NO_PARENT))
            .collect();
        parents.chunks.push((key, p));
        start += rows;
    }
    let ids = objects.then_some(m.objects.as_slice());
    let first = writer.add_vertices_flat(&m.positions, ids, &m.attributes)?;
    let coarse = coarse_links(level, &parents, |v| metavertex(v).map(|m| first + m))?;
    if *level.geometry() == crate::Geometry::Mesh {
        writer.add_faces(&coarse, &Default::default())?;
    } else {
        let edges: Vec<[u64; 2]> = coarse
            .into_iter()
            .filter_map(|c| c.try_into().ok())
            .collect();
        writer.add_edges(&edges, &Default::default())?;
    }
    Ok(parents)
}

/// The coarse links of `level`'s links, read a chunk at a time (then the cross-chunk
/// records), in the fine level's link order: each fine vertex numbered level-wide (the
/// chunks of `parents` back to back, in key order), its metavertex given by `metavertex`,
/// each link [`remap`]ped. A cross-chunk record that ends at a placeholder endpoint is not a
/// whole link and is left out.
fn coarse_links(
    level: &Level,
    parents: &ParentMap,
    metavertex: impl Fn(u64) -> Option<u64>,
) -> Result<Vec<Vec<u64>>> {
    let width = level.link_width()?;
    let source = level.link_source()?;
    // each chunk's first level-wide number and rows
    let mut place: CoordsMap<&[i64], (u64, u64)> = CoordsMap::default();
    let mut next = 0u64;
    for (key, rows) in &parents.chunks {
        place.insert(key.coords(), (next, rows.len() as u64));
        next += rows.len() as u64;
    }
    let mut number = |k: &ChunkKey, r: u64| -> Option<u64> {
        let &(start, rows) = place.get(k.coords())?;
        (r < rows).then_some(start + r)
    };
    let mut seen = HashSet::new();
    let mut coarse = Vec::new();
    let mut numbered = Vec::new();
    let mut keep = |numbered: &mut Vec<NumberedLink>, coarse: &mut Vec<Vec<u64>>| {
        for l in numbered.drain(..) {
            if l.ends.len() != width {
                continue;
            }
            let corners: Option<Vec<u64>> = l.ends.iter().map(|&v| metavertex(v)).collect();
            if let Some(c) = corners.and_then(|c| remap(c, &mut seen)) {
                coarse.push(c);
            }
        }
    };
    let mut ordinal = 0;
    for (key, rows) in &parents.chunks {
        let Some(links) = level.links(key, width, rows.len() as u64)? else {
            continue;
        };
        source.number_chunk(
            key,
            &links,
            &[],
            ordinal,
            &mut number,
            Endpoints::All,
            &mut numbered,
        )?;
        ordinal += links.len();
        keep(&mut numbered, &mut coarse);
    }
    source.number_cross_chunk(ordinal, &mut number, Endpoints::All, &mut numbered)?;
    keep(&mut numbered, &mut coarse);
    Ok(coarse)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_and_duplicate_links_are_dropped() {
        let mut seen = HashSet::new();
        assert_eq!(remap(vec![1, 0], &mut seen), Some(vec![1, 0]));
        // the reverse edge is a duplicate; a self-loop is degenerate
        assert_eq!(remap(vec![0, 1], &mut seen), None);
        assert_eq!(remap(vec![2, 2], &mut seen), None);
        // faces: two corners in one cluster, then another winding of a kept face
        assert_eq!(remap(vec![3, 4, 3], &mut seen), None);
        assert_eq!(remap(vec![3, 4, 5], &mut seen), Some(vec![3, 4, 5]));
        assert_eq!(remap(vec![5, 4, 3], &mut seen), None);
        assert_eq!(remap(vec![0, 1, 2, 0], &mut seen), None);
    }
}
