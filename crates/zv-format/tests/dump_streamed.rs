//! `dump_to` writes the bytes `serde_json` writes for `dump`'s document, pretty and compact:
//! the seven reference fixtures, and zv-written graph pyramids with objects, attributes and
//! groups in both layouts (every section, three levels). A failing output or a store that
//! fails halfway is an error, not a panic.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::key::StorePrefix;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::pyramid::{build_pyramid, PyramidOptions, Step};
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::{dump, Geometry, ZvStore};
use zv_store_fs::FilesystemStore;
use zv_store_mem::MemoryStore;
use zv_testkit::data::Rng;
use zv_testkit::env::fixtures_dir;
use zv_testkit::fault::FailingOutput;

/// Checks both forms of `store`'s streamed dump against its document; returns its size.
fn same_bytes(store: &ZvStore, name: &str) -> usize {
    let doc = dump::dump(store).unwrap();
    for pretty in [true, false] {
        let want = if pretty {
            serde_json::to_vec_pretty(&doc).unwrap()
        } else {
            serde_json::to_vec(&doc).unwrap()
        };
        let mut got = Vec::new();
        dump::dump_to(store, &mut got, pretty).unwrap();
        assert!(
            got == want,
            "{name} (pretty: {pretty}): streamed bytes differ"
        );
    }
    serde_json::to_vec(&doc).unwrap().len()
}

#[test]
fn fixtures_stream_as_their_documents() {
    zv_format::link_plugins();
    let names = zv_testkit::fixtures::fixture_stores();
    assert_eq!(names.len(), 7, "the 7 reference fixtures");
    for name in &names {
        let path = fixtures_dir().join(name);
        let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(path).unwrap());
        let store = ZvStore::open(store).unwrap();
        assert!(same_bytes(&store, name) > 1000, "{name}: a real dump");
    }
}

/// A graph of 3,000 vertices in 4 objects over 27 chunks, with a vertex attribute, an
/// object attribute and groups, and a three-level pyramid.
fn graph_pyramid(version: FormatVersion) -> ZvStore {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::Graph, vec![10.0; 3]).with_format_version(version);
    opts.bin_shape = Some(vec![2.5; 3]);
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let mut rng = Rng::new(5);
    let n = 3000u64;
    let coords: Vec<f64> = (0..3 * n).map(|_| rng.unit() * 30.0).collect();
    let objects: Vec<u64> = (0..n).map(|v| v % 4).collect();
    let weight: Vec<f64> = (0..n).map(|v| (v % 17) as f64).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "weight".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows: AttributeRows::from_f64s(DataType::Float32, 1, &weight).unwrap(),
                present: None,
            },
            channel_names: None,
        },
    );
    w.add_vertices_flat(&coords, Some(&objects), &attrs)
        .unwrap();
    let edges: Vec<[u64; 2]> = (0..2 * n)
        .map(|_| {
            let a = (rng.unit() * n as f64) as u64 % n;
            [a, (a + 4 * (1 + (rng.unit() * 20.0) as u64)) % n]
        })
        .collect();
    w.add_edges(&edges, &BTreeMap::new()).unwrap();
    let mut oattrs = BTreeMap::new();
    oattrs.insert(
        "score".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows: AttributeRows::from_f64s(DataType::Float64, 1, &[1.0, 2.0, 3.0, 4.0])
                    .unwrap(),
                present: None,
            },
            channel_names: None,
        },
    );
    w.set_object_attributes(oattrs);
    let mut groups = BTreeMap::new();
    groups.insert(0, vec![0, 2]);
    groups.insert(1, vec![1, 3]);
    w.set_groups(groups, BTreeMap::new());
    w.finish().unwrap();
    let steps = vec![Step::new(2, 1), Step::new(2, 1)];
    build_pyramid(store.clone(), &PyramidOptions::new(steps)).unwrap();
    ZvStore::open(store).unwrap()
}

#[test]
fn graph_pyramids_stream_as_their_documents() {
    for version in [FormatVersion::V0_7, FormatVersion::V0_9] {
        let store = graph_pyramid(version);
        assert_eq!(store.level_ids().len(), 3);
        let doc = dump::dump(&store).unwrap();
        let level0 = &doc["levels"]["0"];
        for section in ["objects", "links", "reader", "groups", "object_attributes"] {
            let s = &level0[section];
            assert!(
                !s.is_null() && s.as_object().is_none_or(|o| !o.is_empty()),
                "{version:?}: section {section} is empty: not a test of it"
            );
        }
        same_bytes(&store, &format!("{version:?}"));
    }
}

#[test]
fn failures_are_errors() {
    let store = graph_pyramid(FormatVersion::V0_9);
    for left in [0, 1, 100, 10_000] {
        let err = dump::dump_to(&store, &mut FailingOutput { left }, true).unwrap_err();
        assert!(err.to_string().contains("disk full"), "{err}");
    }
    // a store whose level 1 has lost a vertex cell: the dump stops with the error that
    // names it, after level 0 was written
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![10.0; 3]);
    opts.bin_shape = Some(vec![5.0; 3]);
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let coords: Vec<f64> = (0..300).map(|i| (i * 7 % 30) as f64 + 0.5).collect();
    w.add_vertices_flat(&coords, None, &BTreeMap::new())
        .unwrap();
    w.finish().unwrap();
    build_pyramid(store.clone(), &PyramidOptions::new(vec![Step::new(2, 1)])).unwrap();
    let cell = store
        .list_prefix(&StorePrefix::new("1/vertices/").unwrap())
        .unwrap()
        .into_iter()
        .find(|k| !k.as_str().ends_with("zarr.json"))
        .unwrap();
    store.delete(&cell).unwrap();
    let zv = ZvStore::open(store).unwrap();
    let want = dump::dump(&zv).unwrap_err().to_string();
    let mut out = Vec::new();
    let got = dump::dump_to(&zv, &mut out, true).unwrap_err().to_string();
    assert_eq!(got, want);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("\"levels\": {\n    \"0\": {"),
        "level 0 written first"
    );
}
