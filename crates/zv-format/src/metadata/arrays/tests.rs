//! The array models against what the writer writes (byte for byte), what the reference writes
//! (the shared fixtures) and the variants read liberally.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::data_type::DataType;
use zv_core::metadata::NodeMetadata;
use zv_core::store::Store;
use zv_store_mem::MemoryStore;

use super::*;
use crate::document::GeometryDocument;
use crate::error::Error;
use crate::metadata::JsonObject;

fn obj(v: Value) -> JsonObject {
    match v {
        Value::Object(m) => m,
        other => panic!("{other} is not an object"),
    }
}

/// The group's attributes read by the model its discriminator names and written back; `None`
/// for groups without a discriminator.
fn through_model(attrs: &JsonObject, key: &str) -> Option<JsonObject> {
    let kind = ZvArray::from_attributes(attrs, key).unwrap()?;
    let written = match kind {
        ZvArray::Vertices => VerticesArray::from_attributes(attrs, key).map(|m| m.to_attributes()),
        ZvArray::VertexFragments | ZvArray::LinkFragments => {
            FragmentIndexArray::from_attributes(attrs, key).map(|m| m.to_attributes())
        }
        ZvArray::Links => LinksArray::from_attributes(attrs, key).map(|m| m.to_attributes()),
        ZvArray::CrossChunkLinks => {
            CrossChunkLinksArray::from_attributes(attrs, key).map(|m| m.to_attributes())
        }
        ZvArray::ObjectIndex => {
            ObjectIndexArray::from_attributes(attrs, key).map(|m| m.to_attributes())
        }
        ZvArray::Groups => GroupsArray::from_attributes(attrs, key).map(|m| m.to_attributes()),
        ZvArray::VertexAttribute
        | ZvArray::FragmentAttribute
        | ZvArray::LinkAttribute
        | ZvArray::CrossChunkLinkAttribute => {
            RowAttributeArray::from_attributes(attrs, key).map(|m| m.to_attributes())
        }
        ZvArray::ObjectAttribute | ZvArray::GroupAttribute => {
            DenseAttributeArray::from_attributes(attrs, key).map(|m| m.to_attributes())
        }
        ZvArray::Other(name) => panic!("{key}: unknown zv_array `{name}`"),
    };
    Some(written.unwrap_or_else(|e| panic!("{key}: {e}")))
}

/// Every group document of a store: (key, attributes).
fn groups_of(store: &dyn Store) -> Vec<(String, JsonObject)> {
    let mut out = Vec::new();
    for key in store.list().unwrap() {
        if key.name() != "zarr.json" {
            continue;
        }
        let bytes = store.get(&key).unwrap().unwrap();
        if let NodeMetadata::Group(g) = NodeMetadata::from_json(&bytes).unwrap() {
            out.push((key.to_string(), g.attributes));
        }
    }
    out
}

fn written(doc: Value) -> Arc<dyn Store> {
    crate::link_plugins();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = GeometryDocument::from_value(&doc).unwrap();
    crate::import::write_document_in(store.clone(), &doc, 2, crate::writer::FormatVersion::V0_7)
        .unwrap();
    store
}

