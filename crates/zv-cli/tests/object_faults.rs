//! `zv import` to `s3://` when the server side fails: a fault proxy
//! (`tests/interop/fault_proxy.py`) in front of a `moto` server on 127.0.0.1 drops the
//! connection in the middle of a blob's PUT. The import fails naming the key, and the
//! bucket holds no store that opens as ZV: the root `zarr.json`, written last, is absent.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::{Command, Output};

use zv_testkit::env::fixtures_dir;
use zv_testkit::servers::{Fault, FaultProxy, S3Server};

fn zv(options: &[(String, String)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zv"));
    for (k, v) in options {
        command.arg("--storage-option").arg(format!("{k}={v}"));
    }
    command.args(args).output().unwrap()
}

#[test]
fn a_connection_dropped_mid_put_leaves_no_store_that_opens() {
    let server = S3Server::start();
    server.create_bucket("dropped");
    let proxy = FaultProxy::start(server.endpoint(), 0);
    let mut options = proxy.options(&server);
    options.push(("max_retries".into(), "1".into()));
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("streamlines_basic.input.json");
    let input: serde_json::Value = serde_json::from_slice(&std::fs::read(input).unwrap()).unwrap();
    let doc = dir.path().join("doc.json");
    let geometry = zv_testkit::fixtures::input_to_geometry(&input);
    std::fs::write(&doc, serde_json::to_vec(&geometry).unwrap()).unwrap();
    let url = "s3://dropped/lines.zv";

    // every try of every PUT of a vertex blob is cut off mid-body
    proxy.inject("PUT", "/0/vertices/", 1, 0, Fault::Drop);
    let out = zv(&options, &["import", doc.to_str().unwrap(), url]);
    assert!(!out.status.success(), "the import failed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("0/vertices/"),
        "the error names the key: {stderr}"
    );
    assert!(proxy.stats().faults >= 2, "{:?}", proxy.stats());

    let keys = server.keys("dropped", "lines.zv");
    assert!(
        !keys.contains(&"lines.zv/zarr.json".to_owned()),
        "no root zarr.json: {keys:?}"
    );
    let info = zv(&options, &["info", url]);
    assert!(!info.status.success(), "zv info opens nothing at {url}");

    // with the faults gone, the same import succeeds (into a fresh prefix) and opens
    proxy.clear();
    let url = "s3://dropped/again.zv";
    let out = zv(&options, &["import", doc.to_str().unwrap(), url]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(zv(&options, &["info", url]).status.success());
}

/// Through a proxy that delays every request, a write and a read of a store of 64 chunks
/// keep many requests in flight (the store's `concurrency`, default 128), not one per core.
#[test]
fn reads_and_writes_keep_many_requests_in_flight() {
    use std::sync::Arc;
    use zv_format::writer::{WriterOptions, ZvWriter};
    use zv_format::{Geometry, ZvStore};

    let server = S3Server::start();
    server.create_bucket("inflight");
    let proxy = FaultProxy::start(server.endpoint(), 20);
    zv_format::link_plugins();
    let options: zv_store_object::Options = proxy.options(&server).into_iter().collect();
    let store: Arc<dyn zv_core::store::Store> =
        Arc::new(zv_store_object::ObjectStore::open("s3://inflight/p.zv", &options).unwrap());
    assert_eq!(store.concurrency(), zv_core::store::DEFAULT_CONCURRENCY);
    // 4 x 4 x 4 chunks of 250, 8 points in each
    let mut coords = Vec::new();
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                for p in 0..8 {
                    let c = [i, j, k].map(|x| f64::from(x) * 250.0 + 10.0 + f64::from(p));
                    coords.extend(c);
                }
            }
        }
    }
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![250.0; 3]);
    opts.bounds = Some([vec![0.0; 3], vec![1000.0; 3]]);
    let mut w = ZvWriter::create(Arc::clone(&store), opts).unwrap();
    w.add_vertices_flat(&coords, None, &std::collections::BTreeMap::new())
        .unwrap();
    w.finish().unwrap();
    let wrote = proxy.stats();
    assert!(wrote.peak_in_flight >= 16, "write: {wrote:?}");

    proxy.reset();
    let level = ZvStore::open(Arc::clone(&store)).unwrap().level(0).unwrap();
    assert_eq!(level.points(&[]).unwrap().positions.len(), 64 * 8);
    let read = proxy.stats();
    assert!(read.peak_in_flight >= 16, "read: {read:?}");

    // concurrency=1: the caller's threads only
    let mut one = options.clone();
    one.insert("concurrency".into(), "1".into());
    let store = zv_store_object::ObjectStore::open("s3://inflight/p.zv", &one).unwrap();
    assert_eq!(zv_core::store::ReadableStore::concurrency(&store), 1);
    let bad = zv_store_object::ObjectStore::open("s3://inflight/p.zv", &{
        let mut o = options.clone();
        o.insert("concurrency".into(), "0".into());
        o
    });
    assert!(bad.unwrap_err().to_string().contains("concurrency=0"));
}
