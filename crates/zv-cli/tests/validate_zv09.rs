//! `zv validate` on ZV 0.9 stores: the stores zarr-vectors 0.9.2 writes (every geometry, its
//! default and its sharded layout, several seeds; `tests/interop/zv09_make.py`), random
//! documents of every geometry zv writes in 0.9, and the 0.7 fixtures migrated to 0.9, all
//! validate at level 5 with no finding. Broken copies — a cell listed in `nonempty_chunks`
//! deleted (a cell file, a shard), a corrupt vlen cell, a wrong `chunk_grid_origin`, a
//! manifest naming a fragment past its chunk's cell, a chunk key missing from
//! `nonempty_chunks`, a cross-chunk record naming a missing row, link attribute cells whose
//! row count is not their links cell's (all-zero and cross-chunk segments) — give findings of
//! the expected rule at the expected key and exit status 1, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

mod common;

use common::zv09::make;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};
use zv_format::writer::FormatVersion;
use zv_testkit::env::fixtures_dir;

/// The geometries 0.9.2 writes (both layouts each).
const GEOMETRIES: &[&str] = &[
    "point_cloud",
    "polyline",
    "streamline",
    "graph",
    "skeleton",
    "mesh",
    "line",
];

/// `zv validate STORE --level 5 --json`: exit status and report.
fn validate(store: &Path) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_zv"))
        .args([
            "validate",
            store.to_str().unwrap(),
            "--level",
            "5",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), report)
}

#[test]
fn stores_zarr_vectors_0_9_2_writes_validate_at_level_5() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for seed in [1, 2, 3] {
        for (name, store) in make(&dir.path().join(seed.to_string()), seed, GEOMETRIES) {
            let (code, report) = validate(&store);
            assert_eq!(code, Some(0), "seed {seed} {name}: {report:#}");
            assert_eq!(report["checked_level"], 5, "seed {seed} {name}");
            assert_eq!(report["findings"], json!([]), "seed {seed} {name}");
            checked += 1;
        }
    }
    assert_eq!(checked, 3 * 7 * 2);
}

