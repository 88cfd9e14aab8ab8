//! What the writer puts on disk: the "zv-0.7 spec profile" of docs/format-decisions.md (codecs, group
//! documents, object index container, link fragments, true polyline cross-chunk rows), and the
//! out-of-bounds policies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use zv_format::writer::FormatVersion;

use serde_json::{json, Value};
use zv_core::key::StoreKey;
use zv_core::store::Store;
use zv_format::document::GeometryDocument;
use zv_format::import::write_document_in;
use zv_format::reader::ZvStore;
use zv_store_mem::MemoryStore;

fn write(doc: Value) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    write_document_in(
        store.clone(),
        &GeometryDocument::from_value(&doc).unwrap(),
        3,
        FormatVersion::V0_7,
    )
    .unwrap();
    store
}

fn doc_at(store: &Arc<dyn Store>, key: &str) -> Value {
    serde_json::from_slice(
        &store
            .get(&StoreKey::new(key).unwrap())
            .unwrap()
            .unwrap_or_else(|| panic!("no {key}")),
    )
    .unwrap()
}

fn graph() -> Value {
    json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10, 10],
        "vertices": [[1, 1, 1], [2, 1, 1], [3, 1, 1], [12, 1, 1], [2, 5, 1], [13, 2, 1]],
        "object_ids": [1, 0, 1, 0, 1, 0],
        "edges": [[0, 2], [2, 4], [1, 3], [3, 5], [0, 4]],
        "link_attributes": {"w": {"dtype": "float32", "values": [1, 2, 3, 4, 5]}}})
}

