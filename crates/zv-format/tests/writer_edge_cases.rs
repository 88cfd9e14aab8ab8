//! Edge cases of writing found in review: writer input that used to overflow, batches that
//! must not fix the writer's state, dense object and group ids, empty objects and their
//! attributes. (The reader's: `edge_cases.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;

use serde_json::json;
use zv_core::data_type::DataType;
use zv_format::document::GeometryDocument;
use zv_format::import::write_document_in;
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};

mod edge_common;

use edge_common::*;

#[test]
fn far_away_coordinates_are_refused() {
    let mut o = WriterOptions::new(Geometry::PointCloud, vec![1.0, 1.0])
        .with_format_version(FormatVersion::V0_7);
    o.bin_shape = Some(vec![0.5, 0.5]);
    o.vertex_type = DataType::Float64;
    let store = mem();
    let mut w = ZvWriter::create(store.clone(), o).unwrap();
    assert_refused(w.add_vertices(&[vec![1e300, 0.0]], None, &none()), "2^52");
    assert_refused(w.add_vertices(&[vec![0.0, -3e15]], None, &none()), "2^52");
    w.add_vertices(&[vec![2e15, 0.0]], None, &none()).unwrap();
    w.finish().unwrap();
    assert_eq!(all_points(&level0(&store)), vec![vec![2e15, 0.0]]);
    let mut o = WriterOptions::new(Geometry::Polyline, vec![1.0, 1.0])
        .with_format_version(FormatVersion::V0_7);
    o.vertex_type = DataType::Float64;
    let mut w = ZvWriter::create(mem(), o).unwrap();
    assert_refused(
        w.add_polylines(&[vec![vec![0.0, 0.0], vec![1e20, 0.0]]], &none()),
        "polyline 0 vertex 1",
    );
}

#[test]
fn too_many_bins_per_chunk_are_refused() {
    for chunk in [1e6, 1e7] {
        let mut o = WriterOptions::new(Geometry::PointCloud, vec![chunk; 3])
            .with_format_version(FormatVersion::V0_7);
        o.bin_shape = Some(vec![1.0; 3]);
        assert_refused(ZvWriter::create(mem(), o), "bins per chunk");
    }
    let mut o = WriterOptions::new(Geometry::PointCloud, vec![128.0; 3])
        .with_format_version(FormatVersion::V0_7);
    o.bin_shape = Some(vec![1.0; 3]);
    ZvWriter::create(mem(), o).unwrap();
}

#[test]
fn object_and_group_ids_must_be_dense() {
    let mut w = ZvWriter::create(
        mem(),
        WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_vertices(&[vec![1.0, 1.0]], Some(&[u64::MAX]), &none())
        .unwrap();
    assert_refused(w.finish(), "too large");
    let mut w = ZvWriter::create(
        mem(),
        WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_vertices(&[vec![1.0, 1.0]], Some(&[1 << 40]), &none())
        .unwrap();
    assert_refused(w.finish(), "renumber");
    for gid in ["18446744073709551615", "1099511627776"] {
        let doc = json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
            "vertices": [[1, 1]], "object_ids": [0], "groups": {gid: [0]}});
        let store = mem();
        let r = write_document_in(
            store.clone(),
            &GeometryDocument::from_value(&doc).unwrap(),
            3,
            FormatVersion::V0_7,
        );
        assert_refused(r, "group id");
        assert!(store.list().unwrap().is_empty());
    }
}