#[test]
fn the_writers_documents_are_written_back_byte_for_byte() {
    let graph = json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 1], [12, 1], [13, 2], [3, 3]],
        "object_ids": [0, 0, 1, 1, 0], "num_objects": 3,
        "edges": [[0, 1], [1, 2], [2, 3], [4, 0]],
        "vertex_attributes": {
            "rgb": {"dtype": "uint8", "values": [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1], [2, 2, 2]]},
            "kind": {"dtype": "string", "values": ["a", null, "b", "a", "b"]},
            "w": {"dtype": "float32", "values": [1, 2, 3, 4, 5], "channel_names": ["weight"]}},
        "link_attributes": {
            "len": {"dtype": "float64", "values": [1, 2, 3, 4]},
            "tag": {"dtype": "string", "values": ["x", "y", "x", "y"]},
            "xy": {"dtype": "float32", "values": [[1, 2], [3, 4], [5, 6], [7, 8]]}},
        "object_attributes": {
            "size": {"dtype": "int32", "values": [1, null, 3]},
            "name": {"dtype": "string", "values": ["p", "q", "r"]},
            "pos": {"dtype": "float64", "values": [[1, 2], [3, 4], [5, 6]], "channel_names": ["u", "v"]}},
        "fragment_attributes": {
            "score": {"dtype": "float32", "values": [0.5, 1.5, null]},
            "label": {"dtype": "string", "values": ["s", "t", null]}},
        "groups": {"0": [0, 2], "1": [1]},
        "group_attributes": {
            "g": {"dtype": "float32", "values": [1, 2]},
            "gname": {"dtype": "string", "values": ["one", "two"]}}});
    let lines = json!({"format": "zv-geometry/1", "geometry": "streamline",
        "chunk_shape": [10, 10], "polylines": [[[1, 1], [5, 5], [15, 5], [25, 6]]]});
    let mut seen = std::collections::BTreeSet::new();
    for doc in [graph, lines] {
        let store = written(doc);
        for (key, attrs) in groups_of(store.as_ref()) {
            let Some(back) = through_model(&attrs, &key) else {
                continue;
            };
            seen.insert(attrs[crate::names::ZV_ARRAY].as_str().unwrap().to_owned());
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                serde_json::to_string(&attrs).unwrap(),
                "{key}"
            );
        }
    }
    let every: std::collections::BTreeSet<String> =
        SPELLINGS.iter().map(|(_, s)| (*s).to_owned()).collect();
    assert_eq!(seen, every, "every kind of group is written");
}

#[test]
fn the_reference_fixtures_read_and_write_back() {
    let dir = zv_testkit::env::fixtures_dir();
    let mut stores: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "zarr"))
        .collect();
    stores.sort();
    assert!(!stores.is_empty());
    let mut read = 0;
    for path in stores {
        let store = zv_store_fs::FilesystemStore::new(Path::new(&path)).unwrap();
        for (key, attrs) in groups_of(&store) {
            if let Some(back) = through_model(&attrs, &key) {
                // the same keys and values (the reference's key order may differ)
                assert_eq!(Value::Object(back), Value::Object(attrs), "{key}");
                read += 1;
            }
        }
    }
    assert!(read > 50, "{read} group documents");
}

#[test]
fn the_reference_variants() {
    // link_fragments left as {} by the reference
    let lf = FragmentIndexArray::from_attributes(&JsonObject::new(), "k").unwrap();
    assert_eq!((lf.kind, lf.encoding.as_deref()), (None, None));
    assert!(lf.to_attributes().is_empty());
    // links without num_links, cross-chunk links of an empty group
    let links = LinksArray::from_attributes(
        &obj(json!({"zv_array": "links", "dtype": "int64", "link_width": 3, "level_delta": -1})),
        "k",
    )
    .unwrap();
    assert_eq!(
        (links.link_width, links.level_delta, links.num_links),
        (3, Some(-1), None)
    );
    let ccl = CrossChunkLinksArray::from_attributes(
        &obj(json!({"zv_array": "cross_chunk_links", "level_delta": 0, "link_width": 2})),
        "k",
    )
    .unwrap();
    assert_eq!((ccl.num_links, ccl.sid_ndim), (None, None));
    // the vlen object index
    let oi = ObjectIndexArray::from_attributes(
        &obj(json!({"zv_array": "object_index", "num_objects": 12, "sid_ndim": 3, "layout": "vlen_manifests_v1"})),
        "k",
    )
    .unwrap();
    assert_eq!(oi.layout.as_deref(), Some(VLEN_MANIFESTS_V1));
    // the legacy discriminators
    let g =
        GroupsArray::from_attributes(&obj(json!({"zv_array": "groupings", "num_groups": 2})), "k")
            .unwrap();
    assert_eq!(
        g.to_attributes(),
        obj(json!({"zv_array": "groups", "num_groups": 2}))
    );
    let v =
        VerticesArray::from_attributes(&obj(json!({"zvf_array": "vertices", "dtype": "<f8"})), "k")
            .unwrap();
    assert_eq!((v.dtype, v.encoding.as_str()), (DataType::Float64, "raw"));
    assert_eq!(
        v.to_attributes(),
        obj(json!({"zv_array": "vertices", "dtype": "float64", "encoding": "raw"}))
    );
    let ga = DenseAttributeArray::from_attributes(
        &obj(json!({"zv_array": "groupings_attribute", "name": "w", "dtype": "float32", "num_channels": 1, "shape": [2]})),
        "k",
    )
    .unwrap();
    assert_eq!(ga.kind, Some(DenseAttributeKind::Group));
    assert!(!ga.expects_present_mask());
    // a dictionary attribute
    let dict = RowAttributeArray::from_attributes(
        &obj(json!({"zv_array": "attribute", "name": "kind", "dtype": "int8", "encoding": "dictionary",
            "categories": ["axon", "soma"], "ordered": false, "_FillValue": -1})),
        "k",
    )
    .unwrap();
    let d = dict.dictionary.as_ref().unwrap();
    assert_eq!((d.categories.len(), d.missing_code), (2, Some(-1)));
    assert!(dict.extra.is_empty());
}

