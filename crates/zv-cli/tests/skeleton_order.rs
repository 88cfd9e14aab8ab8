//! Skeleton vertex order, reference-written and zv-written stores compared: the 0.7.0 reference
//! numbers a skeleton's vertices depth-first, visiting each vertex's children in the order of
//! their edge rows; zv must number them the same way, so that the reference reads the same
//! vertex order (and edges) from zv's store as from its own. Inputs have shuffled edge rows
//! (one tree, in one chunk and across chunks): the issue's smallest example, then random trees.
//!
//! The reference must be installed (`zv_testkit::env::reference_python`): without it the test
//! fails, it does not skip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

use serde_json::{json, Value};
use zv_testkit::env::reference_python;

/// The reference writes each input itself, then reads both stores with `read_graph`.
const DRIVER: &str = r#"
import json, sys
import numpy as np
from zarr_vectors.types.graphs import write_graph, read_graph
out = []
for job in json.load(open(sys.argv[1])):
    write_graph(job["ref_store"], np.array(job["vertices"], dtype=np.float32),
                np.array(job["edges"], dtype=np.int64), chunk_shape=job["chunk_shape"],
                kind="skeleton")
    r = {}
    for side in ("ref_store", "zv_store"):
        g = read_graph(job[side], level=0)
        edges = sorted(map(tuple, np.asarray(g["edges"]).tolist()))
        r[side] = {"positions": np.asarray(g["positions"]).astype(float).tolist(), "edges": edges}
    out.append(r)
json.dump(out, open(sys.argv[2], "w"))
"#;

/// A random tree of `n` vertices (vertex 0 the root, parents before children), its edge rows
/// `[child, parent]` shuffled; positions spread over `extent`.
fn tree(n: usize, seed: u64, extent: f64) -> (Vec<Vec<f64>>, Vec<[usize; 2]>) {
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let vertices = (0..n)
        .map(|_| (0..3).map(|_| (next() * extent).floor() + 0.5).collect())
        .collect();
    let mut edges: Vec<[usize; 2]> = (1..n)
        .map(|c| [c, (next() * c as f64) as usize % c])
        .collect();
    for i in (1..edges.len()).rev() {
        let j = (next() * (i + 1) as f64) as usize % (i + 1);
        edges.swap(i, j);
    }
    (vertices, edges)
}

/// An input: vertices, `[child, parent]` edge rows, the chunk edge.
type Input = (Vec<Vec<f64>>, Vec<[usize; 2]>, f64);

#[test]
fn zv_numbers_skeleton_vertices_as_the_reference_does() {
    let python = reference_python();
    let dir = tempfile::tempdir().unwrap();
    let mut inputs: Vec<Input> = vec![(
        vec![
            vec![1.0, 1.0, 1.0],
            vec![2.0, 2.0, 2.0],
            vec![3.0, 3.0, 3.0],
        ],
        vec![[2, 0], [1, 0]],
        10.0,
    )];
    for seed in 0..6 {
        let (v, e) = tree(
            12 + 7 * seed as usize,
            seed,
            if seed % 2 == 0 { 9.0 } else { 30.0 },
        );
        inputs.push((v, e, 10.0));
    }
    let mut jobs = Vec::new();
    for (i, (vertices, edges, chunk)) in inputs.iter().enumerate() {
        let doc = json!({"format": "zv-geometry/1", "geometry": "skeleton",
            "chunk_shape": [chunk, chunk, chunk], "vertices": vertices, "edges": edges, "pyramid": null});
        let doc_path = dir.path().join(format!("t{i}.json"));
        std::fs::write(&doc_path, doc.to_string()).unwrap();
        let zv_store = dir.path().join(format!("t{i}.zv.zarr"));
        let out = Command::new(env!("CARGO_BIN_EXE_zv"))
            .args([
                "import",
                "--format-version",
                "0.7",
                doc_path.to_str().unwrap(),
                zv_store.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        jobs.push(
            json!({"ref_store": dir.path().join(format!("t{i}.ref.zarr")),
            "zv_store": zv_store, "vertices": vertices, "edges": edges,
            "chunk_shape": [chunk, chunk, chunk]}),
        );
    }
    let jobs_path = dir.path().join("jobs.json");
    let out_path = dir.path().join("out.json");
    std::fs::write(&jobs_path, serde_json::to_vec(&jobs).unwrap()).unwrap();
    let out = Command::new(&python)
        .args([
            "-c",
            DRIVER,
            jobs_path.to_str().unwrap(),
            out_path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&std::fs::read(&out_path).unwrap()).unwrap();
    assert_eq!(results.len(), inputs.len());
    // the issue's example: the reference reads vertices 0, 2, 1
    assert_eq!(
        results[0]["ref_store"]["positions"],
        json!([[1.0, 1.0, 1.0], [3.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    );
    for (i, r) in results.iter().enumerate() {
        assert_eq!(
            r["zv_store"], r["ref_store"],
            "input {i}: the reference reads zv's store differently"
        );
    }
}