#[test]
fn empty_and_rejected_batches_fix_nothing() {
    let mut w = ZvWriter::create(
        mem(),
        WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_vertices(&[], None, &none()).unwrap();
    let mut a = BTreeMap::new();
    a.insert("i".to_owned(), f32attr(&[1.0]));
    w.add_vertices(&[vec![1.0, 1.0]], Some(&[0]), &a).unwrap();
    // now the schema and the id mode are fixed
    assert_refused(w.add_vertices(&[vec![1.0, 1.0]], None, &a), "object ids");
    assert_refused(
        w.add_vertices(&[vec![1.0, 1.0]], Some(&[0]), &none()),
        "same vertex attributes",
    );
    // a batch of polylines without vertices, and a batch without edges, fix no schema
    let mut w = ZvWriter::create(
        mem(),
        WriterOptions::new(Geometry::Polyline, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_polylines(&[vec![]], &none()).unwrap();
    w.add_polylines(&[vec![vec![1.0, 1.0]]], &a).unwrap();
    w.finish().unwrap();
    let mut w = ZvWriter::create(
        mem(),
        WriterOptions::new(Geometry::Graph, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_vertices(&[vec![1.0, 1.0], vec![2.0, 1.0]], None, &none())
        .unwrap();
    w.add_edges(&[], &none()).unwrap();
    w.add_edges(&[[0, 1]], &a).unwrap();
    w.finish().unwrap();
    // empty object ids make a point cloud one with objects
    let store = mem();
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_vertices(&[], Some(&[]), &none()).unwrap();
    assert_refused(
        w.add_vertices(&[vec![1.0, 1.0]], None, &none()),
        "object ids",
    );
    w.finish().unwrap();
    assert_eq!(
        level0(&store).object_index().unwrap().unwrap().num_objects,
        0
    );
    // a batch refused for a bad coordinate fixes no schema
    let mut w = ZvWriter::create(
        mem(),
        WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    assert!(w.add_vertices(&[vec![f64::NAN, 1.0]], None, &a).is_err());
    w.add_vertices(&[vec![1.0, 1.0]], None, &none()).unwrap();
    // a refused pentagon fixes no face arity
    let store = mem();
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::Mesh, vec![10.0, 10.0])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_vertices(
        &[vec![1.0, 1.0], vec![2.0, 1.0], vec![1.0, 2.0]],
        None,
        &none(),
    )
    .unwrap();
    assert!(w.add_faces(&[vec![0, 1, 2, 0, 1]], &none()).is_err());
    w.add_faces(&[], &none()).unwrap();
    w.add_faces(&[vec![0, 1, 2]], &none()).unwrap();
    assert_refused(w.add_faces(&[vec![0, 1, 2, 0]], &none()), "triangles");
    w.finish().unwrap();
    assert_eq!(
        level0(&store).object(0).unwrap().links.unwrap(),
        vec![vec![0, 1, 2]]
    );
}

// ---- empty objects ----

#[test]
fn trailing_empty_objects_come_from_attributes_or_num_objects() {
    let store = write(
        json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 2]], "object_ids": [0, 1],
        "object_attributes": {"s": {"dtype": "float32", "values": [1, 2, 3]}}}),
    )
    .unwrap();
    let level = level0(&store);
    assert_eq!(level.object_index().unwrap().unwrap().num_objects, 3);
    let o = level.object(2).unwrap();
    assert!(o.vertices.is_empty());
    assert_eq!(o.attributes["s"], Some(json!(3.0)));
    // num_objects, for polylines too; the export carries it, so it survives a round trip
    for doc in [
        json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [10, 10],
            "vertices": [[1, 1]], "num_objects": 4}),
        json!({"format": "zv-geometry/1", "geometry": "streamline", "chunk_shape": [10, 10],
            "polylines": [[[1, 1], [2, 2]]], "num_objects": 4}),
    ] {
        let store = write(doc).unwrap();
        assert_eq!(
            level0(&store).object_index().unwrap().unwrap().num_objects,
            4
        );
        let ex = zv_format::export::export_geometry(&ZvStore::open(store).unwrap()).unwrap();
        assert_eq!(ex["num_objects"], json!(4));
        let again = write(ex).unwrap();
        assert_eq!(
            level0(&again).object_index().unwrap().unwrap().num_objects,
            4
        );
    }
}

#[test]
fn fragment_attributes_may_be_null_only_for_empty_objects() {
    let doc = json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 2]], "object_ids": [0, 2], "groups": {"1": []},
        "fragment_attributes": {"f": {"dtype": "int32", "values": [5, 6, 7]}}});
    let store = write(doc).unwrap();
    let ex = zv_format::export::export_geometry(&ZvStore::open(store).unwrap()).unwrap();
    assert_eq!(
        ex["fragment_attributes"]["f"]["values"],
        json!([5, null, 7])
    );
    let again = write(ex.clone()).unwrap();
    let ex2 = zv_format::export::export_geometry(&ZvStore::open(again).unwrap()).unwrap();
    assert_eq!(ex["fragment_attributes"], ex2["fragment_attributes"]);
    assert_eq!(ex["groups"], ex2["groups"]);
    for geometry in ["point_cloud", "streamline"] {
        let mut doc = json!({"format": "zv-geometry/1", "geometry": geometry, "chunk_shape": [10, 10],
            "fragment_attributes": {"f": {"dtype": "int32", "values": [5, null]}}});
        if geometry == "point_cloud" {
            doc["vertices"] = json!([[1, 1], [2, 2]]);
            doc["object_ids"] = json!([0, 1]);
        } else {
            doc["polylines"] = json!([[[1, 1]], [[2, 2]]]);
        }
        let store = mem();
        let r = write_document_in(
            store.clone(),
            &GeometryDocument::from_value(&doc).unwrap(),
            3,
            FormatVersion::V0_7,
        );
        assert_refused(r, "null for object 1, which has vertices");
        assert!(store.list().unwrap().is_empty());
    }
}
