//! Edge cases of reading found in review: bin-pruned box queries at bin edges and on stores
//! that omit empty bins, skeleton forests, the spec's width-1 skeleton parent rows, hostile
//! manifests and blob shapes, and metadata that used to panic the reader. (The writer's:
//! `writer_edge_cases.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use serde_json::json;
use zv_core::key::StoreKey;
use zv_core::store::Store;
use zv_format::blob::Blobs;
use zv_format::layout::fragment_index::FragmentIndex;
use zv_format::layout::manifest::{encode_stream, Manifest};
use zv_format::metadata::ChunkKey;
use zv_format::ZvStore;

mod edge_common;

use edge_common::*;

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