#[test]
fn stores_zv_writes_in_0_9_validate_at_level_5() {
    // random documents of every geometry the 0.9 writer writes, through the library
    let mut runner = TestRunner::deterministic();
    let strategy = zv_testkit_geometry::strategy::geometry_document();
    let mut written = std::collections::BTreeMap::<String, usize>::new();
    let mut tries = 0;
    while written.values().sum::<usize>() < 42 && tries < 2000 {
        tries += 1;
        let mut doc = strategy.new_tree(&mut runner).unwrap().current();
        strip_what_0_9_refuses(&mut doc);
        let parsed = zv_format::document::GeometryDocument::from_value(&doc).unwrap();
        let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
        let w = zv_format::import::write_document_as(
            store.clone(),
            &parsed,
            7,
            1 << 30,
            (FormatVersion::V0_9, None),
        );
        if w.is_err() {
            continue; // a present object-attribute value equal to 0.9's absent value
        }
        let report = zv_format::validate::validate(store, 5);
        let findings: Vec<String> = report.findings.iter().map(ToString::to_string).collect();
        assert!(findings.is_empty(), "{findings:#?}\n{doc}");
        *written
            .entry(doc["geometry"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    assert_eq!(written.len(), 7, "{written:?}");
    // the fixtures migrated to 0.9, through the command
    let dir = tempfile::tempdir().unwrap();
    let mut migrated = 0;
    for name in [
        "graph_basic",
        "mesh_basic",
        "points_basic",
        "points_binned",
        "skeleton_basic",
        "streamlines_basic",
    ] {
        let to = dir.path().join(format!("{name}.zv"));
        let src = fixtures_dir().join(format!("{name}.zarr"));
        let out = Command::new(env!("CARGO_BIN_EXE_zv"))
            .args([
                "--quiet",
                "migrate",
                src.to_str().unwrap(),
                to.to_str().unwrap(),
                "--to",
                "0.9",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (code, report) = validate(&to);
        assert_eq!((code, &report["findings"]), (Some(0), &json!([])), "{name}");
        migrated += 1;
    }
    assert_eq!(migrated, 6);
}

/// Removes from a document what the 0.9 writer refuses: categorical link attributes, and
/// categorical, multi-channel and bool object and group attributes.
fn strip_what_0_9_refuses(doc: &mut Value) {
    let doc = doc.as_object_mut().unwrap();
    if let Some(attrs) = doc
        .get_mut("link_attributes")
        .and_then(Value::as_object_mut)
    {
        attrs.retain(|_, a| a["dtype"] != "string");
    }
    for key in ["object_attributes", "group_attributes"] {
        if let Some(attrs) = doc.get_mut(key).and_then(Value::as_object_mut) {
            attrs.retain(|_, a| {
                let multi = a["values"]
                    .as_array()
                    .is_some_and(|v| v.iter().any(Value::is_array));
                a["dtype"] != "string" && a["dtype"] != "bool" && !multi
            });
        }
    }
}

/// A copy of `store` at `dir/name`.
fn copy(store: &Path, dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    let status = Command::new("cp")
        .arg("-r")
        .arg(store)
        .arg(&to)
        .status()
        .unwrap();
    assert!(status.success());
    to
}

/// Edits the `zarr.json` at `node` of `store`.
fn edit(store: &Path, node: &str, f: impl FnOnce(&mut Value)) {
    let path = store.join(node).join("zarr.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    f(&mut doc);
    std::fs::write(&path, doc.to_string()).unwrap();
}

/// The store key of the first (sorted) stored chunk file under `store/node/c`.
fn first_chunk(store: &Path, node: &str) -> String {
    let mut p = store.join(node).join("c");
    while p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        p = entries.into_iter().next().unwrap();
    }
    p.strip_prefix(store).unwrap().to_str().unwrap().to_owned()
}

/// Asserts that validating `store` exits 1 with a finding of `rule` at `key`.
fn assert_finding(store: &Path, rule: &str, key: &str) {
    let (code, report) = validate(store);
    let found = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|f| f["rule"] == rule && f["key"] == key);
    assert!(
        code == Some(1) && found,
        "want {rule} at {key}, exit 1; got {code:?}: {report:#}"
    );
}

/// Rewrites one stored vlen cell (a chunk of one element: `u32` count, `u32` length, bytes).
fn edit_cell(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..4], &1u32.to_le_bytes(), "{}", path.display());
    let n = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let mut el = b[8..8 + n].to_vec();
    f(&mut el);
    let mut out = 1u32.to_le_bytes().to_vec();
    out.extend_from_slice(&(el.len() as u32).to_le_bytes());
    out.extend_from_slice(&el);
    std::fs::write(path, out).unwrap();
}

#[test]
fn broken_zero_nine_stores_give_findings_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let stores = make(&dir.path().join("src"), 21, &["point_cloud", "graph"]);
    let src = |n: &str| stores.iter().find(|(name, _)| name == n).unwrap().1.clone();
    let points = src("point_cloud-default");

    // a cell listed in nonempty_chunks deleted
    let s = copy(&points, dir.path(), "deleted-cell");
    let cell = first_chunk(&s, "0/vertex_attributes/intensity");
    std::fs::remove_file(s.join(&cell)).unwrap();
    assert_finding(&s, "nonempty-chunks", &cell);
    assert_finding(&s, "missing-blob", &cell);

    // a shard of a sharded array deleted: every cell it held is listed and empty
    let s = copy(&src("point_cloud-sharded"), dir.path(), "deleted-shard");
    let shard = first_chunk(&s, "0/vertex_fragments");
    std::fs::remove_file(s.join(&shard)).unwrap();
    assert_finding(&s, "nonempty-chunks", &shard);

    // a corrupt vlen cell: its element runs past the end of the chunk
    let s = copy(&points, dir.path(), "corrupt-cell");
    let cell = first_chunk(&s, "0/vertices");
    let bytes = std::fs::read(s.join(&cell)).unwrap();
    std::fs::write(s.join(&cell), &bytes[..bytes.len() - 3]).unwrap();
    assert_finding(&s, "vertices-decode", &cell);

    // a vertex cell of a length that is not whole rows
    let s = copy(&points, dir.path(), "ragged-cell");
    let cell = first_chunk(&s, "0/vertices");
    edit_cell(&s.join(&cell), |el| el.push(0));
    assert_finding(&s, "vertices-decode", &cell);

    // a wrong chunk_grid_origin: listed chunks fall outside the grid (level 1 stops the run)
    let s = copy(&points, dir.path(), "wrong-origin");
    edit(&s, "0/vertices", |d| {
        let o = d["attributes"]["chunk_grid_origin"].as_array_mut().unwrap();
        o[0] = json!(o[0].as_i64().unwrap() + 1);
    });
    assert_finding(&s, "chunk-grid", "0/vertices/zarr.json");
    // an origin of the wrong rank
    edit(&s, "0/vertices", |d| {
        d["attributes"]["chunk_grid_origin"] = json!([0, 0])
    });
    assert_finding(&s, "chunk-grid", "0/vertices/zarr.json");

    // a chunk missing from nonempty_chunks while its cell holds data
    let s = copy(&points, dir.path(), "unlisted-cell");
    let mut dropped = String::new();
    edit(&s, "0/vertex_fragments", |d| {
        let keys = d["attributes"]["nonempty_chunks"].as_array_mut().unwrap();
        dropped = keys.remove(0).as_str().unwrap().to_owned();
    });
    let (code, report) = validate(&s);
    let hit = report["findings"].as_array().unwrap().iter().any(|f| {
        f["rule"] == "nonempty-chunks"
            && f["key"]
                .as_str()
                .unwrap()
                .starts_with("0/vertex_fragments/c/")
            && f["message"]
                .as_str()
                .unwrap()
                .contains(&format!("chunk {dropped} holds data"))
    });
    assert!(code == Some(1) && hit, "{report:#}");

    // a manifest naming a fragment past its chunk's cell
    let s = copy(&points, dir.path(), "manifest-past-cell");
    rewrite_first_manifest(&s, |m| {
        let (chunk, _) = m.refs().next().unwrap();
        zv_format::layout::manifest::Manifest::from_refs(&[(chunk.to_vec(), 1000)])
    });
    assert_finding(&s, "manifest-references", "0/object_index");
    // and one naming a chunk with no cell at all
    rewrite_first_manifest(&s, |_| {
        zv_format::layout::manifest::Manifest::from_refs(&[(vec![40i64, 40, 40], 0)])
    });
    assert_finding(&s, "manifest-references", "0/object_index");

    // a cross-chunk record naming a row its chunk does not have
    let graph = src("graph-default");
    let s = copy(&graph, dir.path(), "link-row");
    let family = s.join("0/links/0");
    let mut segments: Vec<String> = std::fs::read_dir(&family)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_str().unwrap().to_owned())
        .filter(|n| n != "0.0.0" && family.join(n).join("c").is_dir())
        .collect();
    segments.sort();
    let cell = first_chunk(&s, &format!("0/links/0/{}", segments[0]));
    edit_cell(&s.join(&cell), |el| {
        // ragged: [count k, k row lengths, rows…]; row 0 is [perm_idx, v_0, v_1]
        let k = i64::from_le_bytes(el[..8].try_into().unwrap()) as usize;
        let v0 = 8 * (1 + k) + 8;
        el[v0..v0 + 8].copy_from_slice(&999i64.to_le_bytes());
    });
    let (code, report) = validate(&s);
    let hit = report["findings"].as_array().unwrap().iter().any(|f| {
        f["rule"] == "cross-chunk-endpoints"
            && f["key"] == "0/links/0"
            && f["message"].as_str().unwrap().contains("999")
    });
    assert!(code == Some(1) && hit, "{report:#}");

    // link attribute cells of a row count other than their links cell's
    let s = copy(&graph, dir.path(), "link-attribute-rows");
    let cell = first_chunk(&s, "0/link_attributes/weight/0/0.0.0");
    edit_cell(&s.join(&cell), |el| {
        el.extend_from_slice(&0f32.to_le_bytes())
    });
    assert_finding(&s, "link-attribute", &cell);
    let s = copy(&graph, dir.path(), "cross-chunk-attribute-rows");
    let cell = first_chunk(&s, &format!("0/link_attributes/weight/0/{}", segments[0]));
    edit_cell(&s.join(&cell), |el| el.truncate(el.len() - 4));
    let (code, report) = validate(&s);
    let hit = report["findings"].as_array().unwrap().iter().any(|f| {
        f["rule"] == "cross-chunk-attribute"
            && f["key"] == "0/link_attributes/weight/0"
            && f["message"].as_str().unwrap().contains(&cell)
    });
    assert!(code == Some(1) && hit, "{report:#}");
}

