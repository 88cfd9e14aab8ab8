//! Level 3, the object index: manifests decode (through the reader), every block names a
//! chunk with vertices and fragments it has, and no fragment is shared between objects
//! unless the level or store allows it.

use rustc_hash::FxHashMap;

use super::chunks::LevelChunks;
use super::finding::*;
use crate::names;
use crate::reader::{Level, ObjectIndex};

/// At most this many findings per rule and level; the last one counts the rest.
const MAX_FINDINGS: usize = 20;

/// Checks the object index of `level` against its chunks; returns the index (or `None`).
pub(crate) fn check(
    level: &Level,
    chunks: &LevelChunks,
    shared_allowed: bool,
    out: &mut Vec<Finding>,
) -> Option<std::sync::Arc<ObjectIndex>> {
    let key = level.p(&[names::OBJECT_INDEX]);
    let index = match level.shared_object_index() {
        Ok(i) => i?,
        Err(e) => {
            out.push(Finding::new(&OBJECT_INDEX, key, e.to_string()));
            return None;
        }
    };
    let fragments_of = |c: &[i64]| chunks.get(c).map(|s| s.fragments);
    let mut bad = Vec::new();
    // a fast hasher: one insert per fragment reference of the level
    let mut owners: FxHashMap<(&[i64], u64), u64> = FxHashMap::default();
    let mut shared = Vec::new();
    for (id, m) in index.manifests.iter().enumerate() {
        if let Err(e) = m.check_fragments(fragments_of) {
            bad.push(format!("object {id}: {e}"));
            continue;
        }
        if shared_allowed {
            continue;
        }
        let mut own: Vec<(&[i64], u64)> = m.refs().collect();
        own.sort_unstable();
        own.dedup();
        for r in own {
            if let Some(first) = owners.insert(r, id as u64) {
                shared.push(format!(
                    "fragment {} of chunk {} is named by objects {first} and {id}, and `shared_fragments` is not set",
                    r.1,
                    crate::metadata::ChunkKey(r.0.to_vec())
                ));
            }
        }
    }
    push_capped(&MANIFEST_REFERENCES, &key, bad, out);
    push_capped(&SHARED_FRAGMENTS, &key, shared, out);
    Some(index)
}

/// Pushes `messages` as findings of `rule` at `key`, at most [`MAX_FINDINGS`].
pub(crate) fn push_capped(rule: &Rule, key: &str, messages: Vec<String>, out: &mut Vec<Finding>) {
    let n = messages.len();
    for (i, m) in messages.into_iter().enumerate() {
        if i + 1 == MAX_FINDINGS && n > MAX_FINDINGS {
            out.push(Finding::new(
                rule,
                key,
                format!("{m} (and {} more)", n - MAX_FINDINGS),
            ));
            break;
        }
        out.push(Finding::new(rule, key, m));
    }
}