#[test]
fn missing_keys_take_defaults_and_numbers_may_be_floats() {
    let v = VerticesArray::from_attributes(&JsonObject::new(), "k").unwrap();
    assert_eq!(v, VerticesArray::new(DataType::Float32));
    let links =
        LinksArray::from_attributes(&obj(json!({"link_width": 2.0, "num_links": 7.0})), "k")
            .unwrap();
    assert_eq!(
        (links.dtype.as_str(), links.link_width, links.num_links),
        ("int64", 2, Some(7))
    );
    let oi =
        ObjectIndexArray::from_attributes(&obj(json!({"num_objects": 4.0, "sid_ndim": null})), "k")
            .unwrap();
    assert_eq!((oi.num_objects, oi.sid_ndim), (4, None));
    let a =
        RowAttributeArray::from_attributes(&obj(json!({"channel_names": ["a", 1]})), "k").unwrap();
    assert_eq!(
        (a.kind, a.dtype, a.channels()),
        (None, DataType::Float32, Some(2))
    );
    let dense =
        DenseAttributeArray::from_attributes(&obj(json!({"shape": [3.0, 2]})), "k").unwrap();
    assert_eq!(
        (dense.dtype, dense.shape),
        (DataType::Float64, Some(vec![3, 2]))
    );
}

#[test]
fn unknown_keys_and_discriminators_are_kept() {
    let attrs = obj(
        json!({"zv_array": "links", "note": {"a": 1}, "dtype": "int64", "link_width": 2, "z": 1}),
    );
    let links = LinksArray::from_attributes(&attrs, "k").unwrap();
    assert_eq!(links.extra, obj(json!({"note": {"a": 1}, "z": 1})));
    assert_eq!(
        serde_json::to_string(&links.to_attributes()).unwrap(),
        r#"{"zv_array":"links","dtype":"int64","link_width":2,"note":{"a":1},"z":1}"#
    );
    // a discriminator this crate does not know is written back as found
    let odd = obj(json!({"zv_array": "vertex_attribute", "name": "a", "dtype": "int32"}));
    let a = RowAttributeArray::from_attributes(&odd, "k").unwrap();
    assert_eq!(a.kind, None);
    assert_eq!(Value::Object(a.to_attributes()), Value::Object(odd));
    assert_eq!(
        ZvArray::parse("vertex_attribute").name(),
        "vertex_attribute"
    );
    assert_eq!(ZvArray::parse("attribute"), ZvArray::VertexAttribute);
}

fn error(result: Result<impl std::fmt::Debug, Error>) -> String {
    let e = result.unwrap_err().to_string();
    assert!(e.contains("`0/g/zarr.json`"), "{e}");
    e
}

