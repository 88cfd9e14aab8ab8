//! Every file format imports into the ZV 0.9 layout (unsharded and sharded) with the content
//! it imports into 0.7: for each format and a geometry it carries, a random store is exported
//! to a file, the file is imported in the three layouts, and zv reads the same level 0 back
//! from each (`export_geometry`, which holds every coordinate bit-exact, the links and the
//! attributes). zarr-vectors 0.9.2 reading zv's 0.9 layout is checked by zv-cli's
//! `zv09_writes` tests; this checks that every importer hands the 0.9 writer what it hands
//! the 0.7 one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::store::Store;
use zv_format::document::GeometryDocument;
use zv_format::writer::FormatVersion;
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};
use zv_testkit::data::Rng;

/// A coordinate in `[-30, 30)`, on a 1/64 grid (exact in every vertex type and format).
fn coord(r: &mut Rng) -> f64 {
    (r.below(60 * 64) as f64) / 64.0 - 30.0
}

fn point(r: &mut Rng) -> Vec<f64> {
    (0..3).map(|_| coord(r)).collect()
}

/// A random point cloud with an attribute.
fn points(r: &mut Rng) -> Value {
    let n = 300;
    let vertices: Vec<Vec<f64>> = (0..n).map(|_| point(r)).collect();
    let intensity: Vec<u64> = (0..n).map(|_| r.below(255)).collect();
    json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10, 10],
        "vertices": vertices,
        "vertex_attributes": {"intensity": {"dtype": "uint8", "values": intensity}}})
}

/// Random walks crossing chunks.
fn streamlines(r: &mut Rng) -> Value {
    let lines: Vec<Vec<Vec<f64>>> = (0..40)
        .map(|_| {
            let mut p = point(r);
            (0..2 + r.below(30))
                .map(|_| {
                    for x in p.iter_mut() {
                        *x = (*x + (r.below(9 * 64) as f64) / 64.0 - 4.0).clamp(-30.0, 29.0);
                    }
                    p.clone()
                })
                .collect()
        })
        .collect();
    json!({"format": "zv-geometry/1", "geometry": "streamline", "chunk_shape": [10, 10, 10],
        "polylines": lines})
}

/// A triangulated height field over `[-30, 30)^2`.
fn mesh(r: &mut Rng) -> Value {
    let k = 12usize;
    let vertices: Vec<Vec<f64>> = (0..k * k)
        .map(|i| {
            let (x, y) = ((i % k) as f64 * 5.0 - 30.0, (i / k) as f64 * 5.0 - 30.0);
            vec![x, y, coord(r) / 4.0]
        })
        .collect();
    let mut faces = Vec::new();
    for y in 0..k - 1 {
        for x in 0..k - 1 {
            let a = y * k + x;
            faces.push(vec![a, a + 1, a + k]);
            faces.push(vec![a + 1, a + k + 1, a + k]);
        }
    }
    json!({"format": "zv-geometry/1", "geometry": "mesh", "chunk_shape": [10, 10, 10],
        "vertices": vertices, "faces": faces})
}

/// A random tree: each node's parent is an earlier node, nearby.
fn skeleton(r: &mut Rng) -> Value {
    let mut vertices = vec![point(r)];
    let mut edges = Vec::new();
    for i in 1..150usize {
        let parent = i - 1 - r.below(i.min(5) as u64) as usize;
        let mut p = vertices[parent].clone();
        for x in p.iter_mut() {
            *x = (*x + (r.below(6 * 64) as f64) / 64.0 - 3.0).clamp(-30.0, 29.0);
        }
        vertices.push(p);
        edges.push(vec![i, parent]);
    }
    let radius: Vec<f64> = (0..vertices.len()).map(|_| 0.5).collect();
    json!({"format": "zv-geometry/1", "geometry": "skeleton", "chunk_shape": [10, 10, 10],
        "vertices": vertices, "edges": edges,
        "vertex_attributes": {"radius": {"dtype": "float32", "values": radius}}})
}

/// A generator of geometry documents.
type Make = fn(&mut Rng) -> Value;

/// The formats checked, with the geometry each carries.
fn cases() -> Vec<(Format, &'static str, Make)> {
    vec![
        (Format::Ply, "ply", points),
        (Format::Csv, "csv", points),
        (Format::Las, "las", points),
        (Format::Laz, "laz", points),
        (Format::Trk, "trk", streamlines),
        (Format::Tck, "tck", streamlines),
        (Format::Obj, "obj", mesh),
        (Format::Stl, "stl", mesh),
        (Format::Ply, "ply", mesh),
        (Format::Swc, "swc", skeleton),
    ]
}

/// The level 0 zv reads from `store`, its edges and faces sorted (0.9 lists link records in
/// its layout's order, 0.7 in chunk order: `docs/format-decisions.md`, "Migrating between 0.7
/// and 0.9"; each face keeps its winding).
fn read_back(store: Arc<dyn Store>) -> Value {
    let mut v = zv_format::export::export_geometry(&ZvStore::open(store).unwrap()).unwrap();
    for key in ["edges", "faces"] {
        if let Some(rows) = v.get_mut(key).and_then(Value::as_array_mut) {
            rows.sort_by_key(|r| r.to_string());
        }
    }
    v
}

#[test]
fn every_format_imports_into_0_9_with_the_content_it_imports_into_0_7() {
    let dir = tempfile::tempdir().unwrap();
    let mut r = Rng::new(16);
    let mut checked = 0;
    for (i, (format, ext, make)) in cases().into_iter().enumerate() {
        let doc = GeometryDocument::from_value(&make(&mut r)).unwrap();
        let source: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
        zv_format::import::write_document(source.clone(), &doc, 1000).unwrap();
        let file = dir.path().join(format!("case{i}.{ext}"));
        let out = std::fs::File::create(&file).unwrap();
        zv_io::export_file(
            &ZvStore::open(source).unwrap(),
            format,
            &out,
            file.to_str().unwrap(),
            &ExportOptions::default(),
        )
        .unwrap_or_else(|e| panic!("export {ext}: {e}"));
        let mut read = Vec::new();
        for (version, shard) in [
            (FormatVersion::V0_7, None),
            (FormatVersion::V0_9, None),
            (FormatVersion::V0_9, Some(vec![2, 2, 2])),
        ] {
            let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
            let opts = ImportOptions {
                chunk_shape: Some(vec![10.0, 10.0, 10.0]),
                format_version: version,
                shard_shape: shard.clone(),
                ..Default::default()
            };
            zv_io::import_file(&file, format, store.clone(), &opts)
                .unwrap_or_else(|e| panic!("import {ext} in {version:?} {shard:?}: {e}"));
            let root = store
                .get(&zv_core::key::StoreKey::new("zarr.json").unwrap())
                .unwrap()
                .unwrap();
            let root: Value = serde_json::from_slice(&root).unwrap();
            let version_written = root["attributes"]["zarr_vectors"]["zv_version"].clone();
            assert_eq!(
                version_written.as_str().unwrap().starts_with("0.9"),
                version == FormatVersion::V0_9,
                "{ext}: {version_written}"
            );
            read.push(read_back(store));
        }
        let held = |k: &str| read[0][k].as_array().map_or(0, Vec::len);
        assert!(
            held("vertices") + held("polylines") > 0,
            "{ext}: nothing imported"
        );
        assert!(
            read[1] == read[0],
            "{ext} ({i}): 0.9 reads other content than 0.7"
        );
        assert!(
            read[2] == read[0],
            "{ext} ({i}): sharded 0.9 reads other content"
        );
        checked += 1;
    }
    assert_eq!(checked, cases().len());
}
