//! Faults injected by the server side: `tests/interop/fault_proxy.py` in front of a real S3
//! server (`moto`) on 127.0.0.1 answers chosen requests 503 or drops their connection
//! mid-body; the store retries transient failures and names the key of a final one; large
//! values go up in parts, and a part that fails for good leaves nothing stored.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_core::store::{ReadableStore, WritableStore};
use zv_store_object::{ObjectStore, Options};
use zv_testkit::servers::{Fault, FaultProxy, S3Server};

fn setup(bucket: &str) -> (S3Server, FaultProxy) {
    let server = S3Server::start();
    server.create_bucket(bucket);
    let proxy = FaultProxy::start(server.endpoint(), 0);
    (server, proxy)
}

fn open(server: &S3Server, proxy: &FaultProxy, url: &str, retries: u32) -> ObjectStore {
    let mut options: Options = proxy.options(server).into_iter().collect();
    options.insert("max_retries".into(), retries.to_string());
    ObjectStore::open(url, &options).unwrap()
}

#[test]
fn a_503_answered_once_is_retried_and_the_operation_succeeds() {
    let (server, proxy) = setup("zv-503");
    let store = open(&server, &proxy, "s3://zv-503/store.zv", 3);
    let key = StoreKey::new("0/vertices/0.0.0").unwrap();
    let value = Bytes::from(vec![7u8; 5000]);

    proxy.inject("PUT", "0/vertices/", 1, 1, Fault::Unavailable);
    store.set(&key, value.clone()).unwrap();
    let stats = proxy.stats();
    assert_eq!(stats.faults, 1, "{stats:?}");
    assert_eq!(stats.requests["PUT"], 2, "the 503 and the retry: {stats:?}");

    proxy.clear();
    proxy.reset();
    proxy.inject("GET", "0/vertices/", 1, 1, Fault::Unavailable);
    assert_eq!(store.get(&key).unwrap(), Some(value.clone()));
    let stats = proxy.stats();
    assert_eq!((stats.faults, stats.requests["GET"]), (1, 2), "{stats:?}");

    // what was stored is what an independent client sees
    assert_eq!(
        server.keys("zv-503", "store.zv"),
        vec!["store.zv/0/vertices/0.0.0".to_owned()]
    );
}

#[test]
fn a_connection_dropped_once_mid_put_is_retried() {
    let (server, proxy) = setup("zv-drop-once");
    let store = open(&server, &proxy, "s3://zv-drop-once/s.zv", 3);
    let key = StoreKey::new("a/b").unwrap();
    let value = Bytes::from(vec![1u8; 100_000]);
    proxy.inject("PUT", "a/b", 1, 1, Fault::Drop);
    store.set(&key, value.clone()).unwrap();
    let stats = proxy.stats();
    assert_eq!((stats.faults, stats.requests["PUT"]), (1, 2), "{stats:?}");
    assert_eq!(store.get(&key).unwrap(), Some(value));
}

#[test]
fn a_final_failure_names_the_key_and_the_status() {
    let (server, proxy) = setup("zv-final");
    let store = open(&server, &proxy, "s3://zv-final/s.zv", 1);
    let key = StoreKey::new("1/links/2.0.1").unwrap();

    proxy.inject("PUT", "1/links/", 1, 0, Fault::Unavailable);
    let err = store.set(&key, Bytes::from_static(b"x")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("1/links/2.0.1") && text.contains("503"),
        "{text}"
    );
    assert_eq!(proxy.stats().requests["PUT"], 2, "one try and one retry");

    proxy.clear();
    proxy.inject("PUT", "1/links/", 1, 0, Fault::Drop);
    let text = store
        .set(&key, Bytes::from_static(b"x"))
        .unwrap_err()
        .to_string();
    assert!(text.contains("1/links/2.0.1"), "{text}");
    assert!(server.keys("zv-final", "s.zv").is_empty(), "nothing stored");
}

/// A store whose values from 6 MiB go up in 5 MiB parts.
fn open_multipart(server: &S3Server, proxy: &FaultProxy, url: &str) -> ObjectStore {
    let mut options: Options = proxy.options(server).into_iter().collect();
    options.insert("max_retries".into(), "1".into());
    options.insert("multipart_threshold".into(), (6 << 20).to_string());
    options.insert("multipart_part_size".into(), (5 << 20).to_string());
    ObjectStore::open(url, &options).unwrap()
}

#[test]
fn large_values_go_up_in_parts_and_a_failed_part_stores_nothing() {
    let (server, proxy) = setup("zv-multipart");
    let store = open_multipart(&server, &proxy, "s3://zv-multipart/s.zv");
    let big = StoreKey::new("0/object_index/data/c/0").unwrap();
    let value = Bytes::from(
        (0..12u32 << 20)
            .map(|i| (i % 251) as u8)
            .collect::<Vec<u8>>(),
    );
    proxy.reset();
    store.set(&big, value.clone()).unwrap();
    let stats = proxy.stats();
    // the upload's start and completion, and 3 parts (5 + 5 + 2 MiB)
    assert_eq!(
        (stats.requests.get("POST"), stats.requests.get("PUT")),
        (Some(&2), Some(&3)),
        "{stats:?}"
    );
    assert_eq!(store.get(&big).unwrap(), Some(value.clone()));
    // a value under the threshold is one PUT
    proxy.reset();
    let small = StoreKey::new("zarr.json").unwrap();
    store.set(&small, Bytes::from(vec![b' '; 1 << 20])).unwrap();
    let stats = proxy.stats();
    assert_eq!(
        (stats.requests.get("PUT"), stats.requests.get("POST")),
        (Some(&1), None)
    );
    // a part that keeps failing: the error names the key, the upload is aborted, nothing is
    // stored under the key
    proxy.inject("PUT", "partNumber=2", 1, 0, Fault::Unavailable);
    let other = StoreKey::new("1/object_index/data/c/0").unwrap();
    let text = store.set(&other, value).unwrap_err().to_string();
    assert!(text.contains("1/object_index/data/c/0"), "{text}");
    assert!(
        !server
            .keys("zv-multipart", "s.zv")
            .iter()
            .any(|k| k.starts_with("s.zv/1/")),
        "{:?}",
        server.keys("zv-multipart", "s.zv")
    );
    // a part size under S3's smallest is refused when the store opens
    let mut options: Options = server.options().into_iter().collect();
    options.insert("multipart_part_size".into(), "1000".into());
    let e = ObjectStore::open("s3://zv-multipart/t.zv", &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("multipart_part_size=1000") && e.contains("5242880"),
        "{e}"
    );
}
