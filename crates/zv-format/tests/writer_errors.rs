//! Bad input to the writer: each case is a clear error before anything is written, and no
//! partial store is left claiming to be complete.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{
    ListableStore, ReadableStore, Store, StoreError, StoreKeysPrefixes, StoreResult, WritableStore,
};
use zv_format::document::GeometryDocument;
use zv_format::import::write_document;
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;

fn graph() -> Value {
    json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10, 10],
        "vertices": [[1, 1, 1], [2, 1, 1], [12, 1, 1], [2, 15, 1]], "object_ids": [0, 0, 1, 1],
        "edges": [[0, 1], [1, 2], [2, 3]],
        "link_attributes": {"w": {"dtype": "float32", "values": [1, 2, 3]}},
        "vertex_attributes": {"d": {"dtype": "float32", "values": [1, 2, 3, 4]}},
        "object_attributes": {"v": {"dtype": "float64", "values": [1.5, 2.5]}},
        "groups": {"0": [0, 1], "1": [1]},
        "group_attributes": {"g": {"dtype": "int32", "values": [7, 8]}}})
}

fn attempt(doc: &Value) -> (Result<(), String>, Arc<MemoryStore>) {
    let store = Arc::new(MemoryStore::new());
    let result = GeometryDocument::from_value(doc)
        .and_then(|d| write_document(store.clone(), &d, 2).map(|_| ()))
        .map_err(|e| e.to_string());
    (result, store)
}

#[test]
fn the_valid_document_writes() {
    let (r, store) = attempt(&graph());
    r.unwrap();
    let level = ZvStore::open(store).unwrap().level(0).unwrap();
    assert_eq!(level.objects(&[0, 1]).unwrap().len(), 2);
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let base = graph();
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Mutation, &str)> = vec![
        (
            "NaN coordinate",
            Box::new(|d| d["vertices"][1][0] = json!("NaN")),
            "non-finite",
        ),
        (
            "infinite coordinate",
            Box::new(|d| d["vertices"][2][2] = json!("-Infinity")),
            "non-finite",
        ),
        (
            "out of bounds under raise",
            Box::new(|d| d["bounds"] = json!([[0, 0, 0], [12, 12, 12]])),
            "outside the bounds",
        ),
        (
            "edge naming a missing vertex",
            Box::new(|d| d["edges"][1] = json!([1, 9])),
            "does not exist",
        ),
        (
            "vertex attribute of the wrong length",
            Box::new(|d| d["vertex_attributes"]["d"]["values"] = json!([1, 2, 3])),
            "values",
        ),
        (
            "link attribute of the wrong length",
            Box::new(|d| d["link_attributes"]["w"]["values"] = json!([1, 2])),
            "values",
        ),
        (
            "object attributes of different lengths",
            Box::new(|d| {
                d["object_attributes"]["v"]["values"] = json!([1.0, 2.0, 3.0]);
                d["object_attributes"]["w"] = json!({"dtype": "int32", "values": [1, 2]})
            }),
            "objects",
        ),
        (
            "group attribute of the wrong length",
            Box::new(|d| d["group_attributes"]["g"]["values"] = json!([1])),
            "groups",
        ),
        (
            "duplicate object id in a group",
            Box::new(|d| d["groups"]["0"] = json!([0, 1, 0])),
            "twice",
        ),
        (
            "group naming a missing object",
            Box::new(|d| d["groups"]["1"] = json!([5])),
            "does not exist",
        ),
        (
            "object ids of the wrong length",
            Box::new(|d| d["object_ids"] = json!([0, 0])),
            "object ids",
        ),
        (
            "wrong dimensionality",
            Box::new(|d| d["vertices"][0] = json!([1, 1])),
            "coordinates",
        ),
        (
            "self loop",
            Box::new(|d| d["edges"][0] = json!([1, 1])),
            "itself",
        ),
        (
            "integer attribute out of range",
            Box::new(|d| {
                d["vertex_attributes"]["d"] = json!({"dtype": "uint8", "values": [1, 2, 300, 4]})
            }),
            "uint8",
        ),
        (
            "unknown codec choice",
            Box::new(|d| d["codecs"] = json!("lzma")),
            "codecs",
        ),
        (
            "bin shape that does not divide",
            Box::new(|d| d["bin_shape"] = json!([3, 3, 3])),
            "divide",
        ),
        (
            "float16 overflow",
            Box::new(|d| {
                d["vertex_dtype"] = json!("float16");
                d["vertices"][0][0] = json!(70000.0)
            }),
            "float16",
        ),
    ];
    for (what, mutate, needle) in cases {
        let mut doc = base.clone();
        mutate(&mut doc);
        let (r, store) = attempt(&doc);
        let err = r.expect_err(what);
        assert!(
            err.contains(needle),
            "{what}: `{err}` does not mention `{needle}`"
        );
        assert_eq!(store.len(), 0, "{what}: the store was written to");
    }
}

