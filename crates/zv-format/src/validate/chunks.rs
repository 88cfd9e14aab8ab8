//! The chunk pass of levels 3 and 4: every chunk of a level read once, in parallel, with the
//! reader's decoders (vertices, fragment index, vertex/fragment attribute rows, link rows,
//! link fragments, link attributes, cross-level blobs). A chunk's blobs are dropped once it
//! is checked: what stays is a [`ChunkSummary`] per chunk, so memory is bounded by the
//! chunks in flight, not by the level.

use rayon::prelude::*;

use super::finding::*;
use super::geometry::{check_positions, Placement};
use crate::error::Error;
use crate::metadata::ChunkKey;
use crate::names;
use crate::reader::{delta_name, AttributeInfo, Level};

/// What the later checks need of one chunk.
#[derive(Debug, Clone)]
pub(crate) struct ChunkSummary {
    /// The chunk coordinates.
    pub(crate) coords: Vec<i64>,
    /// Its vertex rows.
    pub(crate) rows: u64,
    /// Its fragment count (0 when the fragment index does not decode).
    pub(crate) fragments: u64,
    /// `(delta, highest target row)` of its cross-level blobs `links/<±N>/<key>`.
    pub(crate) cross_level: Vec<(i32, u64)>,
}

/// What a level's chunk pass found.
#[derive(Debug, Default)]
pub(crate) struct LevelChunks {
    /// One summary per chunk that has vertices, in key order.
    pub(crate) chunks: Vec<ChunkSummary>,
}

impl LevelChunks {
    /// The summary of the chunk at `coords`.
    pub(crate) fn get(&self, coords: &[i64]) -> Option<&ChunkSummary> {
        self.chunks
            .binary_search_by(|c| c.coords.as_slice().cmp(coords))
            .ok()
            .map(|i| &self.chunks[i])
    }

    /// The vertex rows of the level.
    pub(crate) fn total_rows(&self) -> u64 {
        self.chunks.iter().map(|c| c.rows).sum()
    }
}

/// What is read once per level before the chunks.
struct Plan {
    attributes: Vec<AttributeInfo>,
    fragment_attributes: Vec<AttributeInfo>,
    link_width: Option<usize>,
    link_attributes: Vec<AttributeInfo>,
    cross_level: Vec<(i32, usize)>,
    placement: Placement,
}

/// Reads every chunk of `level` once, in parallel, appending findings to `out`; `geometry`
/// says whether the level-4 checks of vertex placement run; `progress` advances by one per
/// chunk checked.
pub(crate) fn check_level(
    level: &Level,
    geometry: bool,
    progress: &dyn crate::progress::Progress,
    out: &mut Vec<Finding>,
) -> LevelChunks {
    let keys = match level.chunk_keys() {
        Ok(k) => k,
        Err(e) => {
            out.push(Finding::new(
                &VERTICES_DECODE,
                level.p(&[names::VERTICES]),
                e.to_string(),
            ));
            return LevelChunks::default();
        }
    };
    let Some(plan) = plan(level, geometry, out) else {
        return LevelChunks::default();
    };
    let results: Vec<(Option<ChunkSummary>, Vec<Finding>)> = keys
        .par_iter()
        .map(|k| {
            let mut found = Vec::new();
            let summary = check_chunk(level, &plan, k, &mut found);
            progress.advance(1);
            (summary, found)
        })
        .collect();
    let mut chunks = Vec::with_capacity(results.len());
    for (s, f) in results {
        chunks.extend(s);
        out.extend(f);
    }
    LevelChunks { chunks }
}

fn plan(level: &Level, geometry: bool, out: &mut Vec<Finding>) -> Option<Plan> {
    let mut fail = |rule: &Rule, key: String, e: Error| {
        out.push(Finding::new(rule, key, e.to_string()));
    };
    let attributes = match level.vertex_attribute_infos() {
        Ok(a) => a,
        Err(e) => {
            fail(&VERTEX_ATTRIBUTE, level.p(&[names::VERTEX_ATTRIBUTES]), e);
            return None;
        }
    };
    let mut fragment_attributes = Vec::new();
    for n in level.fragment_attribute_names().unwrap_or_default() {
        match level.fragment_attribute_info(&n) {
            Ok(i) => fragment_attributes.push(i),
            Err(e) => fail(
                &FRAGMENT_ATTRIBUTE,
                level.p(&[names::FRAGMENT_ATTRIBUTES, &n]),
                e,
            ),
        }
    }
    let deltas = level.link_deltas().unwrap_or_default();
    let mut link_width = None;
    let mut cross_level = Vec::new();
    for d in deltas {
        match level.links_info(d) {
            Ok((w, _, _)) if d == 0 => link_width = Some(w),
            Ok((w, _, _)) => cross_level.push((d, w)),
            Err(e) => fail(&LINK_ROWS, level.p(&[names::LINKS, &delta_name(d)]), e),
        }
    }
    let mut link_attributes = Vec::new();
    for n in level.link_attribute_names().unwrap_or_default() {
        let has_zero = level
            .children_of(&crate::blob::join(&[names::LINK_ATTRIBUTES, &n]))
            .unwrap_or_default()
            .iter()
            .any(|d| d == "0");
        if !has_zero {
            continue;
        }
        match level.link_attribute_info(&n, 0) {
            Ok(i) => link_attributes.push(i),
            Err(e) => fail(
                &LINK_ATTRIBUTE,
                level.p(&[names::LINK_ATTRIBUTES, &n, "0"]),
                e,
            ),
        }
    }
    let placement = Placement::new(level, geometry);
    Some(Plan {
        attributes,
        fragment_attributes,
        link_width,
        link_attributes,
        cross_level,
        placement,
    })
}

