//! A writer claims the store it creates (`.zv-writer`, created conditionally) before writing
//! anything: a second writer of the same store is refused at `create`, naming the key, and
//! the claim is let go after the commit, or when a writer is dropped without one.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::key::StoreKey;
use zv_core::store::Store;
use zv_format::writer::{WriterOptions, ZvWriter, LOCK_KEY};
use zv_format::{Geometry, ZvStore};

fn options() -> WriterOptions {
    WriterOptions::new(Geometry::PointCloud, vec![10.0; 3])
}

fn held(store: &Arc<dyn Store>) -> bool {
    store
        .get(&StoreKey::new(LOCK_KEY).unwrap())
        .unwrap()
        .is_some()
}

fn xs(store: Arc<dyn Store>) -> Vec<f64> {
    let hits = ZvStore::open(store)
        .unwrap()
        .level(0)
        .unwrap()
        .query_box(&[0.0; 3], &[100.0; 3])
        .unwrap();
    (0..hits.positions.len())
        .map(|i| hits.positions.row(i)[0])
        .collect()
}

#[test]
fn a_second_writer_is_refused_until_the_first_lets_go() {
    zv_format::link_plugins();
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut first = ZvWriter::create(store.clone(), options()).unwrap();
    assert!(held(&store));
    let err = ZvWriter::create(store.clone(), options())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(LOCK_KEY) && err.contains("another writer"),
        "{err}"
    );
    first
        .add_vertices_flat(&[1.0, 1.0, 1.0], None, &BTreeMap::new())
        .unwrap();
    first.finish().unwrap();
    assert!(!held(&store), "the claim outlived the commit");
    // now the store exists: a new writer is refused for that, and leaves no claim behind
    let err = ZvWriter::create(store.clone(), options())
        .unwrap_err()
        .to_string();
    assert!(err.contains("root zarr.json"), "{err}");
    assert!(!held(&store));
    assert_eq!(xs(store), vec![1.0]);
}

#[test]
fn a_writer_dropped_or_failing_lets_go_of_its_claim() {
    zv_format::link_plugins();
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut w = ZvWriter::create(store.clone(), options()).unwrap();
    w.add_vertices_flat(&[2.0, 2.0, 2.0], None, &BTreeMap::new())
        .unwrap();
    drop(w);
    assert!(!held(&store));
    // a commit that fails (a skeleton's edges that are no tree) lets go too
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::Skeleton, vec![10.0; 3]),
    )
    .unwrap();
    w.add_vertices_flat(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0], None, &BTreeMap::new())
        .unwrap();
    w.add_edges(&[[0, 1], [1, 0]], &BTreeMap::new()).unwrap();
    assert!(w.finish().is_err());
    assert!(!held(&store));
    // and the store can be written
    let mut w = ZvWriter::create(store.clone(), options()).unwrap();
    w.add_vertices_flat(&[3.0, 3.0, 3.0], None, &BTreeMap::new())
        .unwrap();
    w.finish().unwrap();
    assert_eq!(xs(store), vec![3.0]);
}

#[test]
fn a_claim_left_by_a_writer_that_died_is_named() {
    zv_format::link_plugins();
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let w = ZvWriter::create(store.clone(), options()).unwrap();
    // a process that dies runs no destructor
    std::mem::forget(w);
    let err = ZvWriter::create(store.clone(), options())
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("delete `{LOCK_KEY}`")), "{err}");
    // the store never opens as ZV meanwhile
    assert!(ZvStore::open(store.clone()).is_err());
    store.delete(&StoreKey::new(LOCK_KEY).unwrap()).unwrap();
    assert!(ZvWriter::create(store, options()).is_ok());
}
