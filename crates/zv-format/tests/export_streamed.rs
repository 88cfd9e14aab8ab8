//! `export::write_geometry` (what `zv export` writes for zv-geometry/1 JSON) writes the bytes
//! `serde_json::to_vec` writes for `export_geometry`'s document: the seven reference fixtures,
//! and zv-written graphs, meshes, point clouds and streamlines with objects and vertex and
//! link attributes (missing float link values exported as `null`), in both layouts. An
//! output that fails is an error, not a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::export::{export_geometry, write_geometry};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_fs::FilesystemStore;
use zv_store_mem::MemoryStore;
use zv_testkit::data::Rng;
use zv_testkit::env::fixtures_dir;
use zv_testkit::fault::FailingOutput;

/// Checks that `store`'s streamed export is its document's bytes; returns the document.
fn same_bytes(store: &ZvStore, name: &str) -> serde_json::Value {
    let doc = export_geometry(store).unwrap();
    let want = serde_json::to_vec(&doc).unwrap();
    let mut got = Vec::new();
    write_geometry(store, &mut got).unwrap();
    assert!(got == want, "{name}: streamed bytes differ");
    doc
}

#[test]
fn fixtures_export_as_their_documents() {
    zv_format::link_plugins();
    let names = zv_testkit::fixtures::fixture_stores();
    assert_eq!(names.len(), 7, "the 7 reference fixtures");
    for name in &names {
        let path = fixtures_dir().join(name);
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(path).unwrap());
        let doc = same_bytes(&ZvStore::open(store).unwrap(), name);
        let bulky = ["vertices", "polylines"];
        assert!(
            bulky
                .iter()
                .any(|k| doc[*k].as_array().is_some_and(|a| !a.is_empty())),
            "{name}: a real export"
        );
    }
}

/// A float attribute of `rows` values, some NaN.
fn floats(rng: &mut Rng, rows: usize) -> Attribute {
    let values: Vec<f64> = (0..rows)
        .map(|i| {
            if i % 7 == 3 {
                f64::NAN
            } else {
                rng.unit() * 10.0
            }
        })
        .collect();
    Attribute {
        values: AttributeValues::Numeric {
            rows: AttributeRows::from_f64s(DataType::Float32, 1, &values).unwrap(),
            present: None,
        },
        channel_names: None,
    }
}

/// A store of `geometry` written by zv in `version`: 600 vertices in 27 chunks with objects
/// and a vertex attribute; graphs and meshes with links (and a link attribute) within and
/// across chunks; streamlines of 20 vertices.
fn written(geometry: Geometry, version: FormatVersion, seed: u64) -> ZvStore {
    zv_format::link_plugins();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(geometry.clone(), vec![10.0; 3]);
    opts.format_version = version;
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let mut rng = Rng::new(seed);
    let n = 600usize;
    let coords: Vec<f64> = (0..n * 3).map(|_| rng.unit() * 30.0).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert("intensity".to_owned(), floats(&mut rng, n));
    if geometry.is_sequential() {
        let offsets: Vec<usize> = (0..=n / 20).map(|i| i * 20).collect();
        w.add_polylines_flat(&coords, &offsets, &attrs).unwrap();
    } else {
        let ids: Vec<u64> = (0..n).map(|_| rng.below(9)).collect();
        w.add_vertices_flat(&coords, Some(&ids), &attrs).unwrap();
    }
    let mut link_attrs = BTreeMap::new();
    match geometry {
        Geometry::Graph => {
            let edges: Vec<[u64; 2]> = (0..900)
                .map(|_| [rng.below(n as u64), rng.below(n as u64)])
                .filter(|e| e[0] != e[1])
                .collect();
            link_attrs.insert("weight".to_owned(), floats(&mut rng, edges.len()));
            w.add_edges(&edges, &link_attrs).unwrap();
        }
        Geometry::Mesh => {
            let faces: Vec<Vec<u64>> = (0..700)
                .map(|i| {
                    let a = i % (n as u64 - 2);
                    vec![a, a + 1, (a + 2 + rng.below(40)) % n as u64]
                })
                .filter(|f| f[2] != f[0] && f[2] != f[1])
                .collect();
            link_attrs.insert("area".to_owned(), floats(&mut rng, faces.len()));
            w.add_faces(&faces, &link_attrs).unwrap();
        }
        _ => {}
    }
    w.finish().unwrap();
    ZvStore::open(store).unwrap()
}

#[test]
fn zv_stores_export_as_their_documents() {
    for version in [FormatVersion::V0_7, FormatVersion::V0_9] {
        for (seed, geometry) in [
            Geometry::Graph,
            Geometry::Mesh,
            Geometry::PointCloud,
            Geometry::Streamline,
        ]
        .into_iter()
        .enumerate()
        {
            let name = format!("{} {version:?}", geometry.name());
            let doc = same_bytes(&written(geometry.clone(), version, seed as u64), &name);
            let key = match geometry {
                Geometry::Graph => "edges",
                Geometry::Mesh => "faces",
                Geometry::Streamline => "polylines",
                _ => "vertices",
            };
            let bulky = doc[key].as_array().map_or(0, Vec::len);
            assert!(bulky >= 30, "{name}: {bulky} {key}");
            if matches!(geometry, Geometry::Graph | Geometry::Mesh) {
                let nulls = doc["link_attributes"]
                    .as_object()
                    .and_then(|m| m.values().next())
                    .and_then(|a| a["values"].as_array())
                    .map_or(0, |v| v.iter().filter(|x| x.is_null()).count());
                assert!(nulls > 0, "{name}: missing link values export as null");
            }
        }
    }
}

#[test]
fn a_failing_output_is_an_error() {
    let store = written(Geometry::Graph, FormatVersion::V0_9, 7);
    let size = serde_json::to_vec(&export_geometry(&store).unwrap())
        .unwrap()
        .len();
    for left in [0, 1, 100, 10_000, size / 2, size - 1] {
        let err = write_geometry(&store, &mut FailingOutput { left }).unwrap_err();
        assert!(
            err.to_string().contains("disk full"),
            "after {left} bytes: {err}"
        );
    }
    write_geometry(&store, &mut FailingOutput { left: size }).unwrap();
}
