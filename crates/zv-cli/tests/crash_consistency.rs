//! Crash consistency of `zv import`: killed with SIGKILL at 200 moments spread over a write
//! (and over an `--overwrite` of a complete store), the path afterwards either holds no ZV
//! store — opening it is a clear error, and importing again works (with `--overwrite` where
//! something is left) — or a complete store whose dump equals the uninterrupted run's and
//! that `zv validate` passes (level 5). A store whose files equal byte for byte the
//! uninterrupted run's has its dump and validation; that is checked on every tenth.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use common::{
    assert_validates, copy_tree, dump, kill_delays, scratch_dir, tree, zv_killed_after, zv_ok,
    KILLS,
};
use serde_json::{json, Value};

/// A graph with objects, vertex and object attributes and groups: every kind of blob.
fn document() -> Value {
    let mut next = common::uniform();
    let n = 2000usize;
    let objects = 20usize;
    let vertices: Vec<Value> = (0..n)
        .map(|_| json!([next() * 100.0, next() * 100.0, next() * 100.0]))
        .collect();
    let object_ids: Vec<usize> = (0..n).map(|i| i % objects).collect();
    let edges: Vec<Value> = (objects..n).map(|i| json!([i, i - objects])).collect();
    let weight: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let score: Vec<f64> = (0..objects).map(|i| i as f64).collect();
    json!({
        "format": "zv-geometry/1", "geometry": "graph",
        "chunk_shape": [34.0, 34.0, 34.0],
        "vertices": vertices, "object_ids": object_ids, "edges": edges,
        "vertex_attributes": {"weight": {"dtype": "float32", "values": weight}},
        "object_attributes": {"score": {"dtype": "float64", "values": score}},
        "groups": {"0": (0..10).collect::<Vec<_>>(), "1": (10..20).collect::<Vec<_>>()},
    })
}

#[test]
fn killed_imports_leave_no_store_or_a_complete_one() {
    let dir = scratch_dir();
    let doc = dir.path().join("doc.json");
    std::fs::write(&doc, document().to_string()).unwrap();
    let import = |store: &std::path::Path| {
        [
            "import".to_owned(),
            doc.to_str().unwrap().to_owned(),
            store.to_str().unwrap().to_owned(),
            "--overwrite".to_owned(),
        ]
    };

    // the uninterrupted run, timed
    let whole = dir.path().join("whole.zarr");
    let took = zv_ok(&["import", doc.to_str().unwrap(), whole.to_str().unwrap()]);
    let expected = dump(&whole).unwrap();
    let expected_tree = tree(&whole);

    let (mut absent, mut complete, mut reruns) = (0, 0, 0);
    for (k, delay) in kill_delays(took).enumerate() {
        // half the runs start from nothing, half overwrite a complete store
        let store = dir.path().join(format!("s{k}.zarr"));
        if k % 2 == 1 {
            copy_tree(&whole, &store);
        }
        let args = import(&store);
        zv_killed_after(&args.each_ref().map(String::as_str), delay);
        // files equal to the uninterrupted run's hold its dump and validate (checked on every
        // tenth); anything else is dumped and validated
        let same_files = tree(&store) == expected_tree;
        let found = if same_files && k % 10 != 0 {
            Ok(expected.clone())
        } else {
            dump(&store)
        };
        match found {
            Ok(found) => {
                assert_eq!(found, expected, "kill {k} after {delay:?}: wrong content");
                if !same_files || k % 10 == 0 {
                    assert_validates(&store, &format!("kill {k}"));
                }
                complete += 1;
            }
            Err(err) => {
                assert!(
                    err.contains("zarr.json") || err.contains("not a ZV store"),
                    "kill {k}: unclear error: {err}"
                );
                absent += 1;
                // every tenth: importing again over what is left works
                if k % 10 == 0 {
                    zv_ok(&args.each_ref().map(String::as_str));
                    assert_eq!(dump(&store).unwrap(), expected);
                    reruns += 1;
                }
            }
        }
        let _ = std::fs::remove_dir_all(&store);
    }
    eprintln!(
        "zv import: {KILLS} kills over {took:?}: {absent} left no store, {complete} a complete one; {reruns} re-imports"
    );
    assert!(
        absent > 0 && complete > 0,
        "the kills did not spread over the write"
    );
}
