//! Pyramids built by `zv pyramid`, read by the 0.7.0 reference implementation. For point
//! clouds with and without objects, over the storage and sparsity options, the reference's
//! `read_points` reads every level with the positions zv reads (the same float32 values), each
//! object's vertices per level (`object_ids=[o]`) number what zv's manifests give, and its
//! `validate(path, level=5)` reports no errors; `zv validate` passes too. For polylines and
//! streamlines, the reference's `read_polylines` reads every level: each object's path (its
//! segments joined) is the one zv reads, the totals agree, and `validate(level=5)` passes, with
//! a fragment attribute at every level. For
//! skeletons, its `read_graph` reads every level with the positions zv reads (sorted: its order
//! and its implicit parents follow its own level-global rule) and `validate(level=5)` passes.
//!
//! The reference must be installed (`zv_testkit::env::reference_python`): without it the test
//! fails, it does not skip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use zv_format::ZvStore;
use zv_testkit::env::reference_python;

mod common;

use common::zv09_docs::import;
use common::zv_success as zv;

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
        (
            "objects_depth_all_pairs",
            true,
            &[
                "--levels",
                "2,2;2,1;2,1",
                "--chunk-scale",
                "1,2,2",
                "--depth",
                "-1",
            ],
        ),
    ];
    let mut jobs = Vec::new();
    for (i, (name, objects, args)) in cases.iter().enumerate() {
        let store = import(
            dir.path(),
            name,
            &document(600, *objects, i as u64 + 1),
            "0.7",
        );
        let store_s = store.to_str().unwrap();
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

/// A deterministic pseudo-random document of `n` random-walk polylines (some empty, some of
/// one vertex) with a float vertex attribute, a numeric object attribute and a fragment
/// attribute (null for the empty polylines, which have no fragments), which every coarse level
/// carries.
fn polyline_document(geometry: &str, n: usize, seed: u64) -> Value {
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut polylines = Vec::new();
    let mut weights = Vec::new();
    for _ in 0..n {
        let len = (next() * 50.0) as usize;
        let mut p: Vec<f64> = (0..3).map(|_| 10.0 + next() * 80.0).collect();
        let mut path = Vec::new();
        let mut w = Vec::new();
        for _ in 0..len {
            path.push(p.clone());
            w.push((next() * 100.0).round() / 4.0);
            p.iter_mut().for_each(|x| *x += (next() - 0.5) * 8.0);
        }
        polylines.push(path);
        weights.push(w);
    }
    let score: Vec<f64> = (0..n).map(|_| next()).collect();
    let kind: Vec<Value> = polylines
        .iter()
        .enumerate()
        .map(|(o, p)| {
            if p.is_empty() {
                Value::Null
            } else {
                json!(o % 5)
            }
        })
        .collect();
    json!({
        "format": "zv-geometry/1", "geometry": geometry,
        "chunk_shape": [25, 25, 25], "bin_shape": [12.5, 12.5, 12.5],
        "polylines": polylines,
        "vertex_attributes": {"w": {"dtype": "float32", "values": weights}},
        "object_attributes": {"score": {"dtype": "float32", "values": score}},
        "fragment_attributes": {"kind": {"dtype": "int32", "values": kind}},
    })
}

/// The reference's side for polylines: per level, the totals of `read_polylines` and each
/// object's path (segments joined), then `validate(level=5)`.
const POLYLINE_DRIVER: &str = r#"
import json, sys
from zarr_vectors.types.polylines import read_polylines
from zarr_vectors.validate import validate
out = {}
for job in json.load(open(sys.argv[1])):
    levels = []
    for level in range(job["levels"]):
        r = read_polylines(job["store"], level=level)
        paths = []
        for o in range(job["objects"]):
            p = read_polylines(job["store"], level=level, object_ids=[o])
            paths.append([v for seg in p["polylines"] for s in seg for v in s.astype(float).tolist()])
        levels.append({"polyline_count": int(r["polyline_count"]),
                       "vertex_count": int(r["vertex_count"]), "paths": paths})
    v = validate(job["store"], level=5)
    out[job["store"]] = {"levels": levels, "errors": v.errors}
json.dump(out, open(sys.argv[2], "w"))
"#;

#[test]
fn the_reference_reads_every_level_of_zv_polyline_pyramids() {
    let python = reference_python();
    let dir = tempfile::tempdir().unwrap();
    let objects = 24u64;
    // (name, geometry, zv pyramid arguments)
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "polylines_explicit",
            "polyline",
            &["--levels", "2,2;2,1", "--chunk-scale", "1,2"],
        ),
        (
            "streamlines_implicit_length",
            "streamline",
            &[
                "--levels",
                "2,1;2,2;2,1",
                "--chunk-scale",
                "2,2,2",
                "--cross-level",
                "implicit",
                "--sparsity",
                "length",
            ],
        ),
        (
            "polylines_attribute_no_links",
            "polyline",
            &[
                "--levels",
                "2,3",
                "--sparsity",
                "attribute:score",
                "--cross-level",
                "none",
            ],
        ),
    ];
    let mut jobs = Vec::new();
    for (i, (name, geometry, args)) in cases.iter().enumerate() {
        let doc = polyline_document(geometry, objects as usize, i as u64 + 7);
        let store = import(dir.path(), name, &doc, "0.7");
        let store_s = store.to_str().unwrap();
        let mut a = vec!["pyramid", store_s];
        a.extend_from_slice(args);
        zv(&a);
        zv(&["validate", store_s, "--level", "5"]);
        let levels = ZvStore::open_url(store_s).unwrap().level_ids().len();
        jobs.push(json!({"store": store_s, "levels": levels, "objects": objects}));
    }
    let jobs_path = dir.path().join("jobs.json");
    let out_path = dir.path().join("out.json");
    std::fs::write(&jobs_path, serde_json::to_vec(&jobs).unwrap()).unwrap();
    let out = Command::new(&python)
        .args([
            "-c",
            POLYLINE_DRIVER,
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
        let zv = ZvStore::open_url(store).unwrap();
        let mut previous = u64::MAX;
        for (l, level) in levels.iter().enumerate() {
            let lv = zv.level(l as u32).unwrap();
            assert_eq!(
                lv.fragment_attribute_names().unwrap(),
                ["kind"],
                "{store} level {l}: the fragment attribute is carried"
            );
            let mut total = 0u64;
            let mut nonempty = 0u64;
            for o in 0..objects {
                let path = lv.object(o).unwrap().vertices.to_rows();
                total += path.len() as u64;
                nonempty += u64::from(!path.is_empty());
                assert_eq!(
                    level["paths"][o as usize],
                    json!(path),
                    "{store} level {l}: object {o}"
                );
            }
            assert_eq!(level["vertex_count"], json!(total), "{store} level {l}");
            assert_eq!(
                level["polyline_count"],
                json!(nonempty),
                "{store} level {l}"
            );
            assert!(total <= previous, "{store} level {l} grew");
            assert!(
                l == 0 || total < previous,
                "{store} level {l}: nothing merged"
            );
            previous = total;
        }
    }
}

