//! Reads on an object store keep requests few and together. Parallel reads request each
//! document once: reading every object of a level reads its
//! chunks in parallel, and the documents each chunk's first read needs (the level's
//! `vertex_fragments`, `link_fragments` and attribute group documents, the `__shard_*`
//! listing of a group whose chunks lack a blob) are read by one thread while the others
//! wait, not by every thread at once. Checked on every reference fixture through a store
//! that answers as an object store does (each request after a delay, many in flight), where
//! the threads' first reads overlap. And an unsharded ZV 0.9 grid's cells are read ahead all
//! at once on such a store (a box query's arrays together), and not on a local one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::blob::Blobs;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::metadata::Layout;
use zv_format::reader::ZvStore;
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::Geometry;
use zv_store_fs::FilesystemStore;
use zv_testkit::env::fixtures_dir;
use zv_testkit::fixtures::fixture_stores;
use zv_testkit::store::CountingStore;

/// The entries of `list` that occur more than once, with their counts.
fn repeated(list: &[String]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for k in list {
        *counts.entry(k.clone()).or_insert(0) += 1;
    }
    counts.retain(|_, n| *n > 1);
    counts
}

#[test]
fn reading_every_object_requests_each_key_and_listing_once() {
    let names = fixture_stores();
    assert_eq!(names.len(), 7, "the 7 reference fixtures");
    let mut objects_read = 0;
    for name in &names {
        let inner: Arc<dyn Store> =
            Arc::new(FilesystemStore::new(fixtures_dir().join(name)).unwrap());
        let counting = Arc::new(CountingStore::with_latency(
            inner,
            Duration::from_millis(3),
            16,
        ));
        let store = ZvStore::open(counting.clone()).unwrap();
        for &l in store.level_ids() {
            let level = store.level(l).unwrap();
            let Some(n) = level.num_objects().unwrap() else {
                continue;
            };
            counting.reset();
            let ids: Vec<u64> = (0..n).collect();
            let objects = level.objects(&ids).unwrap();
            assert_eq!(objects.len() as u64, n, "{name} level {l}");
            objects_read += objects.len();
            let reads = counting.reads();
            assert!(!reads.is_empty(), "{name} level {l}: nothing read");
            assert_eq!(
                repeated(&reads),
                BTreeMap::new(),
                "{name} level {l}: keys read more than once"
            );
            assert_eq!(
                repeated(&counting.listings()),
                BTreeMap::new(),
                "{name} level {l}: prefixes listed more than once"
            );
        }
    }
    assert!(objects_read > 0);
}

#[test]
fn blobs_missing_at_once_list_their_group_once() {
    // each miss in a ZV 0.7 array group looks for the blob in the group's `__shard_*` packs:
    // threads that miss at once wait for one listing of the group
    let inner: Arc<dyn Store> =
        Arc::new(FilesystemStore::new(fixtures_dir().join("mesh_basic.zarr")).unwrap());
    let counting = Arc::new(CountingStore::with_latency(
        inner,
        Duration::from_millis(3),
        16,
    ));
    let blobs = Blobs::new(counting.clone());
    let found: usize = std::thread::scope(|s| {
        let handles: Vec<_> = (0..12)
            .map(|i| {
                let blobs = &blobs;
                s.spawn(move || {
                    let path = format!("0/links/0/9.9.{i}");
                    usize::from(blobs.read_bytes(&path).unwrap().is_some())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(found, 0);
    assert_eq!(counting.listings(), vec!["0/links/0/".to_owned()]);
    assert_eq!(counting.reads().len(), 12, "{:?}", counting.reads());
}

/// A ZV 0.9 point cloud with a float attribute `w`, one stored object per cell (unsharded),
/// in memory.
fn unsharded_points() -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![100.0; 3]);
    opts.bounds = Some([vec![0.0; 3], vec![400.0; 3]]);
    let n = 2000;
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let coords: Vec<f64> = (0..n * 3)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 399.0
        })
        .collect();
    let w: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let rows = AttributeRows::from_f64s(DataType::Float32, 1, &w).unwrap();
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "w".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows,
                present: None,
            },
            channel_names: None,
        },
    );
    let mut writer = ZvWriter::create(store.clone(), opts).unwrap();
    writer.add_vertices_flat(&coords, None, &attrs).unwrap();
    writer.finish().unwrap();
    store
}

/// A counting store over `inner` that wants `concurrency` requests in flight (as an object
/// store does when more than 1; else a local store).
fn counting_store(inner: Arc<dyn Store>, concurrency: usize) -> Arc<CountingStore> {
    Arc::new(if concurrency > 1 {
        CountingStore::with_latency(inner, Duration::ZERO, concurrency)
    } else {
        CountingStore::new(inner)
    })
}

