//! `zv bench suite --format-version 0.9 --peers zv09`: zv writes and reads the ZV 0.9 layout
//! and zarr-vectors 0.9.2 (from PyPI) its own, on the same inputs in the same run; every
//! figure and the zv09/zv ratios are reported (each read checked against the count of its
//! inputs by the suite), and zv's stores are 0.9 stores. Tiny workloads: this checks the
//! comparison runs, not the speed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use serde_json::Value;
use zv_testkit::env::{workspace_root, zv09_python};

#[test]
fn the_suite_compares_zv_and_zarr_vectors_on_the_0_9_layout() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("suite");
    let out = dir.path().join("figures.json");
    let python = zv09_python();
    let script = workspace_root().join("scripts/bench/peer.py");
    common::zv_success(&[
        "bench",
        "suite",
        "--dir",
        work.to_str().unwrap(),
        "--points",
        "6000",
        "--objects",
        "30",
        "--polylines",
        "40",
        "--length",
        "20",
        "--reps",
        "2",
        "--format-version",
        "0.9",
        "--peers",
        "zv09",
        "--zv09-python",
        python.to_str().unwrap(),
        "--peer-script",
        script.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for figure in [
        "write points",
        "read all points",
        "1% box",
        "read all points (columns)",
        "1% box (columns)",
        "read all objects",
        "write polylines",
        "zv09: write points",
        "zv09: read all points",
        "zv09: 1% box",
        "zv09: read all objects",
        "zv09: write polylines",
    ] {
        let f = &doc["figures"][figure];
        assert!(f["min"].as_f64().is_some_and(|s| s > 0.0), "{figure}: {f}");
    }
    for ratio in [
        "zv09: write points / write points",
        // the peers' reads return positions as stored: compared with zv's columnar reads
        "zv09: read all points / read all points (columns)",
        "zv09: 1% box / 1% box (columns)",
        "zv09: read all objects / read all objects",
    ] {
        assert!(doc["ratios"][ratio]["min"].as_f64().is_some(), "{ratio}");
    }
    let notes: Vec<&str> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.contains("ZV 0.9 layout"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    for store in ["zv-points.zarr", "zv-lines.zarr"] {
        let root: Value =
            serde_json::from_slice(&std::fs::read(work.join(store).join("zarr.json")).unwrap())
                .unwrap();
        let version = &root["attributes"]["zarr_vectors"]["zv_version"];
        assert_eq!(version, "0.9.2", "{store}");
    }
}
