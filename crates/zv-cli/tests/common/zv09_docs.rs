//! Writing documents with `zv import` in both layouts and checking what zarr-vectors 0.9.2 and
//! zv read back from the 0.9 store (the `zv09_writes` and `zv09_lines` tests): random
//! documents, the import, `zv dump` / `zv export`, and [`check_documents`], which compares
//! zv's reading of the 0.9 store with the 0.7 store's and 0.9.2's reading with zv's, and
//! opens every node in zarr-python 3.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use zv_testkit::env::zv09_python;

use super::zv09::{compare, zarr_python_opens_every_node, zv09_dump};

/// splitmix64: a small deterministic generator, so every run writes the same documents.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    /// A coordinate in [-span, span), a multiple of 1/8 (exact in every vertex type).
    pub fn coord(&mut self, span: i64) -> f64 {
        (self.below(16 * span as u64) as i64 - 8 * span) as f64 / 8.0
    }
}

/// A random point-cloud document (seeded).
pub fn document(seed: u64) -> Value {
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

pub fn zv_os(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

/// Imports `doc` into `store` in `version`; panics with zv's message on failure.
pub fn import(dir: &Path, name: &str, doc: &Value, version: &str) -> PathBuf {
    import_with(dir, name, doc, version, &[])
}

/// [`import`] with more `zv import` arguments.
pub fn import_with(dir: &Path, name: &str, doc: &Value, version: &str, extra: &[&str]) -> PathBuf {
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
    let out = zv_os(&args);
    assert!(
        out.status.success(),
        "zv import {name} --format-version {version}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    store
}

/// `zv dump STORE` into `out`.
pub fn dump(store: &Path, out: &Path) {
    let o = zv_os(&["dump".as_ref(), store.as_os_str()]);
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
pub fn export(store: &Path) -> Value {
    let o = zv_os(&["export".as_ref(), store.as_os_str()]);
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
pub fn blank_absent_rows(dump: &Path) {
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
pub fn check_documents(docs: &[(String, Value)], ignore_07: &str) -> Checked {
    check_documents_in(docs, ignore_07, None, |_, _| {})
}

/// [`check_documents`], the 0.9 stores written with `--shard-shape S,…,S` when `shard` is
/// `Some(S)`.
pub fn check_documents_sharded(
    docs: &[(String, Value)],
    ignore_07: &str,
    shard: Option<u64>,
) -> Checked {
    check_documents_in(docs, ignore_07, shard, |_, _| {})
}

/// [`check_documents`], also handing `check` each document's name and zarr-vectors 0.9.2's
/// reading of its 0.9 store (the `zv09_dump.py` document).
pub fn check_documents_with(
    docs: &[(String, Value)],
    ignore_07: &str,
    check: impl FnMut(&str, &Value),
) -> Checked {
    check_documents_in(docs, ignore_07, None, check)
}

/// [`check_documents_sharded`] and [`check_documents_with`] in one.
pub fn check_documents_in(
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
pub struct Checked {
    /// Nodes zarr-python opened.
    pub nodes: u64,
    /// Cross-chunk offsets segments written (`links/0/<offsets>` other than the all-zero one).
    pub segments: usize,
    /// Link attribute values 0.9.2 read (rows of every attribute, intra- and cross-chunk).
    pub link_rows: usize,
}

/// The link attribute rows of every attribute in the dump `path` (per chunk and per
/// cross-chunk record).
pub fn link_attribute_rows(path: &Path) -> usize {
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
