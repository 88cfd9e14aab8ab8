//! Graphs and meshes: vertices contracted per coarse bin per object, links remapped. What it
//! keeps:
//!
//! - one metavertex per occupied coarse bin per kept object (per bin when the level has no
//!   objects), as for points ([`super::points`]): mean position (inside the bin), mean numeric
//!   vertex attributes, mode of categorical ones, the object id; metavertices are numbered
//!   coarse chunk after coarse chunk (key order), in (object, bin) order within each (the
//!   rows of every coarse chunk are thus in (object, bin) order, as they were when the whole
//!   level was numbered at once);
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
//! The fine level is read a chunk at a time, twice: its vertices a coarse chunk at a time
//! (the fine chunks nesting in it: [`super::points::coarsen_groups`], so that one coarse
//! chunk's metavertex accumulators are held at a time; a level whose chunk keys do not nest
//! is coarsened as one group), then its links, in the level's link order (the chunks in key
//! order, a window of chunks read and decoded in parallel, then the cross-chunk records, read
//! a stored chunk — a 0.9 cell — at a time through [`Level::visit_cross_chunk_links`] and
//! numbered [`CROSS_BATCH`] at a time). No fine link is held beyond its window or batch.
//!
//! Duplicates are found where they can be: a duplicate has the same metavertices as the
//! link it repeats, so it lies in the same coarse chunk, or crosses the same coarse chunks
//! (the chunk of each metavertex is noted as it is written, 4 bytes each:
//! [`MetavertexChunks`], by the writer's own rule, [`ZvWriter::chunk_of`]).
//! - A link across coarse chunks is looked up in the set of those kept before
//!   ([`CoarseLinks`]: 16 bytes an edge, 32 a face, in a hash set).
//! - A link within one coarse chunk goes through a filter of fixed size (512 KiB) that
//!   drops the duplicates of recent links. The writer then leaves out the rest a coarse
//!   chunk at a time as it writes the chunks ([`ZvWriter::drop_duplicate_links`], a set of
//!   that chunk's links), keeping the first of each set. The filter only drops what the
//!   writer would, so the level is the same as with one set of every link: meshes, whose
//!   faces mostly lie in one chunk, are coarsened without a set of the level's faces.
//!
//! What grows with the level is each fine vertex's metavertex (8 bytes, by chunk; written to
//! the parents' temporary file, [`ParentMap::spilling`], once the links are done), each
//! metavertex's chunk (4 bytes), the set of the links across coarse chunks, and the coarse
//! links, which [`CoarseLinks`] hands to the writer a batch at a time and the writer holds
//! (8 bytes an edge, 4 × the arity a face while vertex numbers fit in 32 bits, twice that
//! past them: `writer::link_ids`; and the records of those that cross its chunks) until it
//! finishes.

use rayon::prelude::*;
use rustc_hash::FxHashSet;

use std::collections::BTreeMap;

use super::points::coarsen_groups;
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;
use crate::pyramid::links::{ParentMap, NO_PARENT};
use crate::pyramid::source::SourceLevel;
use crate::reader::level_scan::CoordsMap;
use crate::reader::links::{Endpoints, NumberedLink};
use crate::writer::vertex_set;
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

/// How many cross-chunk records are numbered at a time.
const CROSS_BATCH: usize = 1 << 16;

/// How many coarse link values are held before they go to the writer.
const WRITE_BATCH: usize = 1 << 16;

/// The slots of [`CoarseLinks`]' filter of recent links (a power of two; 512 KiB).
const RECENT: usize = 1 << 14;

/// The coarse chunk of each metavertex, by number (an index into the chunks seen).
#[derive(Default)]
pub(crate) struct MetavertexChunks {
    ids: CoordsMap<Vec<i64>, u32>,
    last: Option<(Vec<i64>, u32)>,
    of: Vec<u32>,
}

impl MetavertexChunks {
    /// Notes that the next metavertex goes to the chunk at `coords`.
    pub(crate) fn push(&mut self, coords: &[i64]) {
        let id = match &self.last {
            Some((c, id)) if c.as_slice() == coords => *id,
            _ => {
                let next = self.ids.len() as u32;
                let id = *self.ids.entry(coords.to_vec()).or_insert(next);
                self.last = Some((coords.to_vec(), id));
                id
            }
        };
        self.of.push(id);
    }

    /// Whether metavertices `corners` all go to one chunk (a metavertex not noted goes to
    /// none).
    fn one_chunk(&self, corners: &[u64]) -> bool {
        let mut chunks = corners.iter().map(|&m| self.of.get(m as usize));
        match chunks.next() {
            Some(Some(first)) => chunks.all(|c| c == Some(first)),
            _ => false,
        }
    }
}

