//! Edge cases found in review: bin-pruned box queries at bin edges and on stores that omit
//! empty bins, skeleton forests, the spec's width-1 skeleton parent rows, hostile manifests
//! and blob shapes, writer input that used to overflow, batches that must not fix the
//! writer's state, empty objects, and metadata that used to panic the reader.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::data_type::DataType;
use zv_core::key::StoreKey;
use zv_core::metadata::ExtensionMetadata;
use zv_core::store::Store;
use zv_format::blob::Blobs;
use zv_format::document::{Attribute, AttributeValues, GeometryDocument};
use zv_format::import::write_document_in;
use zv_format::layout::attributes::AttributeRows;
use zv_format::layout::fragment_index::FragmentIndex;
use zv_format::layout::manifest::{encode_stream, Manifest};
use zv_format::metadata::ChunkKey;
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;

fn mem() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

fn write(doc: Value) -> zv_format::Result<Arc<dyn Store>> {
    let store = mem();
    write_document_in(
        store.clone(),
        &GeometryDocument::from_value(&doc)?,
        3,
        FormatVersion::V0_7,
    )?;
    Ok(store)
}

fn level0(store: &Arc<dyn Store>) -> zv_format::reader::Level {
    ZvStore::open(store.clone()).unwrap().level(0).unwrap()
}

fn none() -> BTreeMap<String, Attribute> {
    BTreeMap::new()
}

fn f32attr(v: &[f64]) -> Attribute {
    Attribute {
        values: AttributeValues::Numeric {
            rows: AttributeRows::from_f64s(DataType::Float32, 1, v).unwrap(),
            present: None,
        },
        channel_names: None,
    }
}

fn raw() -> [ExtensionMetadata; 1] {
    [ExtensionMetadata::new("bytes")]
}

fn set_json(store: &Arc<dyn Store>, key: &str, f: impl FnOnce(&mut Value)) {
    let k = StoreKey::new(key).unwrap();
    let mut v: Value = serde_json::from_slice(&store.get(&k).unwrap().unwrap()).unwrap();
    f(&mut v);
    store
        .set(&k, bytes::Bytes::from(serde_json::to_vec(&v).unwrap()))
        .unwrap();
}

fn all_points(level: &zv_format::reader::Level) -> Vec<Vec<f64>> {
    level
        .chunk_keys()
        .unwrap()
        .iter()
        .flat_map(|k| level.vertices(k).unwrap().unwrap().rows())
        .collect()
}

fn brute_force(points: &[Vec<f64>], lo: &[f64], hi: &[f64]) -> usize {
    points
        .iter()
        .filter(|p| {
            p.iter()
                .zip(lo.iter().zip(hi))
                .all(|(x, (a, b))| a <= x && x <= b)
        })
        .count()
}

// ---- box queries over bins ----

#[test]
fn box_queries_at_bin_edges_match_brute_force() {
    for dtype in ["float64", "float32"] {
        let mut pts = Vec::new();
        for i in -12..12 {
            for j in -12..12 {
                pts.push(json!([i as f64 * 0.1, j as f64 * 0.1]));
            }
        }
        let store = write(json!({"format": "zv-geometry/1", "geometry": "point_cloud",
            "chunk_shape": [0.3, 0.3], "bin_shape": [0.1, 0.1], "vertex_dtype": dtype,
            "vertices": pts}))
        .unwrap();
        let level = level0(&store);
        let all = all_points(&level);
        assert_eq!(all.len(), 576);
        let mut checked = 0;
        for a in -12..12 {
            for b in a..12 {
                // boxes whose faces sit on bin edges, and boxes that are the stored points
                let lo = [a as f64 * 0.1, a as f64 * 0.1];
                let hi = [b as f64 * 0.1, b as f64 * 0.1];
                let got = level.query_box(&lo, &hi).unwrap().positions.len();
                assert_eq!(
                    got,
                    brute_force(&all, &lo, &hi),
                    "{dtype} box {lo:?}..{hi:?}"
                );
                checked += 1;
            }
        }
        for p in &all {
            assert_eq!(
                level.query_box(p, p).unwrap().positions.len(),
                1,
                "{dtype} {p:?}"
            );
        }
        assert_eq!(checked, 300);
    }
}

