//! Helpers of the pyramid tests: the cross-level pairs a level stores.
#![allow(clippy::unwrap_used, dead_code)]

use std::collections::BTreeSet;

use zv_format::metadata::ChunkKey;
use zv_format::Level;

/// The cross-level pairs of `level` under `delta`: ((chunk, row) here, (chunk, row) there).
pub(crate) fn pairs(level: &Level, delta: i32) -> BTreeSet<((ChunkKey, u64), (ChunkKey, u64))> {
    let mut out = BTreeSet::new();
    for key in level.chunk_keys().unwrap() {
        if let Some(l) = level.cross_level_links(delta, &key, 2).unwrap() {
            for g in &l.groups {
                for row in g.chunks_exact(2) {
                    let fresh =
                        out.insert(((key.clone(), row[0] as u64), (key.clone(), row[1] as u64)));
                    assert!(fresh, "a duplicate pair");
                }
            }
        }
    }
    if let Some(c) = level.cross_chunk_links(delta).unwrap() {
        for r in 0..c.links.len() {
            let (a, ra) = c.links.endpoint(r, 0).unwrap();
            let (b, rb) = c.links.endpoint(r, 1).unwrap();
            assert_ne!(a, b, "a same-chunk pair among the cross-chunk records");
            let fresh = out.insert(((ChunkKey(a.to_vec()), ra), (ChunkKey(b.to_vec()), rb)));
            assert!(fresh, "a duplicate pair");
        }
    }
    out
}
