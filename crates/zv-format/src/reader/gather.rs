//! Objects gathered chunk by chunk: the vertices, rows, fragments and vertex attributes of
//! many objects, copied out of the scanned chunks in one pass over the chunks.
//!
//! Reading objects transposes a level: chunks hold their rows by chunk, objects want them in
//! manifest order. Going object by object touches every chunk for every object, a cache miss
//! per fragment reference. Here the requested objects are split into a few groups, one per
//! worker. A group first lists each object's fragment references (each manifest checked
//! against the chunks as it is resolved, each block's chunk looked up once; module `plan`).
//! It then sorts the references by chunk (a counting sort into one task list), counts each
//! object's rows chunk by chunk (each fragment's rows checked against its chunk's), so that
//! every object's columns are allocated once at their exact size, and walks the chunks in
//! order copying each chunk's fragments to their places: a chunk's data is read while it is
//! in cache (module `fill`). An object whose references come in chunk order (as writers lay
//! point clouds out) is written one fragment after the other; any other has each
//! reference's place laid out from the fragment lengths first.

mod fill;
mod plan;

pub(crate) use plan::Manifests;

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
        let workers = rayon::current_num_threads().max(1) * 2;
        let size = ids.len().div_ceil(workers).max(1);
        let groups: Vec<Result<Vec<Gathered>>> = ids
            .par_chunks(size)
            .map(|group| {
                let refs = group
                    .iter()
                    .map(|&id| self.object_refs(index, id, scan, &layouts))
                    .collect::<Result<Vec<_>>>()?;
                self.fill(scan, refs)
            })
            .collect();
        let mut out = Vec::with_capacity(ids.len());
        for g in groups {
            out.extend(g?);
        }
        Ok(out)
    }
}
