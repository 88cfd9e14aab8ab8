//! The object store against the Azure Blob Storage emulator on 127.0.0.1 (Azurite, started by
//! the test): the store conformance suite, a store at a container's root, conditional
//! creation, errors naming the key and the status, and opening by URL through the plugin
//! registry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{ByteRange, ListableStore, ReadableStore, StoreError, WritableStore};
use zv_store_object::{ObjectStore, Options, Service};
use zv_testkit::servers::AzuriteServer;
use zv_testkit::store::{run_ops, StoreOp};

fn options(server: &AzuriteServer) -> Options {
    server.options().into_iter().collect()
}

fn open(server: &AzuriteServer, url: &str) -> ObjectStore {
    ObjectStore::open(url, &options(server)).unwrap()
}

#[test]
fn azure_store_conformance() {
    let server = AzuriteServer::start();
    server.create_container("zv-conformance");
    let options = options(&server);
    let n = AtomicUsize::new(0);
    zv_testkit::store::check_store_cases("az", 32, || {
        let i = n.fetch_add(1, Ordering::SeqCst);
        let url = format!("az://zv-conformance/case-{i}/store.zv");
        Arc::new(ObjectStore::open(&url, &options).unwrap())
    });
    assert!(n.load(Ordering::SeqCst) > 32, "the suite made its stores");
}

#[test]
fn azure_store_at_the_container_root() {
    let server = AzuriteServer::start();
    server.create_container("zv-root");
    let store = open(&server, "az://zv-root");
    assert_eq!(store.service(), Service::Azure);
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
    // what zv wrote is what an independent client (the Azure SDK) sees, and the reverse
    store
        .set(&StoreKey::new("p/q").unwrap(), Bytes::from_static(b"v"))
        .unwrap();
    assert_eq!(server.keys("zv-root", "p"), vec!["p/q".to_owned()]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("s/t")).unwrap();
    std::fs::write(dir.path().join("s/t/u"), b"from the SDK").unwrap();
    server.upload_dir("zv-root", "", dir.path());
    assert_eq!(
        store
            .get(&StoreKey::new("s/t/u").unwrap())
            .unwrap()
            .as_deref(),
        Some(&b"from the SDK"[..])
    );
}

/// Azure's `Range` header has no suffix form, and `object_store` refuses to send one there:
/// a suffix range (the sharding codec's read of a shard's index) is read from the start,
/// after asking the value's size.
#[test]
fn azure_suffix_ranges_read_the_end_of_the_value() {
    let server = AzuriteServer::start();
    server.create_container("zv-suffix");
    let store = open(&server, "az://zv-suffix/s.zv");
    let key = StoreKey::new("0/vertices/c/0").unwrap();
    let value: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    store.set(&key, Bytes::from(value.clone())).unwrap();
    for n in [0usize, 1, 16, 4999, 5000] {
        let got = store.get_range(&key, ByteRange::Suffix(n as u64)).unwrap();
        assert_eq!(got.as_deref(), Some(&value[5000 - n..]), "last {n} bytes");
    }
    let err = store.get_range(&key, ByteRange::Suffix(5001)).unwrap_err();
    assert!(matches!(err, StoreError::InvalidRange { .. }), "{err}");
    let missing = StoreKey::new("0/vertices/c/1").unwrap();
    assert_eq!(
        store.get_range(&missing, ByteRange::Suffix(4)).unwrap(),
        None
    );
}

/// Two writers (two clients, as two processes would be) creating the same key: the second
/// conditional PUT (`If-None-Match: *`) is refused by the emulator with 409, which
/// `object_store` reports as "already exists".
#[test]
fn azure_conditional_create_refuses_the_second_writer() {
    let server = AzuriteServer::start();
    server.create_container("zv-race");
    zv_testkit::store::check_two_writers_create(
        &open(&server, "az://zv-race/store.zv"),
        &open(&server, "az://zv-race/store.zv"),
    );
}

#[test]
fn azure_errors_name_the_key_and_the_status() {
    let server = AzuriteServer::start();
    let mut opts = options(&server);
    opts.insert("max_retries".into(), "1".into());
    let store = ObjectStore::open("az://no-such-container/x.zv", &opts).unwrap();
    let err = store
        .set(
            &StoreKey::new("0/vertices/zarr.json").unwrap(),
            Bytes::new(),
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("0/vertices/zarr.json"), "{err}");
    assert!(err.contains("404"), "{err}");
    let err = store
        .list_prefix(&StorePrefix::new("0/").unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("0/") && err.contains("404"), "{err}");

    // a wrong key is refused by the emulator, and said so
    let mut wrong = options(&server);
    wrong.insert(
        "azure_storage_account_key".into(),
        "d3Jvbmcga2V5IGZvciB0aGUgdGVzdA==".into(),
    );
    wrong.insert("max_retries".into(), "0".into());
    let store = ObjectStore::open("az://any/x.zv", &wrong).unwrap();
    let err = store
        .get(&StoreKey::new("zarr.json").unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("zarr.json") && err.contains("403"), "{err}");

    let mut bad = options(&server);
    bad.insert("no_such_option".into(), "1".into());
    let err = ObjectStore::open("az://b/x", &bad).unwrap_err().to_string();
    assert!(
        err.contains("no_such_option") && err.contains("az://b/x"),
        "{err}"
    );
}

#[test]
fn azure_urls_open_through_the_registry_with_default_options() {
    let server = AzuriteServer::start();
    server.create_container("zv-registry");
    zv_store_object::link();
    zv_store_object::set_default_options(options(&server));
    let store = zv_core::plugin::open_store("az://zv-registry/a/b.zv").unwrap();
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
