//! The object store over a plain HTTP server on 127.0.0.1 (started by the test): the read
//! side of the store conformance suite, with the store at the server's root and below a path;
//! writes refused as read-only and listings with a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{ListableStore, StoreError, WritableStore};
use zv_store_object::{ObjectStore, Options};
use zv_testkit::servers::HttpServer;
use zv_testkit::store::{check_read_only_store, sample_values, write_values};

#[test]
fn http_store_read_only_conformance() {
    let dir = tempfile::tempdir().unwrap();
    let values = sample_values();
    write_values(dir.path(), &values);
    write_values(&dir.path().join("deeper/store.zv"), &values);
    let server = HttpServer::start(dir.path());
    let root = ObjectStore::open(server.url(), &Options::new()).unwrap();
    check_read_only_store("http", &root, &values);
    let url = format!("{}/deeper/store.zv", server.url());
    let below = ObjectStore::open(&url, &Options::new()).unwrap();
    check_read_only_store("http below a path", &below, &values);
}

#[test]
fn http_store_refuses_writes_and_listings_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let server = HttpServer::start(dir.path());
    let store = ObjectStore::open(server.url(), &Options::new()).unwrap();
    let key = StoreKey::new("zarr.json").unwrap();
    let err = store.set(&key, Bytes::new()).unwrap_err();
    assert!(matches!(err, StoreError::ReadOnly { .. }), "{err}");
    let err = store.list_prefix(&StorePrefix::root()).unwrap_err();
    assert!(matches!(err, StoreError::Unsupported { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("HTTP has no listing") && text.contains(server.url()),
        "{text}"
    );
}
