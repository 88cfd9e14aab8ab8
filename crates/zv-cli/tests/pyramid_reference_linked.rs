//! Graph, mesh and line pyramids built by `zv pyramid` from the command line, validated by
//! `zv validate --level 5` and read by the 0.7.0 reference implementation: its `read_graph`
//! (graphs) and `read_mesh` (triangle and quad meshes) read every level with the positions zv
//! reads and the same links (each link compared as the positions of its corners, in order),
//! the counts shrink level to level, and its `validate(path, level=5)` reports no errors (for
//! meshes with its documented defect on records of more than two endpoints stepped around as
//! `reference_reads_zv.rs` does: docs/format-decisions.md, "The reference's validator").
//! Lines are kept whole: its `read_lines` reads every level's kept lines as zv reads them.
//! One graph has its level-0 cross-chunk records stored in many chunks first (as zv writes a
//! large level's), which both read as one.
//!
//! The reference must be installed (`zv_testkit::env::reference_python`): without it the test
//! fails, it does not skip.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

use serde_json::{json, Value};
use zv_format::metadata::ChunkKey;
use zv_format::ZvStore;
use zv_testkit::env::reference_python;

mod common;

use common::zv09_docs::import;
use common::zv_success as zv;

/// A deterministic pseudo-random graph (`width` 2) or mesh (`width` 3 or 4) document: `n`
/// objects of vertices around a centre, links among an object's vertices (every seventh
/// among all vertices), a float vertex attribute and a numeric object attribute.
fn document(width: usize, n: usize, seed: u64) -> Value {
    let mut state = seed;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut vertices, mut ids, mut weight, mut links) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut starts = Vec::new();
    for o in 0..n {
        starts.push(vertices.len());
        let centre: Vec<f64> = (0..3).map(|_| 15.0 + next() * 70.0).collect();
        for _ in 0..1 + (next() * 60.0) as usize {
            vertices.push(
                centre
                    .iter()
                    .map(|c| c + (next() - 0.5) * 20.0)
                    .collect::<Vec<f64>>(),
            );
            ids.push(o);
            weight.push((next() * 100.0).round() / 4.0);
        }
    }
    starts.push(vertices.len());
    for o in 0..n {
        let (first, len) = (starts[o], starts[o + 1] - starts[o]);
        for i in 0..len * 2 {
            let (base, m) = if i % 7 == 6 {
                (0, vertices.len())
            } else {
                (first, len)
            };
            let link: Vec<usize> = (0..width)
                .map(|_| base + (next() * m as f64) as usize % m)
                .collect();
            let mut d = link.clone();
            d.sort_unstable();
            d.dedup();
            if d.len() == width {
                links.push(link);
            }
        }
    }
    let score: Vec<f64> = (0..n).map(|_| next()).collect();
    let (geometry, key) = if width == 2 {
        ("graph", "edges")
    } else {
        ("mesh", "faces")
    };
    json!({
        "format": "zv-geometry/1", "geometry": geometry,
        "chunk_shape": [25, 25, 25], "bin_shape": [6.25, 6.25, 6.25],
        "vertices": vertices, "object_ids": ids, key: links,
        "vertex_attributes": {"weight": {"dtype": "float32", "values": weight}},
        "object_attributes": {"score": {"dtype": "float32", "values": score}},
    })
}

/// The reference's side: per level, the positions and the links (as corner positions) of
/// `read_graph` or `read_mesh`, then `validate(level=5)`.
const DRIVER: &str = r#"
import json, sys
from zarr_vectors.types.graphs import read_graph
from zarr_vectors.types.meshes import read_mesh
from zarr_vectors.validate import validate
import zarr_vectors.validate.consistency as consistency
read_ccl = consistency.read_cross_chunk_links

def endpoint_pairs(*args, **kwargs):
    return [pair for rec in read_ccl(*args, **kwargs) for pair in zip(rec, rec[1:])]

out = {}
for job in json.load(open(sys.argv[1])):
    levels = []
    for level in range(job["levels"]):
        if job["mesh"]:
            r = read_mesh(job["store"], level=level)
            pos, links = r["vertices"].astype(float).tolist(), r["faces"].tolist()
        else:
            r = read_graph(job["store"], level=level)
            pos, links = r["positions"].astype(float).tolist(), r["edges"].tolist()
        levels.append({"positions": sorted(pos),
                       "links": sorted([[pos[v] for v in l] for l in links])})
    # the validator's documented defect on mesh records, stepped around as in
    # reference_reads_zv.rs (it reads each record as its consecutive endpoint pairs)
    consistency.read_cross_chunk_links = endpoint_pairs if job["mesh"] else read_ccl
    v = validate(job["store"], level=5)
    out[job["store"]] = {"levels": levels, "errors": v.errors}