/// The rule of a reader error about a per-chunk blob: a missing blob, or `otherwise`.
fn rule_of<'a>(e: &Error, otherwise: &'a Rule) -> &'a Rule {
    match e {
        Error::Missing { .. } => &MISSING_BLOB,
        _ => otherwise,
    }
}

fn check_chunk(
    level: &Level,
    plan: &Plan,
    key: &ChunkKey,
    out: &mut Vec<Finding>,
) -> Option<ChunkSummary> {
    let blob = |array: &[&str]| level.chunk_blob_key(array, key);
    // unchecked: check_positions below reports every vertex outside its chunk (rule L4)
    let vertices = match level.vertices_unchecked(key) {
        Ok(Some((v, _))) => v,
        Ok(None) => return None,
        Err(e) => {
            out.push(Finding::new(
                &VERTICES_DECODE,
                blob(&[names::VERTICES]),
                e.to_string(),
            ));
            return None;
        }
    };
    let rows = vertices.len() as u64;
    let fragments = match level.fragments(key, rows) {
        Ok(f) => Some(f),
        Err(e) => {
            let rule = rule_of(&e, &FRAGMENT_INDEX);
            out.push(Finding::new(
                rule,
                blob(&[names::VERTEX_FRAGMENTS]),
                e.to_string(),
            ));
            None
        }
    };
    if let (Some(bins), Some(f)) = (plan.placement.bins_per_chunk(), &fragments) {
        if f.len() as u64 > bins {
            out.push(Finding::new(
                &BINS_PER_CHUNK,
                blob(&[names::VERTEX_FRAGMENTS]),
                format!(
                    "{} fragments in an undifferentiated point cloud with {bins} bins per chunk",
                    f.len()
                ),
            ));
        }
    }
    check_positions(
        &plan.placement,
        key,
        &vertices,
        fragments.as_ref(),
        &blob(&[names::VERTICES]),
        out,
    );
    drop(vertices);
    for info in &plan.attributes {
        if let Err(e) = level.vertex_attribute(info, key, rows) {
            out.push(Finding::new(
                rule_of(&e, &VERTEX_ATTRIBUTE),
                blob(&[names::VERTEX_ATTRIBUTES, &info.name]),
                e.to_string(),
            ));
        }
    }
    let fragment_count = fragments.as_ref().map_or(0, |f| f.len() as u64);
    if fragments.is_some() {
        for info in &plan.fragment_attributes {
            if let Err(e) = level.fragment_attribute(info, key, fragment_count) {
                out.push(Finding::new(
                    &FRAGMENT_ATTRIBUTE,
                    blob(&[names::FRAGMENT_ATTRIBUTES, &info.name]),
                    e.to_string(),
                ));
            }
        }
    }
    if let Some(width) = plan.link_width {
        check_links(level, plan, key, width, rows, out);
    }
    let mut cross_level = Vec::new();
    for &(d, width) in &plan.cross_level {
        let path = blob(&[names::LINKS, &delta_name(d)]);
        match level.cross_level_links(d, key, width) {
            Ok(None) => {}
            Ok(Some(r)) => {
                let mut max_target = None;
                for g in &r.groups {
                    for row in g.chunks_exact(width.max(1)) {
                        if row[0] < 0 || row[0] as u64 >= rows {
                            out.push(Finding::new(
                                &CROSS_LEVEL_LINKS,
                                &path,
                                format!(
                                    "row {row:?} names source row {} of a chunk with {rows} rows",
                                    row[0]
                                ),
                            ));
                        }
                        for &t in &row[1..] {
                            if t < 0 {
                                out.push(Finding::new(
                                    &CROSS_LEVEL_LINKS,
                                    &path,
                                    format!("row {row:?} names a negative target row"),
                                ));
                            } else {
                                max_target = max_target.max(Some(t as u64));
                            }
                        }
                    }
                }
                if let Some(m) = max_target {
                    cross_level.push((d, m));
                }
            }
            Err(e) => out.push(Finding::new(&CROSS_LEVEL_LINKS, path, e.to_string())),
        }
    }
    Some(ChunkSummary {
        coords: key.coords().to_vec(),
        rows,
        fragments: fragment_count,
        cross_level,
    })
}

fn check_links(
    level: &Level,
    plan: &Plan,
    key: &ChunkKey,
    width: usize,
    rows: u64,
    out: &mut Vec<Finding>,
) {
    let blob = |array: &[&str]| level.chunk_blob_key(array, key);
    let links = match level.links(key, width, rows) {
        Ok(l) => l,
        Err(e) => {
            out.push(Finding::new(
                rule_of(&e, &LINK_ROWS),
                blob(&[names::LINKS, "0"]),
                e.to_string(),
            ));
            return;
        }
    };
    let link_rows = links.as_ref().map_or(0, |l| l.len() as u64);
    if let Err(e) = level.link_fragments(key, link_rows) {
        out.push(Finding::new(
            rule_of(&e, &LINK_FRAGMENTS),
            blob(&[names::LINK_FRAGMENTS]),
            e.to_string(),
        ));
    }
    for info in &plan.link_attributes {
        if let Err(e) = level.link_attribute(info, 0, key, link_rows) {
            out.push(Finding::new(
                rule_of(&e, &LINK_ATTRIBUTE),
                blob(&[names::LINK_ATTRIBUTES, &info.name, "0"]),
                e.to_string(),
            ));
        }
    }
}