/// Replaces the manifest of object index row 0 of `store` (its `manifests` array, one chunk)
/// by `f` of it, through zv-core's array API.
fn rewrite_first_manifest(
    store: &Path,
    f: impl FnOnce(&zv_format::layout::manifest::Manifest) -> zv_format::layout::manifest::Manifest,
) {
    use zv_core::codec::ArrayBytes;
    let st = zv_core::plugin::open_store(store.to_str().unwrap()).unwrap();
    let path = zv_core::node::NodePath::new("0/object_index/manifests").unwrap();
    let Some(zv_core::metadata::NodeMetadata::Array(meta)) =
        zv_core::array::read_node_metadata(st.as_ref(), &path).unwrap()
    else {
        panic!("no manifests array");
    };
    let array = zv_core::array::Array::from_metadata(st, &path, meta).unwrap();
    let Some(ArrayBytes::Variable { data, offsets }) =
        array.retrieve_chunk_if_exists(&[0]).unwrap()
    else {
        panic!("manifests are variable-length");
    };
    let elements: Vec<Vec<u8>> = offsets
        .windows(2)
        .map(|w| data[w[0]..w[1]].to_vec())
        .collect();
    assert_eq!(
        elements.len() as u64,
        array.shape()[0],
        "one chunk holds every manifest"
    );
    let old = zv_format::layout::manifest::Manifest::decode(&elements[0], 3).unwrap();
    let mut out_data = f(&old).encode(3).unwrap();
    let mut out_offsets = vec![0, out_data.len()];
    for e in &elements[1..] {
        out_data.extend_from_slice(e);
        out_offsets.push(out_data.len());
    }
    array
        .store_chunk(
            &[0],
            ArrayBytes::Variable {
                data: out_data.into(),
                offsets: out_offsets.into(),
            },
        )
        .unwrap();
}
