//! zv-dump/1 lists a level's `unassigned_links` (links whose endpoints are not all in one
//! object) sorted, as it sorts each object's links and as the shared `dump_store.py` does:
//! graphs whose edges between objects come in shuffled rows, across chunks and within one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use serde_json::Value;
use zv_core::store::Store;
use zv_format::writer::{CodecChoice, WriterOptions, ZvWriter};
use zv_format::{dump, Geometry, ZvStore};
use zv_store_mem::MemoryStore;

#[test]
fn unassigned_links_are_sorted() {
    let mut state = 7u64;
    let mut next = move |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut checked = 0;
    for case in 0..8 {
        let n = 12 + case * 3;
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut opts = WriterOptions::new(Geometry::Graph, vec![10.0, 10.0, 10.0]);
        opts.codecs = CodecChoice::parse("zstd").unwrap();
        let mut w = ZvWriter::create(store.clone(), opts).unwrap();
        let vertices: Vec<Vec<f64>> = (0..n)
            .map(|_| (0..3).map(|_| next(25) as f64 + 0.5).collect())
            .collect();
        let objects: Vec<u64> = (0..n).map(|_| next(3)).collect();
        w.add_vertices(&vertices, Some(&objects), &Default::default())
            .unwrap();
        // edges in shuffled rows, many between objects
        let edges: Vec<[u64; 2]> = (0..2 * n)
            .map(|_| [next(n), next(n)])
            .filter(|[a, b]| a != b)
            .collect();
        w.add_edges(&edges, &Default::default()).unwrap();
        w.finish().unwrap();
        let doc = dump::dump(&ZvStore::open(store).unwrap()).unwrap();
        let level = &doc["levels"]["0"];
        let unassigned: Vec<Vec<u64>> =
            serde_json::from_value(level["unassigned_links"].clone()).unwrap();
        let expected = edges
            .iter()
            .filter(|[a, b]| objects[*a as usize] != objects[*b as usize])
            .count();
        assert_eq!(unassigned.len(), expected, "case {case}: {level}");
        let mut sorted = unassigned.clone();
        sorted.sort();
        assert_eq!(unassigned, sorted, "case {case}");
        checked += usize::from(expected > 1);
        assert!(level["objects"].is_array(), "{}", Value::from(case));
    }
    assert!(checked >= 4, "too few cases with several unassigned links");
}
