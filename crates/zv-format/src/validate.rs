//! Validation of ZV stores at the five conformance levels (`zv validate`).
//!
//! [`validate`] checks a store at a level from 1 to 5; levels are cumulative:
//!
//! | level | checks |
//! |---|---|
//! | 1 structure | root document, level groups, array groups and their `zv_array`, chunk keys |
//! | 2 metadata | root and level schema, enumerations, numeric ranges, per-array attributes |
//! | 3 consistency | every blob decodes; fragments, manifests, links and attribute rows agree |
//! | 4 conformance | geometry ↔ links convention and link width; every vertex inside its chunk, bin and the bounds |
//! | 5 multiresolution | contiguous levels, nested chunk and bin shapes, vertex counts, preserved ids, cross-level arrays ⇔ `multiscale_links` |
//!
//! Structure errors stop the run after level 1, metadata errors stop it after level 2 (as
//! the reference validator does); otherwise every finding is reported, not the first. Each
//! [`Finding`] names its rule ([`RULES`] lists them), level, severity and store key.
//! Blobs are decoded by the reader's own decoders; the chunks of a level are read once, in
//! parallel, and dropped as soon as they are checked, so memory does not grow with the
//! level's size.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::writer::{WriterOptions, ZvWriter};
//! use zv_format::Geometry;
//! let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
//! let mut w = ZvWriter::create(store.clone(), WriterOptions::new(Geometry::PointCloud, vec![10.0; 3]))?;
//! w.add_vertices(&[vec![1.0, 2.0, 3.0], vec![15.0, 2.0, 3.0]], None, &Default::default())?;
//! w.finish()?;
//! let report = zv_format::validate::validate(store, 5);
//! assert!(report.is_valid(), "{report}");
//! # Ok(()) }
//! ```

mod attributes;
mod blobs;
mod chunks;
pub mod finding;
mod geometry;
mod grid;
mod links;
mod manifests;
mod metadata;
mod pyramid;
mod structure;

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::store::Store;

pub use finding::{rule, Finding, Report, Rule, Severity, RULES};

use crate::blob::Blobs;
use crate::metadata::Layout;
use crate::progress::{Bounded, NoProgress, Progress};
use crate::reader::{Level, ZvStore};
use finding::VERTEX_COUNT;

/// Validates the store at conformance level `level` (1–5; values outside are clamped).
pub fn validate(store: Arc<dyn Store>, level: u8) -> Report {
    validate_with_progress(store, level, &NoProgress)
}

/// [`validate`], reporting to `progress` once the levels are known: one unit per chunk of
/// every level (the chunk pass), one per level (objects, attributes, links) and one for the
/// store-wide checks. A store whose structure or metadata fails reports no total.
pub fn validate_with_progress(store: Arc<dyn Store>, level: u8, progress: &dyn Progress) -> Report {
    crate::link_plugins();
    let level = level.clamp(1, 5);
    let blobs = Blobs::with_layout(store.clone(), store_layout(&store));
    let mut out = Vec::new();
    let layout = structure::check(&blobs, &mut out);
    let report = |checked: u8, out: Vec<Finding>| {
        let kept = out.into_iter().filter(|f| f.level <= level).collect();
        Report::new(level, checked, kept)
    };
    let Some(layout) = layout else {
        return report(1, out);
    };
    if has_errors(&out, 1) || level == 1 {
        return report(1, out);
    }
    let parsed = metadata::check(&layout, &mut out);
    if has_errors(&out, 2) || level == 2 {
        return report(2, out);
    }
    let Ok(zv) = ZvStore::open(store) else {
        return report(2, out);
    };
    let levels: Vec<Level> = parsed
        .levels
        .iter()
        .filter_map(|(id, _)| zv.level(*id).ok())
        .collect();
    let chunk_counts: Vec<u64> = levels
        .iter()
        .map(|l| l.chunk_keys().map_or(0, |k| k.len() as u64))
        .collect();
    let total = chunk_counts.iter().sum::<u64>() + levels.len() as u64 + 1;
    progress.set_total(total, "steps");
    let mut passes = BTreeMap::new();
    for (l, &n) in levels.iter().zip(&chunk_counts) {
        if let Some(ll) = layout.levels.iter().find(|ll| ll.id == l.id()) {
            if blobs.layout() == Layout::ChunkGrid {
                grid::check_listings(&blobs, &ll.groups, &mut out);
            }
        }
        let pass = chunks::check_level(l, level >= 4, &Bounded::new(progress, n), &mut out);
        check_vertex_count(l, &pass, &mut out);
        blobs::check(l, &pass, &mut out);
        passes.insert(l.id(), pass);
    }
    let root = zv.root();
    let mut facts = Vec::new();
    for l in &levels {
        let pass = passes.get(&l.id());
        let empty = chunks::LevelChunks::default();
        let shared = l.metadata().shared_fragments || root.has_capability("shared_fragments");
        let index = manifests::check(l, pass.unwrap_or(&empty), shared, &mut out);
        attributes::check(l, index.as_deref(), &mut out);
        facts.push(pyramid::LevelFacts {
            level: l,
            num_objects: index.map(|i| i.stored_objects()),
        });
    }
    for l in &levels {
        links::check(l, &passes, &mut out);
        progress.advance(1);
    }
    if level >= 4 {
        geometry::check_conformance(root, &levels, &mut out);
    }
    if level >= 5 {
        pyramid::check(root, zv.level_ids(), &facts, &passes, &mut out);
    }
    progress.advance(1);
    report(level, out)
}

