//! zarr-python (from PyPI) opens every group and array of stores written by zv, for every
//! geometry type and codec choice, and reads the same bytes for every blob as zv.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::store::{ListableStore, ReadableStore};
use zv_format::blob::Blobs;
use zv_store_fs::FilesystemStore;
use zv_testkit::env::{fixtures_dir, workspace_root, zarr_python};
use zv_testkit::fixtures::input_to_geometry;

fn documents() -> Vec<(String, Value)> {
    let mut docs = Vec::new();
    for name in [
        "points_basic",
        "points_binned",
        "streamlines_basic",
        "graph_basic",
        "skeleton_basic",
        "mesh_basic",
    ] {
        let input: Value = serde_json::from_slice(
            &std::fs::read(fixtures_dir().join(format!("{name}.input.json"))).unwrap(),
        )
        .unwrap();
        docs.push((name.to_owned(), input_to_geometry(&input)));
    }
    docs.push((
        "lines_2d".to_owned(),
        json!({"format": "zv-geometry/1", "geometry": "line", "chunk_shape": [10, 10], "bin_shape": [5, 5],
            "polylines": [[[1, 1], [12, 3]], [[-4, 2], [-1, 8]], [[3, 3], [4, 4]]],
            "vertex_attributes": {"kind": {"dtype": "string", "values": [["a", "b"], ["a", null], ["c", "c"]]}},
            "object_attributes": {"len": {"dtype": "float32", "values": [11.2, null, 1.4]}},
            "groups": {"0": [0, 2], "2": [1]}}),
    ));
    docs
}

fn walk_all(dirs: &[std::path::PathBuf]) -> Value {
    let script = workspace_root().join("tests/interop/zarr_interop.py");
    let out = Command::new(zarr_python())
        .arg(&script)
        .arg("walk")
        .args(dirs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zarr-python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["report"].clone()
}

fn check_store(dir: &Path, report: &Value) -> usize {
    let seen_groups: BTreeSet<String> = report["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_owned())
        .collect();
    let arrays = report["arrays"].as_object().unwrap();
    // every node zv wrote is one zarr-python found
    let fs = FilesystemStore::new(dir).unwrap();
    let blobs = Blobs::new(Arc::new(FilesystemStore::new(dir).unwrap()));
    let mut nodes = 0;
    for key in fs.list().unwrap() {
        let Some(path) = key.as_str().strip_suffix("zarr.json") else {
            continue;
        };
        let path = path.trim_end_matches('/');
        let doc: Value = serde_json::from_slice(&fs.get(&key).unwrap().unwrap()).unwrap();
        nodes += 1;
        if doc["node_type"] == "group" {
            assert!(
                seen_groups.contains(path),
                "{}: zarr-python did not open group `{path}`",
                dir.display()
            );
        } else {
            let theirs = arrays.get(path).unwrap_or_else(|| {
                panic!("{}: zarr-python did not open array `{path}`", dir.display())
            });
            let ours = blobs.read_bytes(path).unwrap().unwrap();
            let hex: String = ours.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(
                theirs.as_str().unwrap(),
                hex,
                "{}: bytes of `{path}` differ",
                dir.display()
            );
        }
    }
    assert_eq!(
        nodes,
        seen_groups.len() + arrays.len(),
        "{}: zarr-python found other nodes",
        dir.display()
    );
    nodes
}

#[test]
fn zarr_python_reads_every_node_of_zv_stores() {
    let dir = tempfile::tempdir().unwrap();
    let mut total = 0;
    let mut stores = Vec::new();
    for (name, doc) in documents() {
        for codecs in [
            "spec-default",
            "none",
            "zstd",
            "blosc-lz4",
            "gzip",
            "spec-default+crc32c",
            "zstd+crc32c",
        ] {
            let geo = dir.path().join(format!("{name}.json"));
            std::fs::write(&geo, doc.to_string()).unwrap();
            let store = dir.path().join(format!("{name}-{codecs}.zarr"));
            let out = Command::new(env!("CARGO_BIN_EXE_zv"))
                .args([
                    "import",
                    "--format-version",
                    "0.7",
                    geo.to_str().unwrap(),
                    store.to_str().unwrap(),
                    "--codecs",
                    codecs,
                ])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name} {codecs}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            stores.push(store);
        }
    }
    let report = walk_all(&stores);
    for s in &stores {
        total += check_store(s, &report[s.to_str().unwrap()]);
    }
    eprintln!(
        "{} stores, {total} nodes checked with zarr-python",
        stores.len()
    );
    assert_eq!(stores.len(), 49);
}