#[test]
fn unsharded_cells_are_read_ahead_at_once_on_a_store_that_wants_requests_in_flight() {
    zv_format::link_plugins();
    let store = unsharded_points();
    let (lo, hi) = ([50.0, 50.0, 50.0], [250.0, 250.0, 250.0]);
    let mut seen: Vec<(Vec<Option<Vec<u8>>>, usize)> = Vec::new();
    // an object store's many requests in flight, then a local store's one
    for concurrency in [16, 1] {
        let counting = counting_store(store.clone(), concurrency);
        let zv = ZvStore::open(counting.clone()).unwrap();
        let level = zv.level(0).unwrap();
        let keys = level.chunk_keys().unwrap();
        assert!(keys.len() >= 27, "{} chunks", keys.len());
        let blobs = Blobs::with_layout(counting.clone(), Layout::ChunkGrid);
        let grid = blobs.grid("0/vertex_attributes/w").unwrap().unwrap();
        counting.reset();
        grid.prefetch(&keys).unwrap();
        let ahead = counting.reads();
        counting.reset();
        let cells: Vec<Option<Vec<u8>>> = keys.iter().map(|k| grid.cell(k).unwrap()).collect();
        let later = counting.reads();
        if concurrency > 1 {
            // every cell read ahead, once; none read again when asked
            assert_eq!(ahead.len(), keys.len(), "{ahead:?}");
            assert_eq!(repeated(&ahead), BTreeMap::new());
            assert!(later.is_empty(), "{later:?}");
        } else {
            assert!(ahead.is_empty(), "{ahead:?}");
            assert_eq!(later.len(), keys.len(), "{later:?}");
        }
        assert!(cells.iter().all(Option::is_some));
        // a box query through a fresh open gives the same hits either way
        let zv = ZvStore::open(counting.clone()).unwrap();
        let hits = zv
            .level(0)
            .unwrap()
            .query_box_with(&lo, &hi, &["w"])
            .unwrap();
        seen.push((cells, hits.len()));
    }
    assert!(seen[0].1 > 0);
    assert_eq!(seen[0], seen[1]);
}

/// The documents `reads` requested, sorted.
fn documents(reads: &[String]) -> Vec<String> {
    let mut docs: Vec<String> = reads
        .iter()
        .filter(|k| k.ends_with("zarr.json"))
        .cloned()
        .collect();
    docs.sort();
    docs
}

#[test]
fn level_zero_documents_come_with_the_root_on_a_store_that_wants_requests_in_flight() {
    zv_format::link_plugins();
    let mut stores: Vec<(String, Arc<dyn Store>)> = fixture_stores()
        .iter()
        .map(|name| {
            let fs: Arc<dyn Store> =
                Arc::new(FilesystemStore::new(fixtures_dir().join(name)).unwrap());
            (name.clone(), fs)
        })
        .collect();
    stores.push(("ZV 0.9 points".into(), unsharded_points()));
    let level_zero = vec!["0/vertices/zarr.json".to_owned(), "0/zarr.json".to_owned()];
    for (name, inner) in stores {
        let mut seen = Vec::new();
        // an object store's many requests in flight, then a local store's one
        for concurrency in [16, 1] {
            let counting = counting_store(inner.clone(), concurrency);
            let zv = ZvStore::open(counting.clone()).unwrap();
            let at_open = documents(&counting.reads());
            counting.reset();
            let level = zv.level(0).unwrap();
            let at_level = documents(&counting.reads());
            if concurrency > 1 {
                // read with the root, served to the level: opening it requests nothing
                let want = [level_zero.clone(), vec!["zarr.json".to_owned()]].concat();
                assert_eq!(at_open, want, "{name}");
                assert!(at_level.is_empty(), "{name}: {at_level:?}");
            } else {
                assert_eq!(at_open, ["zarr.json"], "{name}");
                assert_eq!(at_level, level_zero, "{name}");
            }
            // served once: opening the level again requests its document again (a ZV 0.9
            // store keeps its opened vertices grid, so that document is not read again)
            counting.reset();
            let again = zv.level(0).unwrap();
            let docs = documents(&counting.reads());
            assert!(docs.contains(&"0/zarr.json".to_owned()), "{name}: {docs:?}");
            assert!(
                docs.iter().all(|d| level_zero.contains(d)),
                "{name}: {docs:?}"
            );
            assert_eq!(again.attributes(), level.attributes(), "{name}");
            let points = level.points(&[]).unwrap();
            seen.push((
                level.attributes().clone(),
                level.vertex_type(),
                points.positions.len(),
                points.positions.as_flat().to_vec(),
            ));
        }
        assert!(seen[0].2 > 0, "{name}");
        assert_eq!(seen[0], seen[1], "{name}: the same level either way");
    }
}