#[test]
fn bad_values_are_errors_naming_the_key() {
    let key = "0/g/zarr.json";
    let cases: Vec<(String, &str)> = vec![
        (
            error(LinksArray::from_attributes(
                &obj(json!({"link_width": 0})),
                key,
            )),
            "link_width 0 is invalid",
        ),
        (
            error(LinksArray::from_attributes(
                &obj(json!({"link_width": 65})),
                key,
            )),
            "link_width 65 is invalid",
        ),
        (
            error(LinksArray::from_attributes(
                &obj(json!({"zv_array": "vertices"})),
                key,
            )),
            "holds `links`",
        ),
        (
            error(LinksArray::from_attributes(
                &obj(json!({"zv_array": 3})),
                key,
            )),
            "not a string",
        ),
        (
            error(CrossChunkLinksArray::from_attributes(
                &obj(json!({"sid_ndim": 65})),
                key,
            )),
            "sid_ndim 65",
        ),
        (
            error(CrossChunkLinksArray::from_attributes(
                &obj(json!({"num_links": -1})),
                key,
            )),
            "num_links -1",
        ),
        (
            error(ObjectIndexArray::from_attributes(
                &obj(json!({"sid_ndim": 3})),
                key,
            )),
            "num_objects",
        ),
        (
            error(ObjectIndexArray::from_attributes(
                &obj(json!({"num_objects": 1.5})),
                key,
            )),
            "num_objects",
        ),
        (
            error(VerticesArray::from_attributes(
                &obj(json!({"dtype": "int32"})),
                key,
            )),
            "not a float type",
        ),
        (
            error(VerticesArray::from_attributes(
                &obj(json!({"dtype": "string"})),
                key,
            )),
            "unsupported dtype",
        ),
        (
            error(VerticesArray::from_attributes(
                &obj(json!({"dtype": 4})),
                key,
            )),
            "not a string",
        ),
        (
            error(GroupsArray::from_attributes(
                &obj(json!({"num_groups": "2"})),
                key,
            )),
            "num_groups",
        ),
        (
            error(RowAttributeArray::from_attributes(
                &obj(json!({"channel_names": "x"})),
                key,
            )),
            "not a list",
        ),
        (
            error(RowAttributeArray::from_attributes(
                &obj(json!({"encoding": "dictionary"})),
                key,
            )),
            "categories",
        ),
        (
            error(RowAttributeArray::from_attributes(
                &obj(json!({"zv_array": "object_attribute"})),
                key,
            )),
            "holds",
        ),
        (
            error(DenseAttributeArray::from_attributes(
                &obj(json!({"shape": [1, -2]})),
                key,
            )),
            "shape",
        ),
        (
            error(DenseAttributeArray::from_attributes(
                &obj(json!({"has_present_mask": 1})),
                key,
            )),
            "has_present_mask",
        ),
        (
            error(FragmentIndexArray::from_attributes(
                &obj(json!({"zv_array": "links"})),
                key,
            )),
            "vertex_fragments",
        ),
    ];
    for (message, needle) in cases {
        assert!(message.contains(needle), "{message} (expected {needle})");
    }
}

#[test]
fn constructors_write_what_the_writer_writes() {
    let cases: Vec<(JsonObject, Value)> = vec![
        (
            FragmentIndexArray::new(FragmentIndexKind::Link).to_attributes(),
            json!({"zv_array": "link_fragments", "encoding": "fragment_index_v1"}),
        ),
        (
            LinksArray::new(2, 0, Some(5)).to_attributes(),
            json!({"zv_array": "links", "dtype": "int64", "link_width": 2, "level_delta": 0, "num_links": 5}),
        ),
        (
            CrossChunkLinksArray::new(0, 2, 4, 3).to_attributes(),
            json!({"zv_array": "cross_chunk_links", "level_delta": 0, "link_width": 2, "num_links": 4, "sid_ndim": 3}),
        ),
        (
            ObjectIndexArray::new(3, 2).to_attributes(),
            json!({"zv_array": "object_index", "num_objects": 3, "sid_ndim": 2}),
        ),
        (
            DenseAttributeArray::new(DenseAttributeKind::Object, "s", DataType::Int32, 3, 2)
                .to_attributes(),
            json!({"zv_array": "object_attribute", "name": "s", "dtype": "int32", "num_channels": 2, "shape": [3, 2], "has_present_mask": false}),
        ),
        (
            RowAttributeArray::new(RowAttributeKind::Fragment, "f", DataType::UInt8)
                .to_attributes(),
            json!({"zv_array": "fragment_attribute", "name": "f", "dtype": "uint8"}),
        ),
    ];
    for (got, want) in cases {
        assert_eq!(
            serde_json::to_string(&got).unwrap(),
            serde_json::to_string(&want).unwrap()
        );
    }
}