json.dump(out, open(sys.argv[2], "w"))
"#;

type Level = (Vec<Vec<f64>>, Vec<Vec<Vec<f64>>>);

/// zv's reading of a level: sorted positions and sorted links as corner positions (chunk
/// rows and cross-chunk records).
fn zv_level(store: &str, level: u32) -> Level {
    let zv = ZvStore::open_url(store).unwrap();
    let l = zv.level(level).unwrap();
    let width = l.link_width().unwrap();
    let mut rows = std::collections::BTreeMap::new();
    let (mut positions, mut links) = (Vec::new(), Vec::new());
    for key in l.chunk_keys().unwrap() {
        let v = l.vertices(&key).unwrap().unwrap().rows();
        if let Some(ls) = l.links(&key, width, v.len() as u64).unwrap() {
            for row in ls.rows() {
                links.push(row.iter().map(|&r| v[r as usize].clone()).collect());
            }
        }
        positions.extend(v.iter().cloned());
        rows.insert(key, v);
    }
    if let Some(c) = l.cross_chunk_links(0).unwrap() {
        for r in 0..c.links.len() {
            links.push(
                (0..width)
                    .map(|e| {
                        let (k, row) = c.links.endpoint(r, e).unwrap();
                        rows[&ChunkKey(k.to_vec())][row as usize].clone()
                    })
                    .collect(),
            );
        }
    }
    positions.sort_by(|a, b| a.partial_cmp(b).unwrap());
    links.sort_by(|a: &Vec<Vec<f64>>, b| a.partial_cmp(b).unwrap());
    (positions, links)
}

/// Stores level 0's cross-chunk records (`cross_chunk_links/0/data`) again in chunks of at
/// most 64 bytes, as zv writes a large level's records (`WriterOptions::record_chunk_bytes`):
/// the reference reads them as it reads one chunk, and zv's pyramid reads them a chunk at a
/// time.
fn rechunk_records(store: &std::path::Path) {
    let path = "0/cross_chunk_links/0/data";
    let fs: std::sync::Arc<dyn zv_core::store::Store> =
        std::sync::Arc::new(zv_store_fs::FilesystemStore::new(store).unwrap());
    let blobs = zv_format::blob::Blobs::new(fs);
    let bytes = blobs.read_bytes(path).unwrap().unwrap();
    assert!(bytes.len() > 640, "{} bytes of records", bytes.len());
    std::fs::remove_dir_all(store.join(path)).unwrap();
    let codecs = [zv_core::metadata::ExtensionMetadata::new("bytes")];
    let mut s = blobs
        .stream_bytes(path, bytes.len() as u64, 64, &codecs)
        .unwrap();
    s.write(&bytes).unwrap();
    s.finish().unwrap();
    let chunks = std::fs::read_dir(store.join(path).join("c"))
        .unwrap()
        .count();
    assert!(chunks > 10, "{chunks} chunks");
}

#[test]
fn the_reference_reads_every_level_of_zv_graph_and_mesh_pyramids() {
    let python = reference_python();
    let dir = tempfile::tempdir().unwrap();
    // (name, link width, zv pyramid arguments)
    let cases: &[(&str, usize, &[&str])] = &[
        (
            "graph_explicit",
            2,
            &["--levels", "2,2;2,1", "--chunk-scale", "1,2"],
        ),
        (
            "graph_implicit_length",
            2,
            &[
                "--levels",
                "2,2;2",
                "--chunk-scale",
                "2,2",
                "--cross-level",
                "implicit",
                "--sparsity",
                "length",
            ],
        ),
        (
            "triangles_explicit",
            3,
            &["--levels", "2,2;2,1", "--chunk-scale", "1,2"],
        ),
        (
            "quads_coverage_zstd",
            4,
            &[
                "--levels",
                "2,2;2",
                "--sparsity",
                "coverage",
                "--codecs",
                "zstd",
                "--chunk-scale",
                "1,2",
            ],
        ),
    ];
    let mut jobs = Vec::new();
    for (i, (name, width, args)) in cases.iter().enumerate() {
        let store = import(
            dir.path(),
            name,
            &document(*width, 16, i as u64 + 11),
            "0.7",
        );
        let store_s = store.to_str().unwrap();
        if i == 0 {
            rechunk_records(&store);
        }
        let mut a = vec!["pyramid", store_s];
        a.extend_from_slice(args);
        zv(&a);
        zv(&["validate", store_s, "--level", "5"]);
        let levels = ZvStore::open_url(store_s).unwrap().level_ids().len();
        jobs.push(json!({"store": store_s, "levels": levels, "mesh": *width > 2}));
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
        assert!(levels.len() >= 3, "{store}: no coarser levels");
        let mut previous = (usize::MAX, usize::MAX);
        for (l, level) in levels.iter().enumerate() {
            let (positions, links) = zv_level(store, l as u32);
            let theirs: Vec<Vec<f64>> = serde_json::from_value(level["positions"].clone()).unwrap();
            assert_eq!(theirs, positions, "{store} level {l}: positions");
            let theirs: Vec<Vec<Vec<f64>>> =
                serde_json::from_value(level["links"].clone()).unwrap();
            assert_eq!(theirs, links, "{store} level {l}: links");
            assert!(!links.is_empty(), "{store} level {l}: no links");
            assert!(
                l == 0 || (positions.len() < previous.0 && links.len() < previous.1),
                "{store} level {l}: nothing merged"
            );
            previous = (positions.len(), links.len());
        }
    }
}

