//! Level 3, per-chunk blobs against the chunks: no per-chunk array has a blob for a chunk
//! without vertices (an orphan), using the reader's list of a level's per-chunk arrays.
//! (A chunk missing a blob it needs is found by the chunk pass, where the reader asks for
//! it.)

use std::collections::BTreeSet;

use super::chunks::LevelChunks;
use super::finding::*;
use super::manifests::push_capped;
use crate::metadata::ChunkKey;
use crate::reader::{Deltas, Level};

/// Checks every per-chunk array of `level` for orphan blobs.
pub(crate) fn check(level: &Level, chunks: &LevelChunks, out: &mut Vec<Finding>) {
    let occupied: BTreeSet<ChunkKey> = match level.chunk_keys() {
        Ok(k) => k.into_iter().collect(),
        Err(_) => chunks
            .chunks
            .iter()
            .map(|c| ChunkKey(c.coords.clone()))
            .collect(),
    };
    let arrays = match level.chunk_arrays(Deltas::All) {
        Ok(a) => a,
        Err(e) => {
            out.push(Finding::new(&ORPHAN_BLOB, level.p(&[]), e.to_string()));
            return;
        }
    };
    for a in arrays {
        let Ok(keys) = level.keys_of(&a) else {
            continue;
        };
        let orphans: Vec<&ChunkKey> = keys.iter().filter(|k| !occupied.contains(k)).collect();
        for k in orphans.iter().take(20) {
            out.push(Finding::new(
                &ORPHAN_BLOB,
                level.chunk_blob_key(&[&a], k),
                format!("`{a}` has a blob for chunk {k}, which has no vertices"),
            ));
        }
        if orphans.len() > 20 {
            let more = vec![format!("{} more orphan blobs in `{a}`", orphans.len() - 20)];
            push_capped(&ORPHAN_BLOB, &level.p(&[&a]), more, out);
        }
    }
}
