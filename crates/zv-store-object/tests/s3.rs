//! The object store against a real S3 server on 127.0.0.1 (`moto`, started by the test): the
//! store conformance suite, a store at a bucket's root, conditional creation, errors
//! naming the key and the status, and opening by URL through the plugin registry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::WritableStore;
use zv_store_object::{ObjectStore, Options};
use zv_testkit::servers::S3Server;
use zv_testkit::store::{run_ops, StoreOp};

fn options(server: &S3Server) -> Options {
    server.options().into_iter().collect()
}

fn open(server: &S3Server, url: &str) -> ObjectStore {
    ObjectStore::open(url, &options(server)).unwrap()
}

#[test]
fn s3_store_conformance() {
    let server = S3Server::start();
    server.create_bucket("zv-conformance");
    let options = options(&server);
    let n = AtomicUsize::new(0);
    zv_testkit::store::check_store_cases("s3", 32, || {
        let i = n.fetch_add(1, Ordering::SeqCst);
        let url = format!("s3://zv-conformance/case-{i}/store.zv");
        Arc::new(ObjectStore::open(&url, &options).unwrap())
    });
    assert!(n.load(Ordering::SeqCst) > 32, "the suite made its stores");
}

#[test]
fn s3_store_at_the_bucket_root() {
    let server = S3Server::start();
    server.create_bucket("zv-root");
    let store = open(&server, "s3://zv-root");
    let set = |k: &str, v: &[u8]| StoreOp::Set(k.to_owned(), v.to_vec());
    let ops = vec![
        set("zarr.json", b"{}"),
        set("a/x", b"12345"),
        set("a/b/c/0", b""),
        set("b/c/y", &[7; 3000]),
        StoreOp::List,
        StoreOp::ListDir(String::new()),
        StoreOp::ListDir("a/".to_owned()),
        StoreOp::ListPrefix("a/b/".to_owned()),
        StoreOp::Get("b/c/y".to_owned()),
        StoreOp::DeletePrefix("a/".to_owned()),
        StoreOp::List,
        StoreOp::DeletePrefix(String::new()),
        StoreOp::List,
    ];
    run_ops(&store, &ops).unwrap();
    // what zv wrote is what an independent client sees
    store
        .set(&StoreKey::new("p/q").unwrap(), Bytes::from_static(b"v"))
        .unwrap();
    assert_eq!(server.keys("zv-root", "p"), vec!["p/q".to_owned()]);
}

/// Two writers (two clients, as two processes would be) creating the same key: the second
/// conditional PUT is refused by the server. (Racing them at the same instant is not tested:
/// moto checks `If-None-Match` and stores in two steps, so concurrent creates can both pass
/// there, while S3 itself decides atomically.)
#[test]
fn s3_conditional_create_refuses_the_second_writer() {
    let server = S3Server::start();
    server.create_bucket("zv-race");
    zv_testkit::store::check_two_writers_create(
        &open(&server, "s3://zv-race/store.zv"),
        &open(&server, "s3://zv-race/store.zv"),
    );
}

#[test]
fn s3_errors_name_the_key_and_the_status() {
    let server = S3Server::start();
    let mut opts = options(&server);
    opts.insert("max_retries".into(), "1".into());
    let store = ObjectStore::open("s3://no-such-bucket/x.zv", &opts).unwrap();
    let err = store
        .set(
            &StoreKey::new("0/vertices/zarr.json").unwrap(),
            Bytes::new(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("0/vertices/zarr.json"), "{err}");
    assert!(err.contains("404"), "{err}");

    let mut bad = options(&server);
    bad.insert("no_such_option".into(), "1".into());
    let err = ObjectStore::open("s3://b/x", &bad).unwrap_err().to_string();
    assert!(
        err.contains("no_such_option") && err.contains("s3://b/x"),
        "{err}"
    );
    let err = ObjectStore::open("ftp://b/x", &Options::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an object store URL"), "{err}");
}

#[test]
fn s3_urls_open_through_the_registry_with_default_options() {
    let server = S3Server::start();
    server.create_bucket("zv-registry");
    zv_store_object::link();
    zv_store_object::set_default_options(options(&server));
    let store = zv_core::plugin::open_store("s3://zv-registry/a/b.zv").unwrap();
    store
        .set(
            &StoreKey::new("zarr.json").unwrap(),
            Bytes::from_static(b"{}"),
        )
        .unwrap();
    assert_eq!(
        store.list_prefix(&StorePrefix::root()).unwrap(),
        vec![StoreKey::new("zarr.json").unwrap()]
    );
    assert_eq!(
        server.keys("zv-registry", "a/b.zv"),
        vec!["a/b.zv/zarr.json".to_owned()]
    );
}