/// A deterministic pseudo-random skeleton document: `n` objects, each a tree whose vertices
/// hang mostly from the previous one (chains) and sometimes from an earlier one (branches).
fn skeleton_document(n: usize, seed: u64) -> Value {
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut vertices, mut ids, mut edges, mut radius) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for o in 0..n {
        let first = vertices.len();
        let len = 1 + (next() * 40.0) as usize;
        let mut tree: Vec<Vec<f64>> = vec![(0..3).map(|_| 10.0 + next() * 80.0).collect()];
        for i in 1..len {
            let p = if next() < 0.8 {
                i - 1
            } else {
                (next() * i as f64) as usize % i
            };
            let q: Vec<f64> = tree[p].iter().map(|x| x + (next() - 0.5) * 8.0).collect();
            tree.push(q);
            edges.push([first + i, first + p]);
        }
        for v in tree {
            vertices.push(v);
            ids.push(o);
            radius.push((next() * 100.0).round() / 4.0);
        }
    }
    json!({
        "format": "zv-geometry/1", "geometry": "skeleton",
        "chunk_shape": [25, 25, 25], "bin_shape": [12.5, 12.5, 12.5],
        "vertices": vertices, "object_ids": ids, "edges": edges,
        "vertex_attributes": {"radius": {"dtype": "float32", "values": radius}},
    })
}

/// The reference's side for skeletons: per level, the positions `read_graph` returns, then
/// `validate(level=5)`.
const GRAPH_DRIVER: &str = r#"
import json, sys
from zarr_vectors.types.graphs import read_graph
from zarr_vectors.validate import validate
out = {}
for job in json.load(open(sys.argv[1])):
    levels = []
    for level in range(job["levels"]):
        r = read_graph(job["store"], level=level)
        levels.append({"positions": sorted(map(list, r["positions"].astype(float).tolist())),
                       "node_count": int(r["node_count"])})
    v = validate(job["store"], level=5)
    out[job["store"]] = {"levels": levels, "errors": v.errors}
json.dump(out, open(sys.argv[2], "w"))
"#;

#[test]
fn the_reference_reads_every_level_of_zv_skeleton_pyramids() {
    let python = reference_python();
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str])] = &[
        (
            "skeletons_explicit",
            &["--levels", "2,2;2,1", "--chunk-scale", "1,2"],
        ),
        (
            "skeletons_implicit",
            &[
                "--levels",
                "2;2",
                "--chunk-scale",
                "2,2",
                "--cross-level",
                "implicit",
            ],
        ),
    ];
    let mut jobs = Vec::new();
    for (i, (name, args)) in cases.iter().enumerate() {
        let store = import(
            dir.path(),
            name,
            &skeleton_document(12, i as u64 + 3),
            "0.7",
        );
        let store_s = store.to_str().unwrap();
        let mut a = vec!["pyramid", store_s];
        a.extend_from_slice(args);
        zv(&a);
        zv(&["validate", store_s, "--level", "5"]);
        let levels = ZvStore::open_url(store_s).unwrap().level_ids().len();
        jobs.push(json!({"store": store_s, "levels": levels}));
    }
    let jobs_path = dir.path().join("jobs.json");
    let out_path = dir.path().join("out.json");
    std::fs::write(&jobs_path, serde_json::to_vec(&jobs).unwrap()).unwrap();
    let out = Command::new(&python)
        .args([
            "-c",
            GRAPH_DRIVER,
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
        let mut previous = usize::MAX;
        for (l, level) in levels.iter().enumerate() {
            let (positions, _) = zv_level(Path::new(store), l as u32, 0);
            let theirs: Vec<Vec<f64>> = serde_json::from_value(level["positions"].clone()).unwrap();
            assert_eq!(theirs, positions, "{store} level {l}: positions");
            assert_eq!(
                level["node_count"],
                json!(positions.len()),
                "{store} level {l}"
            );
            assert!(
                l == 0 || positions.len() < previous,
                "{store} level {l}: nothing merged"
            );
            previous = positions.len();
        }
    }
}
