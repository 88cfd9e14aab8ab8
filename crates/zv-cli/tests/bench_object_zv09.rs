//! `zv bench object --peers zv09`: zv and zarr-vectors 0.9.2 (from PyPI, reading and writing
//! through obstore) on the same S3 server (moto on 127.0.0.1) behind the counting proxy, on the
//! same inputs in the same run, each with the same `--shard-shape`; every figure has its time,
//! its request count and its floor, and the 0.9.2/zv ratios are reported (each read checked
//! by the benchmark against the count of its inputs). Tiny workloads and no delay: this
//! checks the comparison runs and counts requests, not the speed (the figures come from
//! `scripts/bench-object.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

use serde_json::Value;
use zv_testkit::env::{workspace_root, zv09_s3_python};
use zv_testkit::servers::{FaultProxy, S3Server};

#[test]
fn the_object_benchmark_compares_zv_and_zarr_vectors_on_one_s3_server() {
    let server = S3Server::start();
    server.create_bucket("bench");
    // zarr-vectors 0.9.2 opens a connection per request of a read, all at once: the proxy
    // serves 128 at a time (the figures are checked for presence, not compared with a bucket)
    let proxy = FaultProxy::start_limited(server.endpoint(), 0, 128);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("figures.json");
    let python = zv09_s3_python();
    let script = workspace_root().join("scripts/bench/peer.py");
    // zv (object_store), obstore and boto3 read the same variables
    let status = Command::new(env!("CARGO_BIN_EXE_zv"))
        .env("AWS_ENDPOINT_URL", proxy.endpoint())
        .env("AWS_ENDPOINT", proxy.endpoint())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_DEFAULT_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "zv-test")
        .env("AWS_SECRET_ACCESS_KEY", "zv-test")
        .args(["bench", "object", "--url", "s3://bench/run", "--proxy"])
        .arg(proxy.endpoint())
        // the proxy adds no delay; the floors are computed for 20 ms
        .args([
            "--delay-ms",
            "20",
            "--points",
            "300",
            "--objects",
            "10",
            "--reps",
            "1",
        ])
        .args(["--shard-shape", "5,5,5", "--peers", "zv09", "--zv09-python"])
        .arg(&python)
        .arg("--peer-script")
        .arg(&script)
        .arg("--dir")
        .arg(dir.path().join("inputs"))
        .arg("--json")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["shard_shape"], serde_json::json!([5, 5, 5]));
    let figures = [
        "write points",
        "read all points",
        "1% box",
        "read all objects",
    ];
    for name in figures {
        for figure in [name.to_owned(), format!("zv09: {name}")] {
            let f = &doc["figures"][&figure];
            assert!(f["min"].as_f64().is_some_and(|s| s > 0.0), "{figure}: {f}");
            assert!(
                f["requests"].as_u64().is_some_and(|n| n > 0),
                "{figure}: {f}"
            );
            assert!(
                f["floor"].as_f64().is_some_and(|s| s > 0.0),
                "{figure}: {f}"
            );
        }
        let ratio = &doc["peer_over_zv"][format!("zv09: {name}")];
        assert!(ratio["min"].as_f64().is_some(), "{name}: {ratio}");
    }
    // sharded, zv reads a whole level with a request per shard and array, 0.9.2 a request or
    // two per cell: counts, not times
    let requests = |f: &str| doc["figures"][f]["requests"].as_u64().unwrap();
    assert!(
        requests("read all points") * 10 < requests("zv09: read all points"),
        "{doc}"
    );
}
