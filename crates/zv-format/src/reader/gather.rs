//! Objects gathered chunk by chunk: the vertices, rows, fragments and vertex attributes of
//! many objects, copied out of the scanned chunks in one pass over the chunks.
//!
//! Reading objects transposes a level: chunks hold their rows by chunk, objects want them in
//! manifest order. Going object by object touches every chunk for every object, a cache miss
//! per fragment reference. Here each requested object's fragment references are listed first
//! (each manifest checked against the chunks as it is resolved, each block's chunk looked up
//! once; module `plan`), and the objects are then split into groups of consecutive objects
//! with about [`GROUP_REFERENCES`] references each (never fewer than the level's chunks, and
//! at least two groups per worker when there are enough). A group sorts its references by
//! chunk (a counting sort into one task list), counts each object's rows chunk by chunk (each
//! fragment's rows checked against its chunk's), so that every object's columns are
//! allocated once at their exact size, and walks the chunks in order copying each chunk's
//! fragments to their places: a chunk's data is read while it is in cache (module `fill`),
//! and the group's columns, a few MB, stay in the core's cache while they are written. An
//! object whose references come in chunk order (as writers lay point clouds out) is written
//! one fragment after the other; any other has each reference's place laid out from the
//! fragment lengths first.

mod fill;
mod plan;

pub(crate) use plan::Manifests;
use plan::ObjectRefs;

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::level_scan::LevelScan;
use super::{ChunkRefs, Level, Positions};
use crate::error::Result;
use crate::layout::attributes::AttributeRows;

/// One object's vertices, rows, fragments and vertex attributes, as columns.
pub(crate) struct Gathered {
    /// `(chunk, fragment)` references in manifest order.
    pub fragments: ChunkRefs,
    /// `(chunk, row)` of each vertex.
    pub rows: ChunkRefs,
    /// The vertex positions.
    pub vertices: Positions,
    /// The vertex attributes, row-aligned with `vertices`.
    pub vertex_attributes: BTreeMap<String, AttributeRows>,
    /// The object-local vertex span of each fragment reference (skeletons only: empty for
    /// other geometries, which do not need them).
    pub spans: Vec<(u64, u64)>,
}

impl Level {
    /// The vertices, rows, fragments and vertex attributes of objects `ids` (existing ids of
    /// `index`), from `scan`, which holds every chunk their manifests name; each manifest is
    /// checked against the chunks' fragment counts before its ranges are expanded.
    pub(crate) fn gather_objects(
        &self,
        index: Manifests<'_>,
        ids: &[u64],
        scan: &LevelScan,
    ) -> Result<Vec<Gathered>> {
        let layouts = plan::uniform_layouts(scan);
        let planned: Vec<Result<ObjectRefs>> = ids
            .par_iter()
            .map(|&id| self.object_refs(index, id, scan, &layouts))
            .collect();
        // the error of the first failing object, as a sequential read would give
        let refs = planned.into_iter().collect::<Result<Vec<_>>>()?;
        let workers = rayon::current_num_threads().max(1) * 2;
        let groups: Vec<Result<Vec<Gathered>>> = groups(refs, scan.chunks.len(), workers)
            .into_par_iter()
            .map(|group| self.fill(scan, group))
            .collect();
        let mut out = Vec::with_capacity(ids.len());
        for g in groups {
            out.extend(g?);
        }
        Ok(out)
    }
}

/// The references a group of objects is filled with, about: the columns of a group of
/// point-cloud objects (40 bytes a row, about 1.6 rows a reference in the suite's 1M points)
/// then take a few MB, which the core's cache holds while they are written. Groups of
/// 250 objects (632k references in four groups) took 12% more CPU and 16% longer median
/// reads than groups of 64 (16 groups) reading the suite's 1,000 objects (four runs each).
const GROUP_REFERENCES: usize = 1 << 15;

/// `refs` split into groups of consecutive objects with about [`GROUP_REFERENCES`]
/// references each, but no fewer than `chunks` (a group walks every chunk of the scan, so
/// its references pay for the walk), and into at least `workers` groups when the references
/// are enough for that.
fn groups(refs: Vec<ObjectRefs>, chunks: usize, workers: usize) -> Vec<Vec<ObjectRefs>> {
    let total: usize = refs.iter().map(|r| r.chunks.len()).sum();
    let target = GROUP_REFERENCES
        .min(total.div_ceil(workers.max(1)))
        .max(chunks)
        .max(1);
    let mut out = Vec::new();
    let mut group = Vec::new();
    let mut held = 0usize;
    for r in refs {
        held += r.chunks.len();
        group.push(r);
        if held >= target {
            out.push(std::mem::take(&mut group));
            held = 0;
        }
    }
    if !group.is_empty() {
        out.push(group);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An object with `n` references (all to chunk 0).
    fn object(n: usize) -> ObjectRefs {
        ObjectRefs {
            chunks: vec![0; n],
            fragments: (0..n as u64).collect(),
            ordered: true,
            attrs: Vec::new(),
        }
    }

    /// The reference counts of the objects of each group.
    fn shape(groups: &[Vec<ObjectRefs>]) -> Vec<Vec<usize>> {
        groups
            .iter()
            .map(|g| g.iter().map(|r| r.chunks.len()).collect())
            .collect()
    }

    #[test]
    fn groups_keep_the_objects_in_order_with_about_the_target_references() {
        // 100 objects of 1,000 to 1,099 references, two workers: each group but the last
        // reaches GROUP_REFERENCES with its last object and not before
        let refs: Vec<ObjectRefs> = (0..100).map(|i| object(1000 + i)).collect();
        let groups = shape(&groups(refs, 10, 2));
        assert_eq!(groups.len(), 4, "{groups:?}");
        for g in &groups[..groups.len() - 1] {
            let sum: usize = g.iter().sum();
            assert!(sum >= GROUP_REFERENCES, "{g:?}");
            assert!(sum - g[g.len() - 1] < GROUP_REFERENCES, "{g:?}");
        }
        assert_eq!(
            groups.concat(),
            (0..100).map(|i| 1000 + i).collect::<Vec<_>>()
        );
    }

    #[test]
    fn groups_hold_no_fewer_references_than_the_chunks_and_split_for_the_workers() {
        // few references: at least `workers` groups
        let four = groups((0..8).map(|_| object(10)).collect(), 1, 4);
        assert_eq!(shape(&four), vec![vec![10, 10]; 4]);
        // but never fewer references in a group than the level has chunks
        let one = groups((0..8).map(|_| object(10)).collect(), 1000, 4);
        assert_eq!(shape(&one), vec![vec![10; 8]]);
        // an object larger than the target is a group of its own
        let big = groups(vec![object(5), object(100_000), object(5)], 1, 2);
        assert_eq!(shape(&big), [vec![5, 100_000], vec![5]]);
        // no objects, no groups; objects without references, one group
        assert!(groups(Vec::new(), 10, 4).is_empty());
        assert_eq!(
            shape(&groups(vec![object(0), object(0)], 10, 4)),
            [vec![0, 0]]
        );
    }
}
