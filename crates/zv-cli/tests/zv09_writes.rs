//! zv writes ZV 0.9 stores (`zv import --format-version 0.9`) that zarr-vectors 0.9.2 reads
//! with exactly the content zv wrote: random point-cloud documents (with and without object
//! ids, bins, negative chunks, 2 and 3 dimensions, every codec preset, scalar and
//! multi-channel vertex attributes, object attributes with absent rows, groups and group
//! attributes; graphs and meshes with random float, integer and multi-channel link
//! attributes) are dumped by 0.9.2's readers (`tests/interop/zv09_dump.py`, one process for
//! all) and by `zv dump`, and compare equal in the logical scope and the link attributes; every node of every store
//! opens and reads in zarr-python 3 (one process); and zv reads its 0.9 store back with the
//! content of the 0.7 store written from the same document. Random line documents are
//! checked the same way, 0.9.2's `read_lines` giving the lines and endpoint attributes written,
//! and zv lays them out in the cells 0.9.2's `write_lines` writes for them. Geometries and
//! attributes the 0.9 writer does not support are refused, leaving no store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::zv09::{compare, zarr_python_opens_every_node, zv09_dump};
use serde_json::{json, Value};
use zv_testkit::env::{workspace_root, zv09_python};

/// Documents written per run.
const DOCUMENTS: u64 = 12;

/// splitmix64: a small deterministic generator, so every run writes the same documents.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// A coordinate in [-span, span), a multiple of 1/8 (exact in every vertex type).
    fn coord(&mut self, span: i64) -> f64 {
        (self.below(16 * span as u64) as i64 - 8 * span) as f64 / 8.0
    }
}

/// A random point-cloud document (seeded).
fn document(seed: u64) -> Value {
    let mut r = Rng(seed);
    let ndim = 2 + r.below(2) as usize;
    let chunk = [4.0, 5.0, 10.0][r.below(3) as usize];
    let n = 1 + r.below(60) as usize;
    let vertices: Vec<Vec<f64>> = (0..n)
        .map(|_| (0..ndim).map(|_| r.coord(24)).collect())
        .collect();
    let dtype = ["float32", "float64", "float16"][r.below(3) as usize];
    let codecs = [
        "spec-default",
        "none",
        "zstd",
        "blosc-lz4",
        "gzip",
        "zstd+crc32c",
    ];
    let codec = codecs[r.below(codecs.len() as u64) as usize];
    let mut doc = json!({
        "format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": vec![chunk; ndim],
        "vertex_dtype": dtype,
        "codecs": codec,
        "vertices": vertices,
        "vertex_attributes": {
            "w": {"dtype": "float32", "values": (0..n).map(|i| i as f64 / 4.0).collect::<Vec<_>>()},
            "label": {"dtype": "int32", "values": (0..n).map(|_| r.below(20) as i64 - 10).collect::<Vec<_>>()},
            "rgb": {"dtype": "uint8", "channel_names": ["r", "g", "b"],
                    "values": (0..n).map(|_| vec![r.below(256), r.below(256), r.below(256)]).collect::<Vec<_>>()},
        },
    });
    if r.below(3) == 0 {
        doc["bin_shape"] = json!(vec![chunk / 2.0; ndim]);
    }
    if r.below(4) != 0 {
        // objects (a few ids without vertices), object attributes with absent rows, groups
        let b = 1 + r.below(6);
        let ids: Vec<u64> = (0..n).map(|_| r.below(b)).collect();
        doc["object_ids"] = json!(ids);
        doc["num_objects"] = json!(b + r.below(2));
        let objects = b + doc["num_objects"].as_u64().unwrap() - b;
        let score: Vec<Value> = (0..objects)
            .map(|o| {
                if r.below(4) == 0 {
                    Value::Null
                } else {
                    json!(o as f64 + 0.5)
                }
            })
            .collect();
        let size: Vec<Value> = (0..objects).map(|_| json!(r.below(1000))).collect();
        doc["object_attributes"] = json!({
            "score": {"dtype": "float64", "values": score},
            "size": {"dtype": "int64", "values": size},
        });
        let groups = 1 + r.below(3);
        let mut g = serde_json::Map::new();
        for k in 0..groups {
            let members: Vec<u64> = (0..objects).filter(|_| r.below(2) == 0).collect();
            g.insert(k.to_string(), json!(members));
        }
        doc["groups"] = Value::Object(g);
        doc["group_attributes"] = json!({
            "weight": {"dtype": "int32", "values": (0..groups).map(|k| k as i64 * 3 - 2).collect::<Vec<_>>()},
        });
    }
    doc
}