#[test]
fn unknown_enumerations_and_contradicting_links_are_errors() {
    let key = "0/g/zarr.json";
    let e = error(VerticesArray::from_attributes(
        &obj(json!({"encoding": "foo"})),
        key,
    ));
    assert!(e.contains(key) && e.contains("`encoding` is `foo`"), "{e}");
    assert!(VerticesArray::from_attributes(&obj(json!({"encoding": "draco"})), key).is_ok());
    let e = error(FragmentIndexArray::from_attributes(
        &obj(json!({"encoding": "foo"})),
        key,
    ));
    assert!(e.contains("fragment_index_v1"), "{e}");
    assert!(FragmentIndexArray::from_attributes(&obj(json!({})), key).is_ok());
    let e = error(ObjectIndexArray::from_attributes(
        &obj(json!({"num_objects": 1, "layout": "foo"})),
        key,
    ));
    assert!(e.contains("vlen_manifests_v1"), "{e}");
    let e = error(LinksArray::from_attributes(
        &obj(json!({"dtype": "int32"})),
        key,
    ));
    assert!(e.contains("int64"), "{e}");
    assert!(LinksArray::from_attributes(&obj(json!({"dtype": "<i8"})), key).is_ok());

    let links = |w: u64, d: i64| {
        LinksArray::from_attributes(&obj(json!({"link_width": w, "level_delta": d})), key).unwrap()
    };
    use crate::geometry::Geometry;
    assert!(links(3, 0).check(0, &Geometry::Mesh, key).is_ok());
    assert!(links(4, 0).check(0, &Geometry::Mesh, key).is_ok());
    assert!(error(links(1, 0).check(0, &Geometry::Mesh, key)).contains("3 or 4"));
    assert!(error(links(3, 0).check(0, &Geometry::Graph, key)).contains("graph"));
    assert!(links(1, 0).check(0, &Geometry::Skeleton, key).is_ok());
    assert!(links(5, 0).check(0, &Geometry::PointCloud, key).is_ok());
    // cross-level folders: width 1 or 2, and the folder's delta
    assert!(links(2, -1).check(-1, &Geometry::PointCloud, key).is_ok());
    assert!(error(links(3, 1).check(1, &Geometry::Mesh, key)).contains("1 or 2"));
    assert!(error(links(2, 1).check(-1, &Geometry::PointCloud, key)).contains("level_delta"));
    let ccl = CrossChunkLinksArray::from_attributes(
        &obj(json!({"link_width": 2, "level_delta": 0})),
        key,
    )
    .unwrap();
    assert!(error(ccl.check(0, &Geometry::Mesh, key)).contains("link_width"));
    assert!(ccl.check(0, &Geometry::Streamline, key).is_ok());
}

/// Fuzz finding (`zv_metadata`, CI smoke): a legacy `zvf_array` of an unknown kind was kept in
/// `extra`, written beside the writer's `zv_array`, and then dropped when read again, so the
/// document did not read back equal. Only the key the discriminator was read from is consumed.
#[test]
fn a_legacy_discriminator_beside_zv_array_is_kept_and_reads_back_equal() {
    let attrs = obj(json!({"zvf_array": "objec't_attribute", "dtype": "float32", "k": false}));
    let v = VerticesArray::from_attributes(&attrs, "k").unwrap();
    assert_eq!(v.extra.get("zvf_array"), Some(&json!("objec't_attribute")));
    let written = v.to_attributes();
    assert_eq!(written.get("zv_array"), Some(&json!("vertices")));
    let again = VerticesArray::from_attributes(&written, "k").unwrap();
    assert_eq!(again, v);
    // a `zvf_array` that is the discriminator (no `zv_array`) is still consumed
    let legacy = obj(json!({"zvf_array": "vertices"}));
    let v = VerticesArray::from_attributes(&legacy, "k").unwrap();
    assert!(v.extra.is_empty());
    // and beside a known `zv_array` it is an ordinary key, written back
    let both = obj(json!({"zv_array": "vertices", "zvf_array": "vertices"}));
    let v = VerticesArray::from_attributes(&both, "k").unwrap();
    assert_eq!(v.extra.get("zvf_array"), Some(&json!("vertices")));
    assert_eq!(
        VerticesArray::from_attributes(&v.to_attributes(), "k").unwrap(),
        v
    );
}