#[test]
fn geometry_specific_errors() {
    let mesh = json!({"format": "zv-geometry/1", "geometry": "mesh", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 1], [1, 2], [12, 1]], "faces": [[0, 1, 2], [1, 3, 2, 0]]});
    let skeleton_cycle = json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 1], [3, 1]], "edges": [[1, 2], [2, 1]]});
    let skeleton_two_parents = json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 1], [3, 1]], "edges": [[2, 0], [2, 1]]});
    let face_missing = json!({"format": "zv-geometry/1", "geometry": "mesh", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 1], [1, 2]], "faces": [[0, 1, 5]]});
    let long_line = json!({"format": "zv-geometry/1", "geometry": "line", "chunk_shape": [10, 10],
        "polylines": [[[1, 1], [2, 2], [3, 3]]]});
    let ignore_for_graph = json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10],
        "out_of_bounds": "ignore", "vertices": [[1, 1]]});
    let points_without_ids = json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
        "vertices": [[1, 1]], "object_attributes": {"a": {"dtype": "int8", "values": [1]}}});
    for (doc, needle) in [
        (mesh, "triangles"),
        (skeleton_cycle, "cycle"),
        (skeleton_two_parents, "more than one parent"),
        (face_missing, "does not exist"),
        (long_line, "a line has 2"),
        (ignore_for_graph, "only allowed for point clouds"),
        (points_without_ids, "need object ids"),
    ] {
        let (r, store) = attempt(&doc);
        let err = r.expect_err(needle);
        assert!(err.contains(needle), "`{err}` does not mention `{needle}`");
        assert_eq!(store.len(), 0);
    }
}

#[test]
fn an_abandoned_streaming_writer_leaves_no_store() {
    let store = Arc::new(MemoryStore::new());
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0]),
    )
    .unwrap();
    w.add_vertices(&[vec![1.0, 1.0], vec![15.0, 2.0]], None, &BTreeMap::new())
        .unwrap();
    // a bad batch is refused whole, and the writer is dropped without finish
    assert!(w
        .add_vertices(
            &[vec![1.0, 1.0], vec![f64::NAN, 2.0]],
            None,
            &BTreeMap::new()
        )
        .is_err());
    drop(w);
    assert_eq!(store.len(), 0);
    assert!(ZvStore::open(store).is_err());
}

/// A store whose writes start failing after a number of them.
#[derive(Debug)]
struct FailingStore {
    inner: MemoryStore,
    budget: AtomicUsize,
}

impl ReadableStore for FailingStore {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        self.inner.get(key)
    }
}

impl WritableStore for FailingStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        if self
            .budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| b.checked_sub(1))
            .is_err()
        {
            return Err(StoreError::Other {
                key: key.to_string(),
                message: "disk full".into(),
            });
        }
        self.inner.set(key, value)
    }
    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        self.inner.delete(key)
    }
}

impl ListableStore for FailingStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        self.inner.list_prefix(prefix)
    }
    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        self.inner.list_dir(prefix)
    }
}

impl Store for FailingStore {}

#[test]
fn a_write_failing_midway_leaves_no_root_metadata() {
    let doc = GeometryDocument::from_value(&graph()).unwrap();
    for budget in [0, 3, 10, 25] {
        let store = Arc::new(FailingStore {
            inner: MemoryStore::new(),
            budget: AtomicUsize::new(budget),
        });
        let err = write_document(store.clone(), &doc, 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("disk full"), "{err}");
        assert!(
            store
                .inner
                .get(&StoreKey::new("zarr.json").unwrap())
                .unwrap()
                .is_none(),
            "budget {budget}"
        );
        let msg = ZvStore::open(store).unwrap_err().to_string();
        assert!(msg.contains("zarr.json"), "{msg}");
    }
}

#[test]
fn writing_into_an_existing_store_is_refused() {
    let (r, store) = attempt(&graph());
    r.unwrap();
    let again = ZvWriter::create(
        store,
        WriterOptions::new(Geometry::Graph, vec![10.0, 10.0, 10.0]),
    );
    assert!(again.unwrap_err().to_string().contains("already"));
}

/// Attribute names become node names (`<kind>_attributes/<name>`): a name that is not one
/// node name is refused before anything is written, for every kind of attribute. Found by
/// the `geometry_document` fuzz target: an object attribute named
/// `0/vertices/2.1.0/zarr.area` wrote a store that did not read back.
#[test]
fn attribute_names_that_are_not_one_node_name_are_refused() {
    let bad = [
        "0/vertices/2.1.0/zarr.area",
        "../x",
        "a\\b",
        "",
        "..",
        "__zv",
        "zarr.json",
        "tab\there",
    ];
    let kinds = [
        "vertex_attributes",
        "link_attributes",
        "object_attributes",
        "group_attributes",
    ];
    for name in bad {
        for kind in kinds {
            let mut doc = graph();
            let attrs = doc[kind].as_object_mut().unwrap();
            let (_, value) = attrs
                .iter()
                .next()
                .map(|(k, v)| (k.clone(), v.clone()))
                .unwrap();
            attrs.clear();
            attrs.insert(name.to_owned(), value);
            let (r, store) = attempt(&doc);
            let err = r.expect_err(&format!("{kind} {name:?} was accepted"));
            assert!(err.contains("attribute name"), "{kind} {name:?}: {err}");
            assert!(
                ZvStore::open(store).is_err(),
                "{kind} {name:?}: a store was committed"
            );
        }
    }
    // ordinary names with periods, dashes and spaces still write
    let mut doc = graph();
    let attrs = doc["vertex_attributes"].as_object_mut().unwrap();
    let v = attrs.remove("d").unwrap();
    attrs.insert("zarr.area-2 b".to_owned(), v);
    attempt(&doc).0.unwrap();
}