#[test]
fn box_query_reads_stores_that_omit_empty_bins() {
    let store = write(json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10, 10], "bin_shape": [5, 5, 5], "codecs": "none",
        "vertices": [[7, 7, 7], [8, 8, 8], [1, 1, 1]]}))
    .unwrap();
    let level = level0(&store);
    assert_eq!(
        level
            .query_box(&[6.0; 3], &[9.0; 3])
            .unwrap()
            .positions
            .len(),
        2
    );
    // the spec's layout: one fragment per occupied bin (bins 0 and 7), empty bins omitted
    let blobs = Blobs::new(store.clone());
    blobs
        .write_bytes(
            "0/vertex_fragments/0.0.0",
            &FragmentIndex::consecutive(&[1, 2]).unwrap().encode(),
            &raw(),
        )
        .unwrap();
    let level = level0(&store);
    assert_eq!(
        level
            .query_box(&[6.0; 3], &[9.0; 3])
            .unwrap()
            .positions
            .len(),
        2
    );
    assert_eq!(
        level
            .query_box(&[0.0; 3], &[2.0; 3])
            .unwrap()
            .positions
            .len(),
        1
    );
}

#[test]
fn absurd_bin_metadata_is_a_metadata_error() {
    let store = write(json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10, 10], "vertices": [[1, 1, 1]]}))
    .unwrap();
    set_json(&store, "zarr.json", |v| {
        v["attributes"]["zarr_vectors"]["chunk_shape"] = json!([1e7, 1e7, 1e7]);
        v["attributes"]["zarr_vectors"]["base_bin_shape"] = json!([1, 1, 1]);
    });
    // 10^21 bins per chunk: more than a fragment index can number, refused when opened
    // (it used to be read, with bin pruning off)
    let err = ZvStore::open(store).unwrap_err().to_string();
    assert!(
        err.contains("zarr.json") && err.contains("bins per chunk"),
        "{err}"
    );
}

#[test]
fn a_level_bin_shape_of_zero_is_a_metadata_error() {
    let store = write(json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10, 10], "vertices": [[1, 1, 1]]}))
    .unwrap();
    for k in store.list().unwrap() {
        if let Some(rest) = k.as_str().strip_prefix("0/") {
            let v = store.get(&k).unwrap().unwrap();
            store
                .set(&StoreKey::new(format!("1/{rest}")).unwrap(), v)
                .unwrap();
        }
    }
    set_json(&store, "1/zarr.json", |v| {
        v["attributes"]["zarr_vectors_level"]["level"] = json!(1);
        v["attributes"]["zarr_vectors_level"]["parent_level"] = json!(0);
    });
    set_json(&store, "zarr.json", |v| {
        v["attributes"]["multiscales"][0]["datasets"]
            .as_array_mut()
            .unwrap()
            .push(json!({"path": "1", "coordinateTransformations": [
                {"type": "scale", "scale": [2, 2, 2]},
                {"type": "translation", "translation": [0, 0, 0]}]}));
    });
    let err = ZvStore::open(store)
        .unwrap()
        .level(1)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("zarr.json") && err.contains("bin shape"),
        "{err}"
    );
}

// ---- skeletons ----

#[test]
fn a_skeleton_forest_in_one_object_reads_back_exactly() {
    // two trees (1 → 0, 3 → 2) and a lone root 4, all in object 0 and one chunk
    let doc = json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10, 10],
        "vertices": [[1, 1, 1], [2, 1, 1], [3, 1, 1], [4, 1, 1], [5, 1, 1]],
        "edges": [[1, 0], [3, 2]]});
    let store = write(doc.clone()).unwrap();
    let level = level0(&store);
    let o = level.object(0).unwrap();
    assert_eq!(o.links.unwrap(), vec![vec![1, 0], vec![3, 2]]);
    assert_eq!(o.fragments.len(), 3, "one fragment per tree");
    let ex = zv_format::export::export_geometry(&ZvStore::open(store).unwrap()).unwrap();
    assert_eq!(ex["edges"], json!([[1, 0], [3, 2]]));
    let again = write(ex.clone()).unwrap();
    let ex2 = zv_format::export::export_geometry(&ZvStore::open(again).unwrap()).unwrap();
    assert_eq!(ex["edges"], ex2["edges"]);
    assert_eq!(ex["vertices"], ex2["vertices"]);
}