/// The metavertex sets of links across chunks, as pairs for edges (16 bytes a set).
enum Across {
    Edges(FxHashSet<[u64; 2]>),
    Faces(FxHashSet<[u64; 4]>),
}

impl Across {
    /// Adds `set`; returns whether it was not there.
    fn insert(&mut self, set: [u64; 4]) -> bool {
        match self {
            Across::Edges(s) => s.insert([set[0], set[1]]),
            Across::Faces(s) => s.insert(set),
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        match self {
            Across::Edges(s) => s.len(),
            Across::Faces(s) => s.len(),
        }
    }
}

/// The coarse links kept so far and not yet handed to the writer, flat (`width` metavertices
/// each, in the fine level's link order), with what finds their duplicates: for links
/// across coarse chunks, the set of the metavertices of every one kept; for links within
/// one, a filter of the recent ones (the writer leaves out the rest,
/// [`ZvWriter::drop_duplicate_links`], a coarse chunk at a time).
pub(crate) struct CoarseLinks {
    width: usize,
    links: Vec<u64>,
    /// The metavertex sets ([`vertex_set`]) of the links across chunks kept.
    across: Across,
    /// The vertex sets of recent links within one chunk, one per slot of their hash; a slot
    /// never used holds `[u64::MAX; 4]`, which is no link's set (its corners are distinct).
    recent: Vec<[u64; 4]>,
}

impl CoarseLinks {
    /// No links yet, of `width` corners (2 for graph edges, 3 or 4 for faces).
    pub(crate) fn new(width: usize) -> Self {
        Self {
            width,
            links: Vec::new(),
            across: if width == 2 {
                Across::Edges(FxHashSet::default())
            } else {
                Across::Faces(FxHashSet::default())
            },
            recent: vec![[u64::MAX; 4]; RECENT],
        }
    }