#[test]
fn spec_default_codecs_and_documents() {
    let store = write(graph());
    let root = doc_at(&store, "zarr.json");
    let zv = &root["attributes"]["zarr_vectors"];
    assert_eq!(zv["zv_version"], json!("0.7.0"));
    assert!(zv["format_capabilities"]
        .as_array()
        .unwrap()
        .contains(&json!("fragment_index")));
    assert_eq!(zv["links_convention"], json!("explicit"));
    assert_eq!(
        root["attributes"]["multiscales"][0]["datasets"][0]["path"],
        json!("0")
    );
    let blosc = |doc: &Value| doc["codecs"][1]["configuration"].clone();
    let v = doc_at(&store, "0/vertices/0.0.0/zarr.json");
    assert_eq!(v["codecs"][0]["name"], json!("bytes"));
    assert_eq!(
        blosc(&v),
        json!({"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0})
    );
    assert_eq!(
        blosc(&doc_at(&store, "0/vertex_fragments/0.0.0/zarr.json"))["typesize"],
        json!(8)
    );
    assert_eq!(
        blosc(&doc_at(&store, "0/object_index/data/zarr.json"))["typesize"],
        json!(8)
    );
    let links = blosc(&doc_at(&store, "0/links/0/0.0.0/zarr.json"));
    assert_eq!(
        (links["shuffle"].clone(), links["typesize"].clone()),
        (json!("bitshuffle"), json!(8))
    );
    // per-array group documents
    assert_eq!(
        doc_at(&store, "0/links/0/zarr.json")["attributes"],
        json!({"zv_array": "links", "dtype": "int64", "link_width": 2, "level_delta": 0, "num_links": 4})
    );
    assert_eq!(
        doc_at(&store, "0/link_fragments/zarr.json")["attributes"],
        json!({"zv_array": "link_fragments", "encoding": "fragment_index_v1"})
    );
    let oi = doc_at(&store, "0/object_index/zarr.json")["attributes"].clone();
    assert_eq!(
        oi,
        json!({"zv_array": "object_index", "num_objects": 2, "sid_ndim": 3})
    );
    assert!(store
        .get(&StoreKey::new("0/object_index/offsets/zarr.json").unwrap())
        .unwrap()
        .is_some());
    // every folder that holds a key has its own zarr.json (intermediate groups included)
    let keys: Vec<String> = store
        .list()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    for k in &keys {
        let parts: Vec<&str> = k.split('/').collect();
        for depth in 0..parts.len() - 1 {
            let dir = parts[..depth].join("/");
            if parts.get(depth) == Some(&"c") {
                break; // inside an array's chunk keys
            }
            let doc = if dir.is_empty() {
                "zarr.json".to_owned()
            } else {
                format!("{dir}/zarr.json")
            };
            assert!(
                keys.contains(&doc),
                "{dir} has no zarr.json (needed by {k})"
            );
        }
    }
}

#[test]
fn link_fragments_parallel_the_vertex_fragments() {
    let store = write(graph());
    let level = ZvStore::open(store).unwrap().level(0).unwrap();
    let key = "0.0.0".parse().unwrap();
    let chunk = level.chunk(&key).unwrap().unwrap();
    let links = level
        .links(&key, 2, chunk.vertices.len() as u64)
        .unwrap()
        .unwrap();
    let lf = level
        .link_fragments(&key, links.len() as u64)
        .unwrap()
        .unwrap();
    assert_eq!(
        lf.len(),
        chunk.fragments.len(),
        "one link fragment per vertex fragment"
    );
    // link fragment k holds the links whose first endpoint is in vertex fragment k
    for (k, lfr) in lf.iter().enumerate() {
        let vrows: Vec<u64> = chunk.fragments.get(k).unwrap().iter().collect();
        for r in lfr.iter() {
            let first = links.row(r as usize).unwrap()[0] as u64;
            assert!(
                vrows.contains(&first),
                "link {r} starts outside vertex fragment {k}"
            );
        }
    }
    // fragments: one per object, ascending object id, as ranges
    assert_eq!(chunk.fragments.len(), 2);
    assert!(chunk.fragments.is_consecutive_ranges());
}

#[test]
fn polyline_cross_chunk_records_carry_the_true_rows() {
    let store = write(
        json!({"format": "zv-geometry/1", "geometry": "streamline", "chunk_shape": [10, 10], "bin_shape": [5, 5],
        "polylines": [[[1, 1], [4, 1], [8, 1], [12, 1], [15, 1], [9, 2]]]}),
    );
    let level = ZvStore::open(store).unwrap().level(0).unwrap();
    let ccl = level.cross_chunk_links(0).unwrap().unwrap().links;
    assert_eq!(ccl.len(), 2);
    let o = level.object(0).unwrap();
    for r in 0..ccl.len() {
        let (ka, ra) = ccl.endpoint(r, 0).unwrap();
        let (kb, rb) = ccl.endpoint(r, 1).unwrap();
        let a = level
            .vertices(&zv_format::metadata::ChunkKey(ka.to_vec()))
            .unwrap()
            .unwrap()
            .row(ra as usize)
            .unwrap();
        let b = level
            .vertices(&zv_format::metadata::ChunkKey(kb.to_vec()))
            .unwrap()
            .unwrap()
            .row(rb as usize)
            .unwrap();
        // the two ends are consecutive vertices of the path
        let i = o.vertices.iter().position(|v| *v == a).unwrap();
        assert_eq!(o.vertices[i + 1], b, "record {r}");
    }
    // split at bin boundaries: chunk 0.0 holds two pieces, (1,1),(4,1) and (8,1)
    let c = level.chunk(&"0.0".parse().unwrap()).unwrap().unwrap();
    assert_eq!(
        c.fragments.len(),
        3,
        "pieces in bins (0,0), (1,0), and the return to (1,0)"
    );
    assert_eq!(o.vertices.len(), 6);
}

#[test]
fn out_of_bounds_policies() {
    let base = json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
        "bounds": [[0, 0], [20, 20]], "vertices": [[1, 1], [25, 5], [3, 3]],
        "vertex_attributes": {"a": {"dtype": "int32", "values": [1, 2, 3]}}});
    let mut ignore = base.clone();
    ignore["out_of_bounds"] = json!("ignore");
    let store = write(ignore);
    let zs = ZvStore::open(store.clone()).unwrap();
    let level = zs.level(0).unwrap();
    let hits = level
        .query_box_with(&[-100.0, -100.0], &[100.0, 100.0], &["a"])
        .unwrap();
    assert_eq!(hits.positions.len(), 2);
    let a = &hits.vertex_attributes["a"];
    let vals: Vec<f64> = (0..2).map(|r| a.get_f64(r, 0).unwrap()).collect();
    assert_eq!(
        vals,
        vec![1.0, 3.0],
        "the dropped vertex's attribute is dropped too"
    );
    assert_eq!(level.metadata().vertex_count, 2);
    let mut expand = base.clone();
    expand["out_of_bounds"] = json!("expand");
    let zs = ZvStore::open(write(expand)).unwrap();
    assert_eq!(zs.root().bounds, [vec![0.0, 0.0], vec![25.0, 20.0]]);
    let inferred = json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
        "vertices": [[-3, 1], [25, 5]]});
    let zs = ZvStore::open(write(inferred)).unwrap();
    assert_eq!(zs.root().bounds, [vec![-3.0, 1.0], vec![25.0, 5.0]]);
    assert_eq!(zs.level(0).unwrap().chunk_keys().unwrap().len(), 2);
}

