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