/// The reference's side for lines: per level, the endpoints `read_lines` returns (its
/// non-empty objects, in id order), then `validate(level=5)`.
const LINE_DRIVER: &str = r#"
import json, sys
from zarr_vectors.types.lines import read_lines
from zarr_vectors.validate import validate
out = {}
for job in json.load(open(sys.argv[1])):
    levels = [read_lines(job["store"], level=l)["endpoints"].astype(float).tolist()
              for l in range(job["levels"])]
    v = validate(job["store"], level=5)
    out[job["store"]] = {"levels": levels, "errors": v.errors}
json.dump(out, open(sys.argv[2], "w"))
"#;

/// Lines are kept whole and thinned by object sparsity: the reference's `read_lines` reads
/// every level's kept lines (the dropped ones are empty objects it skips) as zv reads them.
#[test]
fn the_reference_reads_every_level_of_zv_line_pyramids() {
    let python = reference_python();
    let dir = tempfile::tempdir().unwrap();
    let n = 40usize;
    let mut state = 5u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let lines: Vec<Vec<Vec<f64>>> = (0..n)
        .map(|_| {
            let a: Vec<f64> = (0..3).map(|_| 10.0 + next() * 80.0).collect();
            let b: Vec<f64> = a.iter().map(|x| x + (next() - 0.5) * 30.0).collect();
            vec![a, b]
        })
        .collect();
    let score: Vec<f64> = (0..n).map(|_| next()).collect();
    let doc = json!({
        "format": "zv-geometry/1", "geometry": "line",
        "chunk_shape": [25, 25, 25], "bin_shape": [12.5, 12.5, 12.5],
        "polylines": lines,
        "object_attributes": {"score": {"dtype": "float32", "values": score}},
    });
    let store = import(dir.path(), "lines", &doc, "0.7");
    let store_s = store.to_str().unwrap();
    zv(&[
        "pyramid",
        store_s,
        "--levels",
        "2,2;2,2",
        "--chunk-scale",
        "1,2",
        "--sparsity",
        "attribute:score",
    ]);
    zv(&["validate", store_s, "--level", "5"]);
    let jobs = json!([{"store": store_s, "levels": 3}]);
    let jobs_path = dir.path().join("jobs.json");
    let out_path = dir.path().join("out.json");
    std::fs::write(&jobs_path, jobs.to_string()).unwrap();
    let out = Command::new(&python)
        .args([
            "-c",
            LINE_DRIVER,
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
    let r = &results[store_s];
    assert_eq!(r["errors"], json!([]), "validate(level=5)");
    let zv_store = ZvStore::open_url(store_s).unwrap();
    let mut counts = Vec::new();
    for l in 0..3u32 {
        let level = zv_store.level(l).unwrap();
        let ours: Vec<Vec<Vec<f64>>> = (0..n as u64)
            .map(|o| level.object(o).unwrap().vertices.to_rows())
            .filter(|v| !v.is_empty())
            .collect();
        assert_eq!(r["levels"][l as usize], json!(ours), "level {l}");
        counts.push(ours.len());
    }
    // ⌈40/2⌉ then ⌈20/2⌉ lines kept
    assert_eq!(counts, vec![40, 20, 10]);
}