fn zv(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

/// Imports `doc` into `store` in `version`; panics with zv's message on failure.
fn import(dir: &Path, name: &str, doc: &Value, version: &str) -> PathBuf {
    import_with(dir, name, doc, version, &[])
}

/// [`import`] with more `zv import` arguments.
fn import_with(dir: &Path, name: &str, doc: &Value, version: &str, extra: &[&str]) -> PathBuf {
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, doc.to_string()).unwrap();
    let store = dir.join(format!("{name}-{version}.zv"));
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "import".as_ref(),
        file.as_os_str(),
        store.as_os_str(),
        "--format-version".as_ref(),
        version.as_ref(),
        "--quiet".as_ref(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    let out = zv(&args);
    assert!(
        out.status.success(),
        "zv import {name} --format-version {version}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    store
}

/// `zv dump STORE` into `out`.
fn dump(store: &Path, out: &Path) {
    let o = zv(&["dump".as_ref(), store.as_os_str()]);
    assert!(
        o.status.success(),
        "zv dump {}: {}",
        store.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(out, &o.stdout).unwrap();
}

/// `zv export STORE`: level 0 as zv reads it, a zv-geometry/1 document, its edges and faces
/// sorted (their order follows the layout's record order; each keeps its endpoint order and
/// its link attribute rows).
fn export(store: &Path) -> Value {
    let o = zv(&["export".as_ref(), store.as_os_str()]);
    assert!(
        o.status.success(),
        "zv export {}: {}",
        store.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    let mut doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    for key in ["edges", "faces"] {
        let Some(links) = doc.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        let mut order: Vec<usize> = (0..links.len()).collect();
        order.sort_by_cached_key(|&i| links[i].to_string());
        let sorted: Vec<Value> = order.iter().map(|&i| links[i].clone()).collect();
        *links = sorted;
        let attributes = doc
            .get_mut("link_attributes")
            .and_then(Value::as_object_mut);
        for a in attributes.into_iter().flat_map(|a| a.values_mut()) {
            if let Some(values) = a["values"].as_array_mut() {
                let sorted: Vec<Value> = order.iter().map(|&i| values[i].clone()).collect();
                *values = sorted;
            }
        }
    }
    doc
}

/// Sets the values of absent object-attribute rows to null: 0.7 stores zeros there, 0.9
/// the fill value, and neither is content.
fn blank_absent_rows(dump: &Path) {
    let mut d: Value = serde_json::from_slice(&std::fs::read(dump).unwrap()).unwrap();
    if let Some(levels) = d["levels"].as_object_mut() {
        for level in levels.values_mut() {
            let Some(attrs) = level["object_attributes"].as_object_mut() else {
                continue;
            };
            for a in attrs.values_mut() {
                let mask: Vec<bool> = a["present_mask"]
                    .as_array()
                    .map(|m| m.iter().map(|v| v.as_u64() == Some(1)).collect())
                    .unwrap_or_default();
                if let Some(values) = a["values"].as_array_mut() {
                    for (v, present) in values.iter_mut().zip(mask) {
                        if !present {
                            *v = Value::Null;
                        }
                    }
                }
            }
        }
    }
    std::fs::write(dump, d.to_string()).unwrap();
}

/// Writes each document in 0.9 and 0.7 and checks: zv reads its 0.9 store with the content
/// of the 0.7 store (the logical scope, less `ignore_07`), zarr-vectors 0.9.2 reads the 0.9
/// store with the content zv reads (one process for all), and every node opens in
/// zarr-python 3 (one process); the link attributes are compared too. Returns what was
/// checked.
fn check_documents(docs: &[(String, Value)], ignore_07: &str) -> Checked {
    check_documents_in(docs, ignore_07, None, |_, _| {})
}

/// [`check_documents`], the 0.9 stores written with `--shard-shape S,…,S` when `shard` is
/// `Some(S)`.
fn check_documents_sharded(
    docs: &[(String, Value)],
    ignore_07: &str,
    shard: Option<u64>,
) -> Checked {
    check_documents_in(docs, ignore_07, shard, |_, _| {})
}

/// [`check_documents`], also handing `check` each document's name and zarr-vectors 0.9.2's
/// reading of its 0.9 store (the `zv09_dump.py` document).
fn check_documents_with(
    docs: &[(String, Value)],
    ignore_07: &str,
    check: impl FnMut(&str, &Value),
) -> Checked {
    check_documents_in(docs, ignore_07, None, check)
}

/// [`check_documents_sharded`] and [`check_documents_with`] in one.
fn check_documents_in(
    docs: &[(String, Value)],
    ignore_07: &str,
    shard: Option<u64>,
    mut check: impl FnMut(&str, &Value),
) -> Checked {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = Vec::new();
    let mut failures = Vec::new();
    for (name, doc) in docs {
        let shape = shard.map(|s| {
            let rank = doc["chunk_shape"].as_array().unwrap().len();
            vec![s.to_string(); rank].join(",")
        });
        let extra: Vec<&str> = match &shape {
            Some(s) => vec!["--shard-shape", s],
            None => vec![],
        };
        let v9 = import_with(dir.path(), name, doc, "0.9", &extra);
        let v7 = import(dir.path(), name, doc, "0.7");
        // zv reads its 0.9 store with the content of the 0.7 store of the same document
        let (d9, d7) = (
            dir.path().join(format!("{name}.zv9.json")),
            dir.path().join(format!("{name}.zv7.json")),
        );
        dump(&v9, &d9);
        dump(&v7, &d7);
        blank_absent_rows(&d7);
        let blanked9 = dir.path().join(format!("{name}.zv9-blank.json"));
        std::fs::copy(&d9, &blanked9).unwrap();
        blank_absent_rows(&blanked9);
        // the dump models each version's reference reader: for skeletons, 0.7's level-global
        // parent rule and 0.9.2's per-fragment one; its `reader` section lists links in each
        // layout's order. zv's own reading is compared whole through `zv export`.
        let ignore = if name.starts_with("skeleton") {
            format!("{ignore_07}|/reader/|/edges_xyz_sorted|/objects$|/unassigned_links")
        } else {
            format!("{ignore_07}|/reader/")
        };
        if let Some(report) = compare(&zv09_python(), &d7, &blanked9, &ignore, false) {
            failures.push(format!("{name}: 0.9 read back differs from 0.7:\n{report}"));
        }
        if export(&v9) != export(&v7) {
            failures.push(format!(
                "{name}: zv exports its 0.9 store differently from 0.7"
            ));
        }
        stores.push((name, v9, d9));
    }
    // one 0.9.2 process dumps every store
    let mut link_rows = 0;
    let paths: Vec<PathBuf> = stores.iter().map(|(_, s, _)| s.clone()).collect();
    zv09_dump(&paths, dir.path(), false);
    for (name, store, zv_dump) in &stores {
        let stem = store.file_stem().unwrap().to_str().unwrap();
        let expected = dir.path().join(format!("{stem}.expected.json"));
        check(
            name,
            &serde_json::from_slice(&std::fs::read(&expected).unwrap()).unwrap(),
        );
        if let Some(report) = compare(&zv09_python(), &expected, zv_dump, "^/omitted", true) {
            failures.push(format!("{name}: 0.9.2 reads other content:\n{report}"));
        }
        link_rows += link_attribute_rows(&expected);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // one zarr-python process opens every node
    let nodes = zarr_python_opens_every_node(&paths);
    let segments = stores
        .iter()
        .filter_map(|(_, s, _)| std::fs::read_dir(s.join("0/links/0")).ok())
        .flatten()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(['+', '-']))
        .count();
    Checked {
        nodes,
        segments,
        link_rows,
    }
}

/// What [`check_documents`] checked.
struct Checked {
    /// Nodes zarr-python opened.
    nodes: u64,
    /// Cross-chunk offsets segments written (`links/0/<offsets>` other than the all-zero one).
    segments: usize,
    /// Link attribute values 0.9.2 read (rows of every attribute, intra- and cross-chunk).
    link_rows: usize,
}

/// The link attribute rows of every attribute in the dump `path` (per chunk and per
/// cross-chunk record).
fn link_attribute_rows(path: &Path) -> usize {
    let d: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let count = |v: &Value| v.as_array().map_or(0, Vec::len);
    let mut rows = 0;
    for level in d["levels"].as_object().unwrap().values() {
        for a in level["link_attributes"].as_object().unwrap().values() {
            rows += a["0"]["chunks"]
                .as_object()
                .unwrap()
                .values()
                .map(count)
                .sum::<usize>();
        }
        for a in level["cross_chunk_link_attributes"]
            .as_object()
            .unwrap()
            .values()
        {
            rows += count(&a["0"]["values"]);
        }
    }
    rows
}

#[test]
fn zarr_vectors_0_9_2_reads_what_zv_writes_in_0_9() {
    let docs: Vec<(String, Value)> = (0..DOCUMENTS)
        .map(|seed| (format!("pc{seed}"), document(seed)))
        .collect();
    let checked = check_documents(&docs, "^/root_metadata/zv_version");
    assert!(checked.nodes >= 4 * DOCUMENTS);
}

/// Linked and polyline documents per geometry.
const LINKED_PER_GEOMETRY: usize = 4;

/// Random polyline, streamline, graph, skeleton and mesh documents from the geometry
/// strategy (2 to 4 dimensions, chunk shapes 2 to 16 over coordinates in ±30 or a ±40 walk:
/// many chunks per axis, negative chunks, links across chunks; link attributes on graphs,
/// skeletons and meshes), `per` of each, without what the 0.9 writer refuses: categorical
/// link and object attributes, multi-channel object attributes.
fn linked_documents(per: usize) -> Vec<(String, Value)> {
    zv_testkit_geometry::strategy::v09_documents(
        &["polyline", "streamline", "graph", "skeleton", "mesh"],
        per,
    )
}

#[test]
fn zarr_vectors_0_9_2_reads_linked_geometries_zv_writes_in_0_9() {
    let docs = linked_documents(LINKED_PER_GEOMETRY);
    let checked = check_documents(&docs, "^/root_metadata/zv_version");
    assert!(checked.nodes >= 6 * docs.len() as u64);
    // the documents link across chunks: many cross-chunk segments were written and read
    let segments = checked.segments;
    assert!(segments >= docs.len(), "{segments} cross-chunk segments");
}

/// Random link attributes for the `n` links of a document (seeded): a float32 one with
/// missing rows (stored as NaN), an int64 one, and a two-channel uint8 one.
fn random_link_attributes(n: usize, seed: u64) -> Value {
    let mut r = Rng(seed);
    let weight: Vec<Value> = (0..n)
        .map(|_| match r.below(6) {
            0 => Value::Null,
            _ => json!(r.coord(100)),
        })
        .collect();
    let id: Vec<i64> = (0..n)
        .map(|_| r.next() as i64 >> r.below(60) as u32)
        .collect();
    let rg: Vec<[u64; 2]> = (0..n).map(|_| [r.below(256), r.below(256)]).collect();
    json!({
        "weight": {"dtype": "float32", "values": weight},
        "id": {"dtype": "int64", "values": id},
        "rg": {"dtype": "uint8", "channel_names": ["r", "g"], "values": rg},
    })
}

#[test]
fn zarr_vectors_0_9_2_reads_the_link_attributes_zv_writes_in_0_9() {
    // graphs and meshes of the geometry strategy, with random link attributes (zv refuses
    // them on skeletons, whose links are mostly implicit)
    let docs: Vec<(String, Value)> = linked_documents(LINKED_PER_GEOMETRY)
        .into_iter()
        .filter(|(_, d)| matches!(d["geometry"].as_str(), Some("graph" | "mesh")))
        .enumerate()
        .map(|(i, (name, mut d))| {
            let n = match d["geometry"].as_str() {
                Some("mesh") => d["faces"].as_array().map_or(0, Vec::len),
                _ => d["edges"].as_array().map_or(0, Vec::len),
            };
            d["link_attributes"] = random_link_attributes(n, 100 + i as u64);
            (format!("{name}-la"), d)
        })
        .collect();
    let checked = check_documents(&docs, "^/root_metadata/zv_version");
    // every link's three attributes were read back by 0.9.2
    let links: usize = docs
        .iter()
        .map(|(_, d)| {
            let key = if d["geometry"] == "mesh" {
                "faces"
            } else {
                "edges"
            };
            d[key].as_array().map_or(0, Vec::len)
        })
        .sum();
    assert!(checked.segments > 0);
    assert!(
        checked.link_rows > 0 && checked.link_rows <= 3 * links,
        "{}",
        checked.link_rows
    );
}

/// A random line document (seeded): 2 or 3 dimensions, chunk shapes 4 to 10 over
/// coordinates in ±24 (negative chunks), short lines (mostly inside one chunk) and long ones
/// (across chunk boundaries), sometimes a bin shape finer than the chunks, a scalar and a
/// multi-channel vertex attribute, an object attribute with absent rows.
fn line_document(seed: u64) -> Value {
    let mut r = Rng(seed);
    let ndim = 2 + r.below(2) as usize;
    let chunk = [4.0, 5.0, 10.0][r.below(3) as usize];
    let k = 1 + r.below(40) as usize;
    let lines: Vec<Vec<Vec<f64>>> = (0..k)
        .map(|_| {
            let reach = if r.below(2) == 0 { 1 } else { 12 };
            let a: Vec<f64> = (0..ndim).map(|_| r.coord(24)).collect();
            let b = a
                .iter()
                .map(|&x| (x + r.coord(reach)).clamp(-24.0, 24.0))
                .collect();
            vec![a, b]
        })
        .collect();
    let per_line = |r: &mut Rng, f: &mut dyn FnMut(&mut Rng) -> Value| -> Vec<Value> {
        (0..k).map(|_| json!([f(r), f(r)])).collect()
    };
    let radius = per_line(&mut r, &mut |r| json!(r.below(64) as f64 / 8.0));
    let rgb = per_line(&mut r, &mut |r| {
        json!([r.below(256), r.below(256), r.below(256)])
    });
    let length: Vec<Value> = (0..k)
        .map(|i| {
            if r.below(5) == 0 {
                Value::Null
            } else {
                json!(i as f64 * 0.25)
            }
        })
        .collect();
    let dtype = ["float32", "float64"][r.below(2) as usize];
    let mut doc = json!({
        "format": "zv-geometry/1", "geometry": "line",
        "chunk_shape": vec![chunk; ndim],
        "vertex_dtype": dtype,
        "polylines": lines,
        "vertex_attributes": {
            "radius": {"dtype": "float32", "values": radius},
            "rgb": {"dtype": "uint8", "channel_names": ["r", "g", "b"], "values": rgb},
        },
        "object_attributes": {"length": {"dtype": "float64", "values": length}},
    });
    if r.below(3) == 0 {
        doc["bin_shape"] = json!(vec![chunk / 2.0; ndim]);
    }
    doc
}

/// Line documents from the geometry strategy.
const STRATEGY_LINES: usize = 6;

#[test]
fn zarr_vectors_0_9_2_reads_lines_zv_writes_in_0_9() {
    let mut docs: Vec<(String, Value)> = (0..DOCUMENTS)
        .map(|seed| (format!("lines{seed}"), line_document(seed)))
        .collect();
    let written: std::collections::BTreeMap<String, Value> = docs.iter().cloned().collect();
    docs.extend(zv_testkit_geometry::strategy::v09_documents(
        &["line"],
        STRATEGY_LINES,
    ));
    let mut read = 0;
    // 0.9.2's `write_lines` list of arrays (vertex attributes included), 0.7.0's without them
    let checked = check_documents_with(
        &docs,
        "^/root_metadata/zv_version|/level_metadata/arrays_present",
        |name, dump| {
            // 0.9.2's read_lines gives the document's lines and endpoint attributes
            let Some(doc) = written.get(name) else { return };
            let reader = &dump["levels"]["0"]["reader"];
            assert_eq!(reader["function"], "read_lines", "{name}");
            assert_eq!(reader["endpoints"], doc["polylines"], "{name}");
            for attr in ["radius", "rgb"] {
                let flat: Vec<Value> = doc["vertex_attributes"][attr]["values"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|pair| pair.as_array().unwrap().clone())
                    .collect();
                assert_eq!(
                    reader["vertex_attributes"][attr],
                    json!(flat),
                    "{name} {attr}"
                );
            }
            read += 1;
        },
    );
    assert_eq!(read, DOCUMENTS);
    assert!(checked.nodes >= 4 * docs.len() as u64);
    // lines cross chunks: cross-chunk segments were written and read
    assert!(
        checked.segments >= docs.len(),
        "{} cross-chunk segments",
        checked.segments
    );
}

#[test]
fn lines_are_laid_out_as_zarr_vectors_0_9_2_lays_them_out() {
    // the same lines written by zv in 0.9 and by 0.9.2's write_lines: the same cells
    // (tests/interop/zv09_lines_layout.py; bins included: both split at chunks only)
    let dir = tempfile::tempdir().unwrap();
    let mut docs: Vec<(String, Value)> = (0..DOCUMENTS)
        .map(|seed| (format!("lines{seed}"), line_document(seed)))
        .collect();
    docs.extend(zv_testkit_geometry::strategy::v09_documents(
        &["line"],
        STRATEGY_LINES,
    ));
    // 0.9.2 writes no store of no lines with vertex attributes
    docs.retain(|(_, d)| d["polylines"].as_array().is_some_and(|p| !p.is_empty()));
    let (mut cells, mut binned) = (0, 0);
    for (name, doc) in &docs {
        let store = import(dir.path(), name, doc, "0.9");
        binned += usize::from(doc.get("bin_shape").is_some_and(|b| !b.is_null()));
        let out = Command::new(zv09_python())
            .arg(workspace_root().join("tests/interop/zv09_lines_layout.py"))
            .arg(dir.path().join(format!("{name}.json")))
            .arg(&store)
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "zv09_lines_layout.py {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["differences"], json!([]), "{name}");
        cells += report["cells"].as_u64().unwrap();
    }
    assert!(cells >= 2 * docs.len() as u64, "{cells} cells compared");
    assert!(binned > 0, "no document with a bin shape");
}

#[test]
fn what_the_0_9_writer_does_not_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let link_attribute = json!({"format": "zv-geometry/1", "geometry": "graph",
        "chunk_shape": [10, 10], "vertices": [[1, 1], [12, 1]], "edges": [[0, 1]],
        "link_attributes": {"w": {"dtype": "string", "values": ["a"]}}});
    let categorical = json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10], "vertices": [[1, 1]], "object_ids": [0],
        "object_attributes": {"kind": {"dtype": "string", "values": ["a"]}}});
    let nan_row = json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10], "vertices": [[1, 1]], "object_ids": [0],
        "object_attributes": {"x": {"dtype": "int32", "values": [i32::MIN]}}});
    for (name, doc, expect) in [
        (
            "link-attribute",
            link_attribute,
            "categorical link attribute `w`",
        ),
        ("categorical", categorical, "categorical"),
        ("sentinel", nan_row, "absent"),
    ] {
        let file = dir.path().join(format!("{name}.json"));
        std::fs::write(&file, doc.to_string()).unwrap();
        let store = dir.path().join(format!("{name}.zv"));
        let out = zv(&[
            "import".as_ref(),
            file.as_os_str(),
            store.as_os_str(),
            "--format-version".as_ref(),
            "0.9".as_ref(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(expect),
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(
            !store.join("zarr.json").exists(),
            "{name}: a store was left"
        );
    }
    let out = zv(&[
        "import".as_ref(),
        "x.json".as_ref(),
        dir.path().join("y").as_os_str(),
        "--format-version".as_ref(),
        "0.8".as_ref(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("0.8"), "{err}");
}

/// The stored objects under `array` (its `c/` tree) and its `nonempty_chunks` count.
fn stored_and_listed(array: &Path) -> (usize, usize) {
    let meta: Value =
        serde_json::from_slice(&std::fs::read(array.join("zarr.json")).unwrap()).unwrap();
    assert_eq!(
        meta["codecs"][0]["name"],
        "sharding_indexed",
        "{}: not sharded",
        array.display()
    );
    assert_eq!(
        meta["chunk_grid"]["configuration"]["chunk_shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .max(),
        Some(2)
    );
    let files = walkdir(&array.join("c"));
    (
        files,
        meta["attributes"]["nonempty_chunks"]
            .as_array()
            .unwrap()
            .len(),
    )
}

/// The number of files under `dir`.
fn walkdir(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .map(|e| e.unwrap().path())
            .map(|p| if p.is_dir() { walkdir(&p) } else { 1 })
            .sum()
    })
}

#[test]
fn zarr_vectors_0_9_2_reads_sharded_stores_zv_writes() {
    // point clouds and linked geometries, cells packed 2 per dimension
    let mut docs: Vec<(String, Value)> = (0..3)
        .map(|seed| (format!("pc{seed}"), document(seed)))
        .collect();
    docs.extend(linked_documents(2));
    let checked = check_documents_sharded(&docs, "^/root_metadata/zv_version", Some(2));
    assert!(checked.nodes >= 4 * docs.len() as u64);
    assert!(
        checked.segments >= docs.len() / 2,
        "{} cross-chunk segments",
        checked.segments
    );
    // the linked documents keep the strategy's link attributes: sharded, they read back too
    assert!(checked.link_rows > 0, "no link attribute rows compared");
    // the cells were packed: fewer stored objects than non-empty cells in some array
    let dir = tempfile::tempdir().unwrap();
    let (mut files, mut cells) = (0, 0);
    for (name, doc) in &docs {
        let rank = doc["chunk_shape"].as_array().unwrap().len();
        let shape = vec!["2"; rank].join(",");
        let store = import_with(dir.path(), name, doc, "0.9", &["--shard-shape", &shape]);
        let (f, c) = stored_and_listed(&store.join("0/vertices"));
        assert!(f <= c, "{name}: {f} shards for {c} cells");
        files += f;
        cells += c;
    }
    assert!(files < cells, "{files} shards for {cells} cells");
}

#[test]
fn bad_shard_shapes_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let doc = document(7);
    let file = dir.path().join("doc.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let rank = doc["chunk_shape"].as_array().unwrap().len();
    let good = vec!["2"; rank].join(",");
    let short = vec!["2"; rank - 1].join(",");
    let zero = vec!["0"; rank].join(",");
    for (version, shape, expect) in [
        ("0.7", good.as_str(), "0.9 layout only"),
        ("0.9", short.as_str(), "values"),
        ("0.9", zero.as_str(), "at least 1"),
    ] {
        let store = dir.path().join(format!("s-{version}-{shape}.zv"));
        let out = zv(&[
            "import".as_ref(),
            file.as_os_str(),
            store.as_os_str(),
            "--format-version".as_ref(),
            version.as_ref(),
            "--shard-shape".as_ref(),
            shape.as_ref(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{version} {shape}: accepted");
        assert!(err.contains("shard_shape") && err.contains(expect), "{err}");
        assert!(!store.join("zarr.json").exists());
    }
}
