//! The writer's memory budget changes where vertex records wait (in memory, or spilled to
//! temporary files, once or many times), never the store: the same input written with a
//! budget of 0 (every record spilled), a small one (spilled now and then) and the default
//! (all in memory) gives the same keys with the same bytes, for every geometry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::key::StorePrefix;
use zv_core::store::Store;
use zv_format::document::GeometryDocument;
use zv_format::import::write_document_with_budget;
use zv_format::writer::DEFAULT_MEMORY_BUDGET;
use zv_store_mem::MemoryStore;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: u64) -> u64 {
        ((self.unit() * n as f64) as u64).min(n - 1)
    }

    /// A position in `[0, 40)^2` on a grid of 0.25.
    fn position(&mut self) -> Value {
        json!([
            (self.unit() * 160.0).floor() / 4.0,
            (self.unit() * 160.0).floor() / 4.0
        ])
    }
}

/// Every key of `store` with its bytes.
fn contents(store: &Arc<dyn Store>) -> BTreeMap<String, Vec<u8>> {
    store
        .list_prefix(&StorePrefix::root())
        .unwrap()
        .into_iter()
        .map(|k| (k.to_string(), store.get(&k).unwrap().unwrap().to_vec()))
        .collect()
}

/// Writes `doc` `batch` rows at a time with each budget and checks the stores are equal.
fn same_store_for_every_budget(name: &str, doc: &Value, batch: usize) {
    let doc = GeometryDocument::from_value(doc).unwrap();
    let mut first: Option<BTreeMap<String, Vec<u8>>> = None;
    for budget in [DEFAULT_MEMORY_BUDGET, 0, 100, 2000] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        write_document_with_budget(store.clone(), &doc, batch, budget)
            .unwrap_or_else(|e| panic!("{name}, budget {budget}: {e}"));
        let got = contents(&store);
        match &first {
            None => {
                assert!(got.len() > 10, "{name}: {} keys", got.len());
                first = Some(got);
            }
            Some(want) => {
                assert_eq!(
                    got.keys().collect::<Vec<_>>(),
                    want.keys().collect::<Vec<_>>(),
                    "{name}, budget {budget}"
                );
                for (k, v) in want {
                    assert!(got[k] == *v, "{name}, budget {budget}: {k} differs");
                }
            }
        }
    }
}

fn points(rng: &mut Rng, n: usize, objects: bool, bins: bool) -> Value {
    let vertices: Vec<Value> = (0..n).map(|_| rng.position()).collect();
    let kinds = ["a", "b", "c"];
    let mut doc = json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10], "vertices": vertices,
        "vertex_attributes": {
            "w": {"dtype": "float32", "values": (0..n).map(|i| i as f64).collect::<Vec<_>>()},
            "kind": {"dtype": "string", "values": (0..n).map(|i| kinds[i % 3]).collect::<Vec<_>>()}}});
    if objects {
        doc["object_ids"] = json!((0..n).map(|_| rng.below(17)).collect::<Vec<_>>());
        doc["num_objects"] = json!(17);
    }
    if bins {
        doc["bin_shape"] = json!([2.5, 5]);
    }
    doc
}

#[test]
fn point_clouds() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (objects, bins) in [(false, false), (false, true), (true, false), (true, true)] {
        let doc = points(&mut rng, 700, objects, bins);
        same_store_for_every_budget(&format!("points {objects} {bins}"), &doc, 97);
    }
}

#[test]
fn graphs_and_meshes() {
    let mut rng = Rng(7);
    let n = 400u64;
    let vertices: Vec<Value> = (0..n).map(|_| rng.position()).collect();
    let ids: Vec<u64> = (0..n).map(|i| i % 5).collect();
    let edges: Vec<Value> = (0..600)
        .map(|_| {
            let a = rng.below(n);
            json!([a, (a + 1 + rng.below(n - 1)) % n])
        })
        .collect();
    let graph = json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10],
        "vertices": vertices, "object_ids": ids, "edges": edges,
        "link_attributes": {"len": {"dtype": "float64", "values": (0..600).map(f64::from).collect::<Vec<_>>()}}});
    same_store_for_every_budget("graph", &graph, 61);
    let faces: Vec<Value> = (0..300)
        .map(|_| json!([rng.below(n), rng.below(n), rng.below(n)]))
        .collect();
    let mesh = json!({"format": "zv-geometry/1", "geometry": "mesh", "chunk_shape": [10, 10],
        "vertices": vertices, "object_ids": ids, "faces": faces});
    same_store_for_every_budget("mesh", &mesh, 50);
}

#[test]
fn skeletons() {
    let mut rng = Rng(11);
    let n = 500u64;
    // a forest per object: each vertex's parent is an earlier vertex of its object, or none
    let ids: Vec<u64> = (0..n).map(|i| i % 3).collect();
    let mut edges = Vec::new();
    for v in 3..n {
        if rng.below(10) > 0 {
            let earlier = v - 3 * (1 + rng.below(v / 3));
            edges.push(json!([v, earlier]));
        }
    }
    // walk so that children are near their parents
    let mut pos: Vec<[f64; 2]> = Vec::new();
    for v in 0..n as usize {
        let base = if v >= 3 { pos[v - 3] } else { [20.0, 20.0] };
        let step = |r: &mut Rng| ((r.unit() - 0.5) * 16.0).floor() / 4.0;
        pos.push([
            (base[0] + step(&mut rng)).clamp(0.0, 39.0),
            (base[1] + step(&mut rng)).clamp(0.0, 39.0),
        ]);
    }
    let doc = json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10],
        "vertices": pos, "object_ids": ids, "edges": edges});
    same_store_for_every_budget("skeleton", &doc, 45);
}

#[test]
fn polylines() {
    let mut rng = Rng(3);
    let lines: Vec<Vec<[f64; 2]>> = (0..60)
        .map(|_| {
            let mut p = [rng.unit() * 40.0, rng.unit() * 40.0];
            (0..(1 + rng.below(30)))
                .map(|_| {
                    for c in &mut p {
                        *c = (*c + (rng.unit() - 0.5) * 6.0).clamp(0.0, 39.9);
                    }
                    p
                })
                .collect()
        })
        .collect();
    // one list of values per polyline
    let t: Vec<Vec<usize>> = lines.iter().map(|l| (0..l.len()).collect()).collect();
    let doc = json!({"format": "zv-geometry/1", "geometry": "streamline", "chunk_shape": [10, 10],
        "bin_shape": [5, 5], "polylines": lines,
        "vertex_attributes": {"t": {"dtype": "uint16", "values": t}},
        "fragment_attributes": {"id": {"dtype": "int32", "values": (0..60).collect::<Vec<_>>()}}});
    same_store_for_every_budget("streamlines", &doc, 7);
}
