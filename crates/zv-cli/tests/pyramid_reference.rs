//! Pyramids built by `zv pyramid`, read by the 0.7.0 reference implementation: for point
//! clouds with and without objects, over the storage and sparsity options, the reference's
//! `read_points` reads every level with the positions zv reads (the same float32 values), each
//! object's vertices per level (`object_ids=[o]`) number what zv's manifests give, and its
//! `validate(path, level=5)` reports no errors; `zv validate` passes too.
//!
//! The reference must be installed (`zv_testkit::env::reference_python`): without it the test
//! fails, it does not skip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use zv_format::ZvStore;
use zv_testkit::env::reference_python;

fn zv(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zv {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A deterministic pseudo-random point cloud document (`objects`: with object ids, a numeric
/// object attribute; always a numeric and a categorical vertex attribute).
fn document(n: usize, objects: bool, seed: u64) -> Value {
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let vertices: Vec<Vec<f64>> = (0..n)
        .map(|_| (0..3).map(|_| next() * 100.0).collect())
        .collect();
    let intensity: Vec<f64> = (0..n).map(|_| next()).collect();
    let kind: Vec<&str> = (0..n)
        .map(|_| ["a", "b", "c"][(next() * 3.0) as usize % 3])
        .collect();
    let mut doc = json!({
        "format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [25, 25, 25], "bin_shape": [12.5, 12.5, 12.5],
        "vertices": vertices,
        "vertex_attributes": {
            "intensity": {"dtype": "float32", "values": intensity},
            "kind": {"dtype": "string", "values": kind},
        },
        "pyramid": null,
    });
    if objects {
        let ids: Vec<u64> = (0..n).map(|_| (next() * 16.0) as u64 % 16).collect();
        let score: Vec<f64> = (0..16).map(|_| next()).collect();
        doc["object_ids"] = json!(ids);
        doc["object_attributes"] = json!({"score": {"dtype": "float32", "values": score}});
    }
    doc
}

/// The reference's side: per store, per level, the positions `read_points` returns, the
/// vertex count of each object, and the `validate(level=5)` result.
const DRIVER: &str = r#"
import json, sys
from zarr_vectors.types.points import read_points
from zarr_vectors.validate import validate
out = {}
for job in json.load(open(sys.argv[1])):
    levels = []
    for level in range(job["levels"]):
        r = read_points(job["store"], level=level)
        per_object = [len(read_points(job["store"], level=level, object_ids=[o])["positions"])
                      for o in range(job["objects"])]
        levels.append({"positions": sorted(map(list, r["positions"].astype(float).tolist())),
                       "vertex_count": int(r["vertex_count"]), "per_object": per_object})
    v = validate(job["store"], level=5)
    out[job["store"]] = {"levels": levels, "errors": v.errors, "passed": len(v.passed)}
json.dump(out, open(sys.argv[2], "w"))
"#;

/// zv's reading of a level: sorted positions and per-object vertex counts.
fn zv_level(store: &Path, level: u32, objects: u64) -> (Vec<Vec<f64>>, Vec<usize>) {
    let zv = ZvStore::open_url(store.to_str().unwrap()).unwrap();
    let l = zv.level(level).unwrap();
    let mut positions = Vec::new();
    for key in l.chunk_keys().unwrap() {
        positions.extend(l.vertices(&key).unwrap().unwrap().rows());
    }
    positions.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let per_object = (0..objects)
        .map(|o| l.object(o).unwrap().vertices.len())
        .collect();
    (positions, per_object)
}

#[test]
fn the_reference_reads_every_level_of_zv_pyramids() {
    let python = reference_python();
    let dir = tempfile::tempdir().unwrap();
    // (name, objects, zv pyramid arguments)
    let cases: &[(&str, bool, &[&str])] = &[
        (
            "objects_explicit",
            true,
            &["--levels", "2,2;2,1", "--chunk-scale", "1,2"],
        ),
        (
            "objects_implicit_length",
            true,
            &[
                "--levels",
                "2,2;2,2",
                "--chunk-scale",
                "1,2",
                "--cross-level",
                "implicit",
                "--sparsity",
                "length",
            ],
        ),
        (
            "objects_coverage_zstd",
            true,
            &[
                "--levels",
                "2,3",
                "--sparsity",
                "coverage",
                "--codecs",
                "zstd",
            ],
        ),
        (
            "objects_no_links",
            true,
            &[
                "--levels",
                "2;2",
                "--chunk-scale",
                "1,2",
                "--cross-level",
                "none",
            ],
        ),
        (
            "points_explicit",
            false,
            &["--levels", "2;2;2", "--chunk-scale", "1,2,2"],
        ),
    ];
    let mut jobs = Vec::new();
    for (i, (name, objects, args)) in cases.iter().enumerate() {
        let doc_path = dir.path().join(format!("{name}.json"));
        std::fs::write(&doc_path, document(600, *objects, i as u64 + 1).to_string()).unwrap();
        let store = dir.path().join(format!("{name}.zarr"));
        let store_s = store.to_str().unwrap();
        zv(&["import", doc_path.to_str().unwrap(), store_s]);
        let mut a = vec!["pyramid", store_s];
        a.extend_from_slice(args);
        zv(&a);
        zv(&["validate", store_s, "--level", "5"]);
        let levels = ZvStore::open_url(store_s).unwrap().level_ids().len();
        // the reference reads one object per call, slowly: the first objects are compared
        jobs.push(
            json!({"store": store_s, "levels": levels, "objects": if *objects { 5 } else { 0 }}),
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
    let results: Value = serde_json::from_slice(&std::fs::read(&out_path).unwrap()).unwrap();
    for job in &jobs {
        let store = job["store"].as_str().unwrap();
        let r = &results[store];
        assert_eq!(r["errors"], json!([]), "{store}: validate(level=5)");
        let levels = r["levels"].as_array().unwrap();
        assert_eq!(levels.len() as u64, job["levels"].as_u64().unwrap());
        assert!(levels.len() >= 2, "{store}: no coarser level");
        let mut previous = usize::MAX;
        for (l, level) in levels.iter().enumerate() {
            let (positions, per_object) =
                zv_level(Path::new(store), l as u32, job["objects"].as_u64().unwrap());
            let theirs: Vec<Vec<f64>> = serde_json::from_value(level["positions"].clone()).unwrap();
            assert_eq!(theirs, positions, "{store} level {l}: positions");
            assert_eq!(
                level["vertex_count"],
                json!(positions.len()),
                "{store} level {l}"
            );
            assert_eq!(
                level["per_object"],
                json!(per_object),
                "{store} level {l}: objects"
            );
            assert!(positions.len() <= previous, "{store} level {l} grew");
            previous = positions.len();
        }
    }
}
