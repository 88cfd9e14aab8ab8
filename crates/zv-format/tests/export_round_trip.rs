//! `zv export` and `zv import` agree (issue 14, defect 6): for every reference fixture that
//! exports, export → import → export gives the same document. In particular the `null`s that
//! export writes for the link attributes of `graph_basic`'s cross-chunk edges (the reference
//! does not store them) import as NaN and export as `null` again
//! (`docs/format-decisions.md`, "Missing link attribute values").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use zv_format::writer::FormatVersion;

use serde_json::Value;
use zv_format::document::GeometryDocument;
use zv_format::export::export_geometry;
use zv_format::import::write_document_in;
use zv_format::reader::ZvStore;
use zv_testkit::env::fixtures_dir;

/// Imports `doc` into a fresh in-memory store and exports it again.
fn reimport(doc: &Value) -> Value {
    let parsed = GeometryDocument::from_json(&serde_json::to_vec(doc).unwrap()).unwrap();
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    write_document_in(store.clone(), &parsed, 1000, FormatVersion::V0_7).unwrap();
    export_geometry(&ZvStore::open(store).unwrap()).unwrap()
}

/// `doc` with its vertices as a multiset: each vertex becomes the record `[position, object
/// id, vertex attribute values…]`, each edge or face the records of its vertices (in link
/// order) and its link attribute values; vertex-indexed keys are replaced by the sorted
/// records. The skeleton writer renumbers vertices depth-first, so a re-imported skeleton
/// holds the same content in another vertex order.
fn unordered(doc: &Value) -> Value {
    let n = doc["vertices"].as_array().map_or(0, Vec::len);
    let attrs: Vec<&Value> = doc["vertex_attributes"]
        .as_object()
        .map(|m| m.values().map(|a| &a["values"]).collect())
        .unwrap_or_default();
    let record = |i: usize| -> Value {
        let mut r = vec![doc["vertices"][i].clone(), doc["object_ids"][i].clone()];
        r.extend(attrs.iter().map(|a| a[i].clone()));
        Value::Array(r)
    };
    let link_attrs: Vec<&Value> = doc["link_attributes"]
        .as_object()
        .map(|m| m.values().map(|a| &a["values"]).collect())
        .unwrap_or_default();
    let sorted = |mut v: Vec<Value>| {
        v.sort_by_key(|x| x.to_string());
        Value::Array(v)
    };
    let mut out = doc.clone();
    out["vertices"] = sorted((0..n).map(record).collect());
    for key in ["edges", "faces"] {
        if let Some(links) = doc[key].as_array() {
            let links = links.iter().enumerate().map(|(li, l)| {
                let mut r: Vec<Value> = l
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|v| record(v.as_u64().unwrap() as usize))
                    .collect();
                r.extend(link_attrs.iter().map(|a| a[li].clone()));
                Value::Array(r)
            });
            out[key] = sorted(links.collect());
        }
    }
    for key in ["vertex_attributes", "object_ids", "link_attributes"] {
        if let Some(o) = out.as_object_mut() {
            o.remove(key);
        }
    }
    out
}

/// The keys whose values differ between two documents.
fn differing(a: &Value, b: &Value) -> Vec<String> {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return vec!["<document>".into()];
    };
    let mut keys: Vec<String> = a.keys().chain(b.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    keys.into_iter().filter(|k| a.get(k) != b.get(k)).collect()
}

#[test]
fn export_import_export_is_stable_for_every_fixture() {
    let mut checked = Vec::new();
    for entry in std::fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".zarr") else {
            continue;
        };
        let store = ZvStore::open_url(path.to_str().unwrap()).unwrap();
        // a fixture that does not export (none today) is skipped, not hidden: it is listed
        let Ok(first) = export_geometry(&store) else {
            eprintln!("{stem}: does not export");
            continue;
        };
        let second = reimport(&first);
        let changed = differing(&first, &second);
        if first["geometry"] == "skeleton" {
            // the same content in zv's depth-first vertex order
            assert_eq!(
                differing(&unordered(&first), &unordered(&second)),
                Vec::<String>::new(),
                "{stem}: export → import → export changed the content of these keys"
            );
        } else {
            assert_eq!(
                changed,
                Vec::<String>::new(),
                "{stem}: export → import → export changed these keys"
            );
        }
        // zv's own export is a fixed point
        let third = reimport(&second);
        assert_eq!(
            differing(&second, &third),
            Vec::<String>::new(),
            "{stem}: a second round changed these keys"
        );
        checked.push(stem.to_owned());
    }
    checked.sort();
    assert!(
        checked.len() >= 7,
        "only {checked:?} exported (the fixtures folder has 7 stores)"
    );
}

#[test]
fn graph_basic_cross_chunk_link_attributes_round_trip_as_null() {
    let store =
        ZvStore::open_url(fixtures_dir().join("graph_basic.zarr").to_str().unwrap()).unwrap();
    let first = export_geometry(&store).unwrap();
    let weights = first["link_attributes"]["weight"]["values"]
        .as_array()
        .unwrap();
    let nulls = weights.iter().filter(|v| v.is_null()).count();
    // 220 edges: 33 within chunks (stored), 187 across chunks (not stored by the reference)
    assert_eq!((weights.len(), nulls), (220, 187));
    let second = reimport(&first);
    assert_eq!(second["link_attributes"], first["link_attributes"]);
    assert_eq!(second, first);
}

#[test]
fn a_null_integer_link_attribute_is_refused_clearly() {
    let doc = serde_json::json!({
        "format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10.0, 10.0],
        "vertices": [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]],
        "edges": [[0, 1], [1, 2]],
        "link_attributes": {"k": {"dtype": "int32", "values": [5, null]}}
    });
    let parsed = GeometryDocument::from_json(&serde_json::to_vec(&doc).unwrap()).unwrap();
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let err = write_document_in(store, &parsed, 1000, FormatVersion::V0_7)
        .unwrap_err()
        .to_string();
    assert!(err.contains("`k`") && err.contains("int32"), "{err}");
}

#[test]
fn a_null_float_link_attribute_is_stored_as_nan() {
    let doc = serde_json::json!({
        "format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10.0, 10.0],
        "vertices": [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]],
        "edges": [[0, 1], [1, 2]],
        "link_attributes": {"w": {"dtype": "float64", "values": [0.5, null]}}
    });
    let parsed = GeometryDocument::from_json(&serde_json::to_vec(&doc).unwrap()).unwrap();
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    write_document_in(store.clone(), &parsed, 1000, FormatVersion::V0_7).unwrap();
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    let info = level.link_attribute_info("w", 0).unwrap();
    let key = level.chunk_keys().unwrap()[0].clone();
    let rows = level.link_attribute(&info, 0, &key, 2).unwrap().unwrap();
    assert_eq!(rows.get_f64(0, 0), Some(0.5));
    assert!(rows.get_f64(1, 0).is_some_and(f64::is_nan));
    let back = export_geometry(&ZvStore::open(store).unwrap()).unwrap();
    assert_eq!(
        back["link_attributes"]["w"]["values"],
        serde_json::json!([0.5, null])
    );
}
