//! Parallel reads request each document once: reading every object of a level reads its
//! chunks in parallel, and the documents each chunk's first read needs (the level's
//! `vertex_fragments`, `link_fragments` and attribute group documents, the `__shard_*`
//! listing of a group whose chunks lack a blob) are read by one thread while the others
//! wait, not by every thread at once. Checked on every reference fixture through a store
//! that answers as an object store does (each request after a delay, many in flight), where
//! the threads' first reads overlap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use zv_core::store::Store;
use zv_format::blob::Blobs;
use zv_format::reader::ZvStore;
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
