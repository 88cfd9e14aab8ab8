//! Crash consistency of `zv pyramid`, which adds levels to an existing store: killed with
//! SIGKILL at 200 moments spread over an uninterrupted run (and up to six later ones while no
//! kill has come after the end of a run: the killed runs can be slower than the timed one on
//! a loaded machine), the store afterwards holds either
//! the original store, unchanged, or the complete pyramid — nothing in between. A store whose
//! files equal byte for byte the original's or the uninterrupted run's has that store's dump
//! and validation (checked on every tenth); any other state must dump equal to one of them and
//! validate. Every tenth kill that left the original is followed by a rerun, which must build
//! the pyramid and remove the shadow copy the killed run left beside the store.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

mod common;

use std::cell::Cell;
use std::path::Path;

use common::{
    assert_validates, copy_tree, dump, entries_with, kill_delays_reaching_the_end, scratch_dir,
    tree, zv_killed_after, zv_ok,
};
use serde_json::{json, Value};

/// A point cloud with objects, a vertex and an object attribute (8 chunks of level 0).
fn document() -> Value {
    let mut next = common::uniform();
    let n = 3000usize;
    let vertices: Vec<Value> = (0..n)
        .map(|_| json!([next() * 100.0, next() * 100.0, next() * 100.0]))
        .collect();
    let object_ids: Vec<u64> = (0..n).map(|_| (next() * 16.0) as u64 % 16).collect();
    let intensity: Vec<f64> = (0..n).map(|_| next()).collect();
    let score: Vec<f64> = (0..16).map(f64::from).collect();
    json!({
        "format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [50.0, 50.0, 50.0], "bin_shape": [12.5, 12.5, 12.5],
        "vertices": vertices, "object_ids": object_ids,
        "vertex_attributes": {"intensity": {"dtype": "float32", "values": intensity}},
        "object_attributes": {"score": {"dtype": "float64", "values": score}},
    })
}

fn pyramid_args(store: &Path) -> Vec<&str> {
    vec![
        "pyramid",
        store.to_str().unwrap(),
        "--levels",
        "2,2;2,1",
        "--chunk-scale",
        "1,2",
    ]
}

#[test]
fn killed_pyramids_leave_the_original_store_or_the_complete_pyramid() {
    let dir = scratch_dir();
    let doc = dir.path().join("doc.json");
    std::fs::write(&doc, document().to_string()).unwrap();
    let base = dir.path().join("base.zarr");
    zv_ok(&["import", doc.to_str().unwrap(), base.to_str().unwrap()]);
    let original = tree(&base);
    let original_dump = dump(&base).unwrap();
    assert_validates(&base, "the original");

    // the uninterrupted run, timed
    let whole = dir.path().join("whole.zarr");
    copy_tree(&base, &whole);
    let took = zv_ok(&pyramid_args(&whole));
    let complete_tree = tree(&whole);
    let complete_dump = dump(&whole).unwrap();
    assert_validates(&whole, "the uninterrupted pyramid");
    assert_eq!(complete_dump["level_ids"], json!([0, 1, 2]));
    assert_ne!(complete_tree, original);

    let (mut unchanged, mut finished, mut leftovers, mut reruns) = (0, 0, 0, 0);
    // the kills that left the complete pyramid: more kills, later, while there are none
    let complete = Cell::new(0);
    for (k, delay) in kill_delays_reaching_the_end(took, || complete.get() == 0).enumerate() {
        let name = format!("s{k}.zarr");
        let store = dir.path().join(&name);
        copy_tree(&base, &store);
        if zv_killed_after(&pyramid_args(&store), delay) {
            finished += 1;
        }
        let found = tree(&store);
        let is_original = if found == original {
            unchanged += 1;
            true
        } else if found == complete_tree {
            complete.set(complete.get() + 1);
            false
        } else {
            // other bytes: the content must still be one of the two stores
            let d = dump(&store).unwrap_or_else(|e| {
                panic!("kill {k} after {delay:?}: a store that does not open: {e}")
            });
            assert!(
                d == original_dump || d == complete_dump,
                "kill {k} after {delay:?}: a store with partial content"
            );
            assert_validates(&store, &format!("kill {k}"));
            if d == original_dump {
                unchanged += 1;
            } else {
                complete.set(complete.get() + 1);
            }
            d == original_dump
        };
        if k % 10 == 0 {
            let d = dump(&store).unwrap();
            let want = if is_original {
                &original_dump
            } else {
                &complete_dump
            };
            assert!(&d == want, "kill {k}: the dump differs");
            assert_validates(&store, &format!("kill {k}"));
        }
        let shadows = entries_with(dir.path(), &format!(".{name}.zv-shadow."));
        leftovers += usize::from(!shadows.is_empty());
        if is_original && (k % 10 == 0 || !shadows.is_empty() && reruns < 10) {
            // building again works, and removes what the killed run left beside the store
            zv_ok(&pyramid_args(&store));
            assert_eq!(tree(&store), complete_tree, "kill {k}: the rerun");
            assert!(
                entries_with(dir.path(), &format!(".{name}.")).is_empty(),
                "kill {k}: a shadow copy is left after the rerun"
            );
            reruns += 1;
        }
        for leftover in entries_with(dir.path(), &format!(".{name}.")) {
            std::fs::remove_dir_all(dir.path().join(leftover)).unwrap();
        }
        std::fs::remove_dir_all(&store).unwrap();
    }
    eprintln!(
        "zv pyramid: {} kills over {took:?}: {unchanged} left the original store, {} the complete pyramid ({finished} had finished); {leftovers} left a shadow copy beside the store; {reruns} reruns",
        unchanged + complete.get(),
        complete.get()
    );
    assert!(
        unchanged > 0 && complete.get() > 0,
        "the kills did not spread over the run"
    );
}

#[test]
fn a_pyramid_failing_midway_leaves_the_store_unchanged() {
    let dir = scratch_dir();
    let doc = dir.path().join("doc.json");
    std::fs::write(&doc, document().to_string()).unwrap();
    let store = dir.path().join("s.zarr");
    zv_ok(&["import", doc.to_str().unwrap(), store.to_str().unwrap()]);
    let before = tree(&store);
    // level 1 is built, then level 2's sparsity names an attribute that does not exist
    let out = common::zv(&[
        "pyramid",
        store.to_str().unwrap(),
        "--levels",
        "2,1;2,2",
        "--chunk-scale",
        "1,2",
        "--sparsity",
        "attribute:nope",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("nope"), "{err}");
    assert!(tree(&store) == before, "a failed pyramid changed the store");
    assert!(
        entries_with(dir.path(), ".s.zarr.").is_empty(),
        "a shadow is left"
    );
    // a grid that does not fit fails before anything is built
    let out = common::zv(&["pyramid", store.to_str().unwrap(), "--levels", "2;2;2"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("chunk-scale"),
        "{err}"
    );
    assert!(tree(&store) == before);
}
