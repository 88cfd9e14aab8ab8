//! Fault injection: for every k, the k-th `set` (or `sync`) of a write fails, and the k-th
//! `get` (or `list`) of a read fails, with EIO, ENOSPC or EACCES. Every failure is an error
//! naming the key that failed, a failed write leaves no root `zarr.json` (nothing opens as a ZV
//! store), and nothing panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::ErrorKind;
use std::sync::Arc;

use zv_core::key::StoreKey;
use zv_core::store::{ReadableStore, Store};
use zv_format::document::GeometryDocument;
use zv_format::ZvStore;
use zv_store_mem::MemoryStore;
use zv_testkit::fault::{FaultyStore, Operation};

const KINDS: [ErrorKind; 3] = [
    ErrorKind::Other,
    ErrorKind::StorageFull,
    ErrorKind::PermissionDenied,
];

fn document(fixture: &str) -> GeometryDocument {
    let path = zv_testkit::env::fixtures_dir().join(format!("{fixture}.input.json"));
    let input: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    GeometryDocument::from_value(&zv_testkit::fixtures::input_to_geometry(&input)).unwrap()
}

fn write(store: Arc<dyn Store>, doc: &GeometryDocument) -> zv_format::Result<()> {
    zv_format::import::write_document(store, doc, 100).map(|_| ())
}

fn root_exists(store: &MemoryStore) -> bool {
    store.exists(&StoreKey::new("zarr.json").unwrap()).unwrap()
}

fn assert_names_key(err: &dyn std::fmt::Display, key: &str, what: &str) {
    let text = err.to_string();
    assert!(
        text.contains(key),
        "{what}: error does not name `{key}`: {text}"
    );
}

fn read_everything(store: Arc<dyn Store>) -> zv_format::Result<()> {
    let zv = ZvStore::open(store)?;
    zv_format::dump::dump(&zv)?;
    zv_format::export::export_geometry(&zv)?;
    Ok(())
}

#[test]
fn every_failed_set_or_sync_of_a_write_is_an_error_and_commits_nothing() {
    let mut runs = 0;
    for fixture in ["graph_basic", "streamlines_basic", "points_basic"] {
        let doc = document(fixture);
        for operation in [Operation::Set, Operation::Sync] {
            let counting = FaultyStore::new(
                Arc::new(MemoryStore::new()),
                operation,
                usize::MAX,
                ErrorKind::Other,
            );
            let counting = Arc::new(counting);
            write(counting.clone(), &doc).unwrap();
            let total = counting.count();
            assert!(total > 0, "{fixture}: no {operation:?}");
            for k in 0..total {
                let inner = Arc::new(MemoryStore::new());
                let faulty = Arc::new(FaultyStore::new(
                    inner.clone(),
                    operation,
                    k,
                    KINDS[k % KINDS.len()],
                ));
                let err = write(faulty.clone(), &doc).expect_err(&format!(
                    "{fixture}: failing {operation:?} #{k} went unnoticed"
                ));
                let key = faulty.failed_key().unwrap();
                if !key.is_empty() {
                    assert_names_key(&err, &key, fixture);
                }
                // the root document is written after every other key and after a sync: a
                // failure anywhere before it leaves nothing that opens as ZV, and a failure
                // of the root's own set or of the last sync is reported
                if operation == Operation::Set || k + 1 < total {
                    assert!(
                        !root_exists(&inner),
                        "{fixture}: {operation:?} #{k}: root written"
                    );
                }
                if !root_exists(&inner) {
                    assert!(ZvStore::open(inner.clone()).is_err());
                }
                runs += 1;
            }
        }
    }
    eprintln!("{runs} failed writes");
}

#[test]
fn every_failed_get_or_list_of_a_read_is_an_error_naming_the_key() {
    let mut runs = 0;
    for fixture in [
        "graph_basic",
        "streamlines_basic",
        "points_basic",
        "mesh_basic",
    ] {
        let doc = document(fixture);
        let inner: Arc<dyn Store> = Arc::new(MemoryStore::new());
        write(inner.clone(), &doc).unwrap();
        for operation in [Operation::Get, Operation::List] {
            let counting = Arc::new(FaultyStore::new(
                inner.clone(),
                operation,
                usize::MAX,
                ErrorKind::Other,
            ));
            read_everything(counting.clone()).unwrap();
            let total = counting.count();
            for k in 0..total {
                let faulty = Arc::new(FaultyStore::new(
                    inner.clone(),
                    operation,
                    k,
                    KINDS[k % KINDS.len()],
                ));
                let result = read_everything(faulty.clone());
                // Level caches filled by racing threads may read a key twice, so a read can
                // make fewer operations than the counting run: a fault that never fired
                // cannot be noticed, and is not counted as a run.
                let Some(key) = faulty.failed_key() else {
                    continue;
                };
                let Err(err) = result else {
                    panic!("{fixture}: failing {operation:?} #{k} (of `{key}`) went unnoticed")
                };
                if !key.is_empty() {
                    assert_names_key(&err, &key, fixture);
                }
                runs += 1;
            }
        }
    }
    eprintln!("{runs} failed reads");
}