#[test]
fn a_forest_across_chunks_keeps_its_trees_apart() {
    // tree A: 0 ← 1 ← 2 (2 in chunk 1); tree B: 3 ← 4 (4 in chunk 1); interleaved rows
    let doc = json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 1], [12, 1], [3, 1], [13, 1]],
        "edges": [[1, 0], [2, 1], [4, 3]]});
    let store = write(doc).unwrap();
    let o = level0(&store).object(0).unwrap();
    let mut links = o.links.unwrap();
    // map back to positions to compare independently of the row order
    let pos = |i: u64| o.vertices[i as usize][0];
    let mut pairs: Vec<(f64, f64)> = links.drain(..).map(|l| (pos(l[0]), pos(l[1]))).collect();
    pairs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(pairs, vec![(2.0, 1.0), (12.0, 2.0), (13.0, 3.0)]);
}

/// A skeleton rewritten into the spec's form: width-1 parent rows in link fragments parallel
/// to the vertex fragments, and cross-chunk records `(parent, child)`.
#[test]
fn spec_form_skeletons_read_with_width_one_parents_and_parent_first_records() {
    // chunk 0.0: rows 0, 1 (fragment 0, sequential) and row 2 (fragment 1, parent row 0);
    // chunk 1.0: row 0, whose parent is row 1 of chunk 0.0
    let doc = json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10],
        "codecs": "none", "vertices": [[1, 1], [2, 1], [3, 1], [12, 1]],
        "edges": [[1, 0], [2, 0], [3, 1]]});
    let store = write(doc).unwrap();
    let want = level0(&store).object(0).unwrap().links.unwrap();
    let blobs = Blobs::new(store.clone());
    // rows in chunk 0.0 are in DFS order: 0 (root), 1, 2 (child of 1? no: of 0)
    let v = level0(&store)
        .vertices(&ChunkKey(vec![0, 0]))
        .unwrap()
        .unwrap()
        .rows();
    assert_eq!(v, vec![vec![1.0, 1.0], vec![2.0, 1.0], vec![3.0, 1.0]]);
    blobs
        .write_bytes(
            "0/vertex_fragments/0.0",
            &FragmentIndex::consecutive(&[2, 1]).unwrap().encode(),
            &raw(),
        )
        .unwrap();
    blobs
        .write_bytes("0/links/0/0.0", &0i64.to_le_bytes(), &raw())
        .unwrap();
    blobs
        .write_bytes(
            "0/link_fragments/0.0",
            &FragmentIndex::consecutive(&[0, 1]).unwrap().encode(),
            &raw(),
        )
        .unwrap();
    set_json(&store, "0/links/0/zarr.json", |v| {
        v["attributes"]["link_width"] = json!(1);
        v["attributes"]["num_links"] = json!(1);
    });
    // the cross-chunk record (child (1.0, 0), parent (0.0, 1)) becomes (parent, child)
    let ccl: Vec<i64> = vec![0, 0, 1, 1, 0, 0];
    let bytes: Vec<u8> = ccl.iter().flat_map(|x| x.to_le_bytes()).collect();
    blobs
        .write_bytes("0/cross_chunk_links/0/data", &bytes, &raw())
        .unwrap();
    let m = Manifest::from_refs(&[(vec![0, 0], 0), (vec![0, 0], 1), (vec![1, 0], 0)]);
    let (data, offsets) = encode_stream(&[m], 2).unwrap();
    blobs
        .write_bytes("0/object_index/data", &data, &raw())
        .unwrap();
    blobs
        .write_bytes("0/object_index/offsets", &offsets, &raw())
        .unwrap();
    let level = level0(&store);
    assert!(level.skeleton_ccl_parent_first().unwrap());
    let got = level.object(0).unwrap().links.unwrap();
    assert_eq!(got, want);
    assert_eq!(got, vec![vec![1, 0], vec![2, 0], vec![3, 1]]);
    let st = ZvStore::open(store).unwrap();
    let ex = zv_format::export::export_geometry(&st).unwrap();
    assert_eq!(ex["edges"], json!([[1, 0], [2, 0], [3, 1]]));
    zv_format::dump::dump(&st).unwrap();
}

