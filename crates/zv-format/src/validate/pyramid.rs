//! Level 5, multiresolution: contiguous levels, non-increasing vertex counts, preserved
//! object ids, and cross-level arrays ⇔ the `multiscale_links` capability. (Level chunk and
//! bin shapes are checked with the level metadata.)

use std::collections::BTreeMap;

use super::chunks::LevelChunks;
use super::finding::*;
use crate::metadata::RootMetadata;
use crate::reader::Level;

/// What the pyramid rules need of a level.
pub(crate) struct LevelFacts<'a> {
    /// The level.
    pub(crate) level: &'a Level,
    /// Its object count, the object index's rows ([`crate::reader::ObjectIndex::stored_objects`];
    /// `None` without an object index).
    pub(crate) num_objects: Option<u64>,
}

/// Checks the pyramid rules over every level.
pub(crate) fn check(
    root: &RootMetadata,
    ids: &[u32],
    levels: &[LevelFacts<'_>],
    chunks: &BTreeMap<u32, LevelChunks>,
    out: &mut Vec<Finding>,
) {
    for (i, id) in ids.iter().enumerate() {
        if *id as usize != i {
            out.push(Finding::new(
                &LEVELS_CONTIGUOUS,
                format!("{id}/zarr.json"),
                format!("levels are {ids:?}, not 0..{}", ids.len()),
            ));
            break;
        }
    }
    let counts: Vec<(u32, u64)> = chunks.iter().map(|(l, c)| (*l, c.total_rows())).collect();
    for w in counts.windows(2) {
        if w[1].1 > w[0].1 {
            out.push(Finding::new(
                &LEVEL_VERTEX_COUNTS,
                format!("{}/zarr.json", w[1].0),
                format!(
                    "level {} has {} vertices, more than level {}'s {}",
                    w[1].0, w[1].1, w[0].0, w[0].1
                ),
            ));
        }
    }
    let objects_of = |id: u32| levels.iter().find(|f| f.level.id() == id)?.num_objects;
    let mut cross_level = None;
    for f in levels {
        let m = f.level.metadata();
        let key = format!("{}/zarr.json", f.level.id());
        if m.preserves_object_ids {
            let parent = m.parent_level.and_then(objects_of);
            if let (Some(inherited), Some(p)) = (m.inherited_num_objects, parent) {
                if inherited != p {
                    out.push(Finding::new(
                        &PRESERVED_IDS,
                        &key,
                        format!("`inherited_num_objects` is {inherited}, the parent level has {p} objects"),
                    ));
                }
            }
            if let (Some(inherited), Some(n)) = (m.inherited_num_objects, f.num_objects) {
                if inherited != n {
                    out.push(Finding::new(
                        &PRESERVED_IDS,
                        &key,
                        format!(
                            "the level preserves object ids but has {n} objects, not {inherited}"
                        ),
                    ));
                }
            }
        }
        let mut deltas = f.level.link_deltas().unwrap_or_default();
        deltas.extend(f.level.cross_chunk_deltas().unwrap_or_default());
        if let Some(d) = deltas.into_iter().find(|d| *d != 0) {
            cross_level.get_or_insert((f.level.id(), d));
        }
    }
    let token = root.has_capability("multiscale_links");
    match cross_level {
        Some((l, d)) if !token || root.cross_level_storage == "none" => {
            out.push(Finding::new(
                &MULTISCALE_LINKS,
                "zarr.json",
                format!(
                    "level {l} has cross-level arrays (delta {d}) but the capabilities {:?} and cross_level_storage `{}` do not allow them",
                    root.format_capabilities, root.cross_level_storage
                ),
            ));
        }
        None if token => out.push(Finding::new(
            &MULTISCALE_TOKEN,
            "zarr.json",
            "`multiscale_links` is advertised but no level has cross-level arrays",
        )),
        _ => {}
    }
}