    /// Keeps the coarse link of a fine link whose corners have metavertices `corners` (in
    /// the chunks `places` notes), in their order, unless it is degenerate (a metavertex
    /// twice) or a duplicate (the same set of metavertices) of a link kept before: of any
    /// link before when it crosses chunks, of a recent one when it lies in one chunk (the
    /// writer leaves out that chunk's other duplicates, keeping the first of each set as
    /// this does). Returns whether it was kept. A link of another width than the store's is
    /// not kept.
    pub(crate) fn offer(&mut self, corners: &[u64], places: &MetavertexChunks) -> bool {
        if corners.len() != self.width {
            return false;
        }
        let Some(set) = vertex_set(corners) else {
            return false;
        };
        if set[..corners.len()].windows(2).any(|w| w[0] == w[1]) {
            return false;
        }
        let new = if places.one_chunk(corners) {
            let mixed = set.iter().fold(0u64, |h, &v| {
                (h.rotate_left(23) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            });
            let slot = (mixed >> (64 - RECENT.trailing_zeros())) as usize;
            std::mem::replace(&mut self.recent[slot], set) != set
        } else {
            self.across.insert(set)
        };
        if new {
            self.links.extend_from_slice(corners);
        }
        new
    }

    /// The links kept and not yet handed over, `width` values each.
    pub(crate) fn pending(&self) -> &[u64] {
        &self.links
    }

    /// Hands the links kept since the last call to `writer` (as faces for meshes, else as
    /// edges), in order, and forgets them.
    fn flush(&mut self, mesh: bool, writer: &mut ZvWriter) -> Result<()> {
        let none = Default::default();
        if mesh {
            let faces: Vec<Vec<u64>> = self
                .links
                .chunks_exact(self.width)
                .map(<[u64]>::to_vec)
                .collect();
            writer.add_faces(&faces, &none)?;
        } else {
            let edges: Vec<[u64; 2]> = self.links.chunks_exact(2).map(|e| [e[0], e[1]]).collect();
            writer.add_edges(&edges, &none)?;
        }
        self.links.clear();
        Ok(())
    }
}

/// Writes the coarse graph or mesh of the objects `keep` keeps into `writer`, and returns
/// each fine vertex's metavertex. The fine chunks are coarsened a coarse chunk at a time
/// (`nested`: the fine chunk keys grouped by the coarse chunk they nest in, in coarse key
/// order; `None` for a level whose chunk keys do not nest, coarsened as one group): the
/// metavertices of one coarse chunk are held at a time.
pub(crate) fn coarsen_level(
    source: &SourceLevel,
    keep: &[bool],
    bin_shape: &[f64],
    nested: Option<BTreeMap<Vec<i64>, Vec<ChunkKey>>>,
    writer: &mut ZvWriter,
) -> Result<ParentMap> {
    let level = &source.level;
    check_no_link_attributes(level)?;
    writer.drop_duplicate_links();
    let chunks = level.chunk_keys()?;
    let groups: Vec<Vec<ChunkKey>> = match nested {
        Some(n) => n.into_values().collect(),
        None => vec![chunks.clone()],
    };
    // each fine vertex's metavertex, held by chunk (8 bytes a vertex) while the links are
    // coarsened
    let mut metavertices: CoordsMap<Vec<i64>, Vec<u64>> = CoordsMap::default();
    // the coarse chunk of each metavertex (4 bytes each)
    let mut places = MetavertexChunks::default();
    let ndim = bin_shape.len().max(1);
    let mut coords = vec![0i64; ndim];
    let written = coarsen_groups(
        source,
        keep,
        bin_shape,
        groups,
        writer,
        &mut |key, rows| {
            metavertices.insert(key.0, rows);
            Ok(())
        },
        Some(&mut |w: &ZvWriter, positions: &[f64]| {
            for p in positions.chunks_exact(ndim) {
                w.chunk_of(p, &mut coords);
                places.push(&coords);
            }
        }),
    )?;
    // the chunks in key order (the level's link order, and the parents' order)
    let present: Vec<(ChunkKey, u64)> = chunks
        .into_iter()
        .filter_map(|k| {
            let rows = metavertices.get(k.coords())?.len() as u64;
            Some((k, rows))
        })
        .collect();
    if written > 0 {
        coarse_links(level, &present, writer, &places, |k| {
            metavertices.get(k).map(Vec::as_slice)
        })?;
    }
    drop(places);
    // then the parents go to a temporary file a fine chunk at a time, in key order
    let mut parents = ParentMap::spilling()?;
    for (key, _) in present {
        let rows = metavertices.remove(key.coords()).unwrap_or_default();
        parents.push(key, rows)?;
    }
    Ok(parents)
}

/// Writes the coarse links of `level`'s links into `writer`, read a chunk at a time (then
/// the cross-chunk records, a stored chunk or cell at a time and [`CROSS_BATCH`] at a time
/// within it), in the fine level's link order (`chunks`: the level's chunks with their row
/// counts, in key order): the metavertex of each fine vertex of the chunk at some
/// coordinates given by `metavertices` ([`NO_PARENT`] for none), each link offered to
/// [`CoarseLinks`]. A
/// cross-chunk record that ends at a placeholder endpoint is not a whole link and is left
/// out.
fn coarse_links<'a>(
    level: &Level,
    chunks: &[(ChunkKey, u64)],
    writer: &mut ZvWriter,
    places: &MetavertexChunks,
    metavertices: impl Fn(&[i64]) -> Option<&'a [u64]>,
) -> Result<()> {
    let width = level.link_width()?;
    let mesh = *level.geometry() == crate::Geometry::Mesh;
    // the conventions alone: the cross-chunk records are read a batch at a time below
    let source = level.link_conventions()?;
    // an endpoint is "numbered" by its metavertex; a row outside its chunk is an error. The
    // chunk of the last endpoint is kept: a chunk's links are all in one chunk, and a
    // record's ends are often in the chunk of the record before.
    let mut last: (Vec<i64>, Option<&[u64]>) = (Vec::new(), None);
    let mut number = |k: &[i64], r: u64| -> Option<u64> {
        if last.0 != k {
            last.0.clear();
            last.0.extend_from_slice(k);
            last.1 = metavertices(k);
        }
        last.1?.get(r as usize).copied()
    };
    let mut coarse = CoarseLinks::new(width);
    let mut numbered = Vec::new();
    let mut corners = Vec::with_capacity(width);
    let mut keep = |numbered: &mut Vec<NumberedLink>,
                    coarse: &mut CoarseLinks,
                    writer: &mut ZvWriter|
     -> Result<()> {
        for l in numbered.drain(..) {
            if l.ends.len() != width {
                continue;
            }
            corners.clear();
            corners.extend(l.ends.iter().copied().take_while(|&m| m != NO_PARENT));
            if corners.len() == width {
                coarse.offer(&corners, places);
            }
        }
        if coarse.pending().len() >= WRITE_BATCH {
            coarse.flush(mesh, writer)?;
        }
        Ok(())
    };
    let mut ordinal = 0;
    // a window of chunks' links read and decoded in parallel, then numbered in order
    for window in chunks.chunks(crate::io_pool::window_len()) {
        let read: Vec<Result<Option<_>>> = window
            .par_iter()
            .map(|(key, rows)| level.links(key, width, *rows))
            .collect();
        for ((key, _), links) in window.iter().zip(read) {
            let Some(links) = links? else {
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
            keep(&mut numbered, &mut coarse, writer)?;
        }
    }
    // the cross-chunk records, a stored batch at a time, numbered CROSS_BATCH at a time
    level.visit_cross_chunk_links(0, &mut |batch| {
        for start in (0..batch.len()).step_by(CROSS_BATCH) {
            let range = start..(start + CROSS_BATCH).min(batch.len());
            source.number_records(
                batch,
                ordinal,
                range,
                &mut number,
                Endpoints::All,
                &mut numbered,
            )?;
            keep(&mut numbered, &mut coarse, writer)?;
        }
        ordinal += batch.len();
        Ok(())
    })?;
    // the rest, or no links at all (the writer then knows there are none)
    coarse.flush(mesh, writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Metavertices `0..n`, those below `split` in chunk `[0]`, the others in `[1]`.
    fn places(n: u64, split: u64) -> MetavertexChunks {
        let mut p = MetavertexChunks::default();
        for m in 0..n {
            p.push(&[i64::from(m >= split)]);
        }
        p
    }

    #[test]
    fn degenerate_and_duplicate_links_are_dropped() {
        // in one chunk (found by the filter) and across two (found by the set)
        for split in [100, 2] {
            let at = places(100, split);
            let mut edges = CoarseLinks::new(2);
            assert!(edges.offer(&[1, 0], &at));
            // the reverse edge is a duplicate; a self-loop is degenerate; a face is no edge
            assert!(!edges.offer(&[0, 1], &at));
            assert!(!edges.offer(&[2, 2], &at));
            assert!(!edges.offer(&[2, 3, 4], &at));
            assert!(edges.offer(&[2, 1], &at));
            assert_eq!(edges.pending(), &[1, 0, 2, 1]);
            // faces: two corners in one cluster, then another winding of a kept face
            let mut faces = CoarseLinks::new(3);
            assert!(!faces.offer(&[3, 4, 3], &at));
            assert!(faces.offer(&[3, 4, 5], &at));
            assert!(!faces.offer(&[5, 4, 3], &at));
            assert!(!faces.offer(&[4, 3, 5], &at));
            assert!(faces.offer(&[3, 4, 6], &at));
            assert!(!faces.offer(&[1, 2], &at));
            assert_eq!(faces.pending(), &[3, 4, 5, 3, 4, 6]);
            let mut quads = CoarseLinks::new(4);
            assert!(!quads.offer(&[0, 1, 2, 0], &at));
            assert!(quads.offer(&[0, 1, 2, 3], &at));
            assert!(!quads.offer(&[3, 2, 1, 0], &at));
            // the largest metavertex numbers are numbers like any other (in no chunk noted)
            assert!(quads.offer(&[u64::MAX - 3, u64::MAX - 2, u64::MAX - 1, 7], &at));
            assert!(!quads.offer(&[7, u64::MAX - 1, u64::MAX - 2, u64::MAX - 3], &at));
            assert_eq!(quads.pending().len(), 8);
        }
    }

    #[test]
    fn links_in_one_chunk_are_filtered_in_bounded_memory_links_across_exactly() {
        let n = 4 * RECENT as u64;
        // in one chunk: far more distinct edges than slots, all kept, the filter its size
        let one = places(2 * n, 2 * n);
        let mut edges = CoarseLinks::new(2);
        assert!((0..n).all(|i| edges.offer(&[i, i + n], &one)));
        assert_eq!((edges.recent.len(), edges.across.len()), (RECENT, 0));
        // the last edge is still found; some of the first were overwritten, and pass again
        // (the writer leaves them out)
        assert!(!edges.offer(&[n - 1, 2 * n - 1], &one));
        let passed = (0..n).filter(|&i| edges.offer(&[i + n, i], &one)).count();
        assert!(passed > 0 && passed < n as usize, "{passed}");
        // across chunks: every duplicate is found, however long ago its first was kept
        let two = places(2 * n, n);
        let mut edges = CoarseLinks::new(2);
        assert!((0..n).all(|i| edges.offer(&[i, i + n], &two)));
        assert!((0..n).all(|i| !edges.offer(&[i + n, i], &two)));
        assert_eq!(edges.across.len(), n as usize);
    }
}