#[test]
fn width_one_rows_without_parallel_link_fragments_are_an_error() {
    let doc = json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10],
        "codecs": "none", "vertices": [[1, 1], [2, 1], [3, 1]], "edges": [[1, 0], [2, 0]]});
    let store = write(doc).unwrap();
    let blobs = Blobs::new(store.clone());
    set_json(&store, "0/links/0/zarr.json", |v| {
        v["attributes"]["link_width"] = json!(1)
    });
    // one link row (width 2 → now two width-1 rows) in one link fragment, one vertex fragment
    blobs
        .write_bytes(
            "0/link_fragments/0.0",
            &FragmentIndex::consecutive(&[2]).unwrap().encode(),
            &raw(),
        )
        .unwrap();
    let st = ZvStore::open(store).unwrap();
    let err = st.level(0).unwrap().object(0).unwrap_err().to_string();
    assert!(err.contains("links/0/0.0"), "{err}");
    assert!(zv_format::export::export_geometry(&st).is_err());
}

// ---- hostile stored bytes ----

fn one_object_store() -> Arc<dyn Store> {
    write(
        json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 2]], "object_ids": [0, 0], "codecs": "none"}),
    )
    .unwrap()
}

fn range_manifest(start: i64, count: i64) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&0i64.to_le_bytes());
    m.extend_from_slice(&0i64.to_le_bytes());
    m.push(1);
    m.extend_from_slice(&start.to_le_bytes());
    m.extend_from_slice(&count.to_le_bytes());
    m
}

#[test]
fn a_manifest_with_a_huge_range_is_an_error_not_an_abort() {
    for (count, needle) in [(1i64 << 40, "2^32"), ((1i64 << 32) - 1, "which has 1")] {
        let store = one_object_store();
        Blobs::new(store.clone())
            .write_bytes("0/object_index/data", &range_manifest(0, count), &raw())
            .unwrap();
        let st = ZvStore::open(store).unwrap();
        let err = st.level(0).unwrap().object(0).unwrap_err().to_string();
        assert!(
            err.contains("object_index") && err.contains(needle),
            "{err}"
        );
        let err = zv_format::export::export_geometry(&st)
            .unwrap_err()
            .to_string();
        assert!(err.contains("object_index"), "{err}");
        let err = zv_format::dump::dump(&st).unwrap_err().to_string();
        assert!(err.contains("object_index"), "{err}");
    }
}

#[test]
fn blob_shapes_are_checked_before_allocating() {
    let store = one_object_store();
    set_json(&store, "0/vertices/0.0/zarr.json", |v| {
        v["shape"] = json!([1u64 << 50]);
        v["chunk_grid"]["configuration"]["chunk_shape"] = json!([1]);
    });
    let err = level0(&store)
        .vertices(&ChunkKey(vec![0, 0]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("too large"), "{err}");
    // a large sparse shape: one listing, the missing chunks hold the fill value
    let store = one_object_store();
    set_json(&store, "0/vertices/0.0/zarr.json", |v| {
        v["shape"] = json!([800_000]);
        v["chunk_grid"]["configuration"]["chunk_shape"] = json!([1]);
    });
    store
        .delete(&StoreKey::new("0/vertices/0.0/c/0").unwrap())
        .unwrap();
    let v = level0(&store)
        .vertices(&ChunkKey(vec![0, 0]))
        .unwrap()
        .unwrap();
    assert_eq!(v.len(), 100_000);
    assert_eq!(v.row(99_999).unwrap(), vec![0.0, 0.0]);
}

#[test]
fn an_object_attribute_shorter_than_the_objects_is_an_error() {
    let store = write(
        json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
        "vertices": [[1, 1], [2, 2]], "object_ids": [0, 1], "codecs": "none",
        "object_attributes": {"s": {"dtype": "float64", "values": [1, 2]}}}),
    )
    .unwrap();
    Blobs::new(store.clone())
        .write_bytes("0/object_attributes/s/data", &1f64.to_le_bytes(), &raw())
        .unwrap();
    set_json(&store, "0/object_attributes/s/zarr.json", |v| {
        v["attributes"]["shape"] = json!([1])
    });
    let level = level0(&store);
    if let Err(e) = level.object(0) {
        panic!("{e}");
    }
    let err = level.object(1).unwrap_err().to_string();
    assert!(err.contains("object_attributes/s"), "{err}");
}

// ---- writer input ----

fn assert_refused(r: zv_format::Result<impl std::fmt::Debug>, needle: &str) {
    let err = r.expect_err("refused").to_string();
    assert!(err.contains(needle), "`{err}` does not mention `{needle}`");
}

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
