//! Crash consistency of `zv import`: killed with SIGKILL at 200 moments spread over a write
//! (and over an `--overwrite` of a complete store), the path afterwards either holds no ZV
//! store — opening it is a clear error, and importing again works (with `--overwrite` where
//! something is left) — or a complete store whose dump equals the uninterrupted run's and
//! that `zv validate` passes (level 5).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const KILLS: usize = 200;

fn zv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

fn dump(store: &Path) -> Result<Value, String> {
    let out = zv(&["dump", "--compact", store.to_str().unwrap()]);
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A graph with objects, vertex and object attributes and groups: every kind of blob.
fn document() -> Value {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
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

/// Starts `zv import`, kills it after `delay` (if still running); whether it finished.
fn import_killed_after(doc: &Path, store: &Path, delay: Duration) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zv"))
        .args([
            "import",
            doc.to_str().unwrap(),
            store.to_str().unwrap(),
            "--overwrite",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while start.elapsed() < delay {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "import failed on its own");
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill(); // SIGKILL
    let status = child.wait().unwrap();
    status.success()
}

#[test]
fn killed_imports_leave_no_store_or_a_complete_one() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc.json");
    std::fs::write(&doc, document().to_string()).unwrap();

    // the uninterrupted run, timed
    let whole = dir.path().join("whole.zarr");
    let start = Instant::now();
    let out = zv(&["import", doc.to_str().unwrap(), whole.to_str().unwrap()]);
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = dump(&whole).unwrap();

    let (mut absent, mut complete, mut reruns) = (0, 0, 0);
    let mut lcg = 0x9E37_79B9u64;
    for k in 0..KILLS {
        // half the runs start from nothing, half overwrite a complete store
        let store = dir.path().join(format!("s{k}.zarr"));
        if k % 2 == 1 {
            copy_tree(&whole, &store);
        }
        lcg = lcg.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let fraction = (lcg >> 33) as f64 / (1u64 << 31) as f64;
        let delay = took.mul_f64(1.2 * fraction);
        import_killed_after(&doc, &store, delay);
        match dump(&store) {
            Ok(found) => {
                assert_eq!(found, expected, "kill {k} after {delay:?}: wrong content");
                let out = zv(&["validate", store.to_str().unwrap()]);
                assert!(
                    out.status.success(),
                    "kill {k}: a complete store that does not validate: {}",
                    String::from_utf8_lossy(&out.stdout)
                );
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
                    let out = zv(&[
                        "import",
                        doc.to_str().unwrap(),
                        store.to_str().unwrap(),
                        "--overwrite",
                    ]);
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    assert_eq!(dump(&store).unwrap(), expected);
                    reruns += 1;
                }
            }
        }
        let _ = std::fs::remove_dir_all(&store);
    }
    eprintln!(
        "{KILLS} kills over {took:?}: {absent} left no store, {complete} a complete one; {reruns} re-imports"
    );
    assert!(
        absent > 0 && complete > 0,
        "the kills did not spread over the write"
    );
}
