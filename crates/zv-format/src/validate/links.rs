//! Level 3, links across chunks and levels: cross-chunk records decode at their declared
//! length, their endpoints name existing rows of existing chunks (endpoint 0 at the level,
//! the others at level + delta), their attributes have a row per record; the targets of
//! cross-level blobs exist at level + delta.

use std::collections::BTreeMap;

use super::chunks::LevelChunks;
use super::finding::*;
use super::manifests::push_capped;
use crate::metadata::{ChunkKey, Layout};
use crate::names;
use crate::reader::{delta_name, Level};

/// Checks the cross-chunk records of `level` (and its cross-level blobs' targets) against
/// the chunk passes of every level.
pub(crate) fn check(level: &Level, all: &BTreeMap<u32, LevelChunks>, out: &mut Vec<Finding>) {
    // ZV 0.9: the cross-chunk records are the segments of the delta-0 links family
    let v09 = level.layout() == Layout::ChunkGrid;
    let deltas = if v09 {
        level.link_deltas()
    } else {
        level.cross_chunk_deltas()
    };
    let deltas = match deltas {
        Ok(d) => d,
        Err(e) => {
            let key = level.p(&[names::CROSS_CHUNK_LINKS]);
            out.push(Finding::new(&CROSS_CHUNK_LINKS, key, e.to_string()));
            return;
        }
    };
    let at = |d: i32| -> Option<&LevelChunks> {
        let l = i64::from(level.id()) + i64::from(d);
        u32::try_from(l).ok().and_then(|l| all.get(&l))
    };
    for d in deltas {
        let key = if v09 {
            level.p(&[names::LINKS, &delta_name(d)])
        } else {
            level.p(&[names::CROSS_CHUNK_LINKS, &delta_name(d), names::DATA])
        };
        let ccl = match level.cross_chunk_links(d) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(e) => {
                out.push(Finding::new(&CROSS_CHUNK_LINKS, key, e.to_string()));
                continue;
            }
        };
        let links = &ccl.links;
        let mut bad = Vec::new();
        for r in 0..links.len() {
            for k in 0..links.link_width() {
                let Some((coords, row)) = links.endpoint(r, k) else {
                    continue;
                };
                let delta = if k == 0 { 0 } else { d };
                let target = level.id() as i64 + i64::from(delta);
                let Some(chunks) = at(delta) else {
                    bad.push(format!(
                        "record {r} endpoint {k} is at level {target}, which does not exist"
                    ));
                    continue;
                };
                match chunks.get(coords) {
                    None => bad.push(format!(
                        "record {r} endpoint {k} names chunk {} of level {target}, which has no vertices",
                        ChunkKey(coords.to_vec())
                    )),
                    Some(c) if row >= c.rows => bad.push(format!(
                        "record {r} endpoint {k} names row {row} of chunk {} of level {target}, which has {} rows",
                        ChunkKey(coords.to_vec()),
                        c.rows
                    )),
                    Some(_) => {}
                }
            }
        }
        push_capped(&CROSS_CHUNK_ENDPOINTS, &key, bad, out);
        // ZV 0.9: the rows of the link attribute families' cross-chunk segments
        let folder = if v09 {
            names::LINK_ATTRIBUTES
        } else {
            names::CROSS_CHUNK_LINK_ATTRIBUTES
        };
        for name in level.cross_chunk_link_attribute_names().unwrap_or_default() {
            let has = level
                .children_of(&crate::blob::join(&[folder, &name]))
                .unwrap_or_default()
                .contains(&delta_name(d));
            if !has {
                continue;
            }
            if let Err(e) = level.cross_chunk_link_attribute(&name, d) {
                let key = level.p(&[folder, &name, &delta_name(d)]);
                out.push(Finding::new(&CROSS_CHUNK_ATTRIBUTE, key, e.to_string()));
            }
        }
    }
    let Some(own) = all.get(&level.id()) else {
        return;
    };
    for c in &own.chunks {
        for &(d, max_row) in &c.cross_level {
            let key = ChunkKey(c.coords.clone());
            let path = level.chunk_blob_key(&[names::LINKS, &delta_name(d)], &key);
            let target = level.id() as i64 + i64::from(d);
            let msg = match at(d).map(|t| t.get(&c.coords)) {
                None => Some(format!("targets level {target}, which does not exist")),
                Some(None) => Some(format!(
                    "targets chunk {key} of level {target}, which has no vertices"
                )),
                Some(Some(t)) if max_row >= t.rows => Some(format!(
                    "targets row {max_row} of chunk {key} of level {target}, which has {} rows",
                    t.rows
                )),
                Some(Some(_)) => None,
            };
            if let Some(m) = msg {
                out.push(Finding::new(&CROSS_LEVEL_LINKS, path, m));
            }
        }
    }
}