#[test]
fn undifferentiated_points_have_one_fragment_per_bin() {
    let store = write(
        json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10, 10], "bin_shape": [5, 5, 5],
        "vertices": [[1, 1, 1], [6, 1, 1], [1, 1, 7], [2, 2, 2]]}),
    );
    let level = ZvStore::open(store).unwrap().level(0).unwrap();
    let c = level.chunk(&"0.0.0".parse().unwrap()).unwrap().unwrap();
    assert_eq!(c.fragments.len(), 8, "every bin, empty ones included");
    let counts: Vec<usize> = c.fragments.iter().map(|f| f.len()).collect();
    // bin index = row-major local bin coordinates, last axis fastest
    assert_eq!(counts, vec![2, 1, 0, 0, 1, 0, 0, 0]);
    assert!(level.object_index().unwrap().is_none());
}

#[test]
fn quads_and_categorical_and_multichannel_attributes() {
    let store = write(
        json!({"format": "zv-geometry/1", "geometry": "mesh", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 1], [2, 2], [1, 2], [12, 1], [12, 2]],
        "faces": [[0, 1, 2, 3], [1, 4, 5, 2]],
        "vertex_attributes": {"rgb": {"dtype": "uint8", "values": [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1], [2, 2, 2], [3, 3, 3]], "channel_names": ["r", "g", "b"]},
                              "kind": {"dtype": "string", "values": ["x", null, "y", "x", "y", null]}},
        "link_attributes": {"side": {"dtype": "string", "values": ["in", "out"]}}}),
    );
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    let info = level.vertex_attribute_info("rgb").unwrap();
    assert_eq!(
        info.channel_names,
        Some(vec!["r".into(), "g".into(), "b".into()])
    );
    let kind = level.vertex_attribute_info("kind").unwrap();
    let dict = kind.dictionary.clone().unwrap();
    assert_eq!(dict.missing_code, Some(-1));
    let key = "0.0".parse().unwrap();
    let rows = level.vertex_attribute(&kind, &key, 4).unwrap().unwrap();
    assert_eq!(
        dict.decode(&rows).unwrap(),
        vec![Some("x".into()), None, Some("y".into()), Some("x".into())]
    );
    assert_eq!(
        doc_at(&store, "0/links/0/zarr.json")["attributes"]["link_width"],
        json!(4)
    );
    let o = level.object(0).unwrap();
    assert_eq!(o.links.unwrap().len(), 2);
    let side = level
        .cross_chunk_link_attribute("side", 0)
        .unwrap()
        .unwrap();
    assert_eq!(side.num_rows(), 1);
}