/// Validates the store at `url` (a path, `file://…` or `memory://…`), in either layout (ZV
/// 0.7 or 0.9); a store that cannot be opened at all is an error.
pub fn validate_url(url: &str, level: u8) -> crate::Result<Report> {
    validate_url_with_progress(url, level, &NoProgress)
}

/// [`validate_url`], reporting to `progress` as [`validate_with_progress`] does.
pub fn validate_url_with_progress(
    url: &str,
    level: u8,
    progress: &dyn Progress,
) -> crate::Result<Report> {
    crate::link_plugins();
    let store = zv_core::plugin::open_store(url)?;
    Ok(validate_with_progress(store, level, progress))
}

/// The layout the root `zv_version` announces (ZV 0.9.x: chunk grids); ZV 0.7's when the root
/// does not say (structure and metadata report what is wrong with it).
fn store_layout(store: &Arc<dyn Store>) -> Layout {
    let version = Blobs::new(store.clone())
        .group_attributes("")
        .ok()
        .flatten()
        .and_then(|a| {
            a.get(crate::names::ROOT_ATTRIBUTE)?
                .get("zv_version")?
                .as_str()
                .and_then(crate::metadata::parse_version)
        });
    match version {
        Some((0, 9, _)) => Layout::ChunkGrid,
        _ => Layout::PerChunkNodes,
    }
}

fn has_errors(out: &[Finding], level: u8) -> bool {
    out.iter()
        .any(|f| f.level <= level && f.severity == Severity::Error)
}

/// The rows of the level's vertex blobs against its `vertex_count` (when it states one).
fn check_vertex_count(level: &Level, pass: &chunks::LevelChunks, out: &mut Vec<Finding>) {
    let stated = level
        .attributes()
        .get(crate::names::LEVEL_ATTRIBUTE)
        .and_then(|a| a.get("vertex_count"))
        .and_then(serde_json::Value::as_u64);
    let rows = pass.total_rows();
    if let Some(n) = stated.filter(|&n| n != rows) {
        out.push(Finding::new(
            &VERTEX_COUNT,
            level.p(&["zarr.json"]),
            format!("`vertex_count` is {n}, the vertices blobs hold {rows} rows"),
        ));
    }
}

/// The node path an error names (its key without `/zarr.json`, `/c/0` or a trailing
/// remark), or `fallback`.
pub(crate) fn error_key(e: &crate::Error, fallback: &str) -> String {
    use crate::Error as E;
    let key = match e {
        E::Metadata { key, .. }
        | E::Version { key, .. }
        | E::Blob { key, .. }
        | E::Codec { key, .. }
        | E::Missing { key, .. }
        | E::Unsupported { key, .. }
        | E::Inconsistent { key, .. } => key.as_str(),
        _ => return fallback.to_owned(),
    };
    let key = key.split(" (").next().unwrap_or(key);
    let key = key.strip_suffix("/zarr.json").unwrap_or(key);
    key.strip_suffix("/c/0").unwrap_or(key).to_owned()
}
