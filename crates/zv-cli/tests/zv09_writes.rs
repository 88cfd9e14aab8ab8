//! zv writes ZV 0.9 stores (`zv import --format-version 0.9`) that zarr-vectors 0.9.2 reads
//! with exactly the content zv wrote: random point-cloud documents (with and without object
//! ids, bins, negative chunks, 2 and 3 dimensions, every codec preset, scalar and
//! multi-channel vertex attributes, object attributes with absent rows, groups and group
//! attributes; graphs and meshes with random float, integer and multi-channel link
//! attributes) are dumped by 0.9.2's readers (`tests/interop/zv09_dump.py`, one process for
//! all) and by `zv dump`, and compare equal in the logical scope and the link attributes; every node of every store
//! opens and reads in zarr-python 3 (one process); and zv reads its 0.9 store back with the
//! content of the 0.7 store written from the same document. Sharded output is read back the
//! same way. Attributes the 0.9 writer does not support are refused, leaving no store. (Line
//! stores: `zv09_lines.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;

mod common;

use common::zv09_docs::{
    check_documents, check_documents_sharded, document, import_with, zv_os, Rng,
};
use serde_json::{json, Value};

/// Documents written per run.
const DOCUMENTS: u64 = 12;

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
        let out = zv_os(&[
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
    let out = zv_os(&[
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
        let out = zv_os(&[
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
