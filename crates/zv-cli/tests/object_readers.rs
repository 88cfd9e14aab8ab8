//! Other readers of the stores `zv import` writes straight to `s3://` (a `moto` server on
//! 127.0.0.1, started by each test):
//!
//! - the 0.7.0 reference, after the store is downloaded with boto3, reads exactly the content
//!   zv reads from the bucket (the shared `dump_store.py`, compared with `compare_dumps.py
//!   --scope logical`), for a point cloud with objects, streamlines and a mesh;
//! - zarr-vectors 0.9.2, opening the bucket through its own object-store backend (obstore),
//!   reads a store zv wrote there with `--format-version 0.9` as it reads the same import
//!   written to a directory (`tests/interop/zv09_dump.py`; the directory reading is what the
//!   0.9 tests check against zv).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::{Command, Output};

use zv_testkit::env::{
    fixtures_dir, reference_python, shared_dir, workspace_root, zv09_python, zv09_s3_python,
};
use zv_testkit::servers::S3Server;

fn zv(server: &S3Server, args: &[&str]) -> Vec<u8> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zv"));
    for (k, v) in server.options() {
        command.arg("--storage-option").arg(format!("{k}={v}"));
    }
    ok(
        command.args(args).output().unwrap(),
        &format!("zv {args:?}"),
    )
}

fn ok(out: Output, what: &str) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The geometry document of fixture `name`'s writer arguments, written into `dir`.
fn document(dir: &Path, name: &str) -> String {
    let input = fixtures_dir().join(format!("{name}.input.json"));
    let input: serde_json::Value = serde_json::from_slice(&std::fs::read(input).unwrap()).unwrap();
    let doc = zv_testkit::fixtures::input_to_geometry(&input);
    let path = dir.join(format!("{name}.geo.json"));
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// The reference's reading of `store` (dump_store.py) compared with zv's dump `zv_dump`
/// (compare_dumps.py, logical scope): the comparison's exit status and text.
const COMPARE: &str = r#"
import contextlib, importlib.util, io, sys
def load(name):
    spec = importlib.util.spec_from_file_location(name, f"{sys.argv[1]}/{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
dump_store, compare_dumps = load("dump_store"), load("compare_dumps")
store, zv_dump, ref_dump = sys.argv[2:5]
dump_store.main([store, "-o", ref_dump])
out = io.StringIO()
with contextlib.redirect_stdout(out):
    status = compare_dumps.main([zv_dump, ref_dump, "--scope", "logical", "--max", "50"])
print(out.getvalue())
sys.exit(status)
"#;

#[test]
fn the_reference_reads_stores_zv_wrote_to_s3_after_download() {
    let server = S3Server::start();
    server.create_bucket("written");
    let dir = tempfile::tempdir().unwrap();
    for name in ["points_basic", "streamlines_basic", "mesh_basic"] {
        let doc = document(dir.path(), name);
        let url = format!("s3://written/{name}.zv");
        zv(&server, &["import", &doc, &url, "--format-version", "0.7"]);
        let zv_dump = dir.path().join(format!("{name}.zv.json"));
        let dumped = zv(&server, &["dump", &url]);
        assert!(dumped.len() > 100, "{name}: zv dumps something");
        std::fs::write(&zv_dump, dumped).unwrap();

        let local = dir.path().join(format!("{name}.zarr"));
        server.download_dir("written", &format!("{name}.zv"), &local);
        assert!(
            local.join("zarr.json").is_file(),
            "{name}: the root came down"
        );
        let out = Command::new(reference_python())
            .args(["-c", COMPARE])
            .arg(shared_dir().join("tools"))
            .arg(&local)
            .arg(&zv_dump)
            .arg(dir.path().join(format!("{name}.ref.json")))
            .output()
            .unwrap();
        ok(out, &format!("{name}: the reference's reading equals zv's"));
    }
}

/// zarr-vectors 0.9.2's reading of `store` (zv09_dump.py) with `python`, configured for
/// `server` by the environment (obstore reads `AWS_*`).
fn zv09_dump(python: &Path, server: &S3Server, store: &str) -> serde_json::Value {
    let out = Command::new(python)
        .arg(workspace_root().join("tests/interop/zv09_dump.py"))
        .arg(store)
        .env("AWS_ENDPOINT_URL", server.endpoint())
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ACCESS_KEY_ID", "zv-test")
        .env("AWS_SECRET_ACCESS_KEY", "zv-test")
        .output()
        .unwrap();
    let text = ok(out, &format!("zv09_dump.py {store}"));
    serde_json::from_slice(&text).unwrap()
}

#[test]
fn zarr_vectors_0_9_2_reads_a_0_9_store_zv_wrote_to_s3() {
    let server = S3Server::start();
    server.create_bucket("written09");
    let dir = tempfile::tempdir().unwrap();
    for name in ["points_basic", "streamlines_basic"] {
        let doc = document(dir.path(), name);
        let url = format!("s3://written09/{name}.zv");
        let local = dir.path().join(format!("{name}.zarr"));
        let local = local.to_str().unwrap();
        for target in [url.as_str(), local] {
            zv(
                &server,
                &["import", &doc, target, "--format-version", "0.9"],
            );
        }
        let from_bucket = zv09_dump(&zv09_s3_python(), &server, &url);
        let from_dir = zv09_dump(&zv09_python(), &server, local);
        let objects = &from_dir["levels"]["0"]["objects"];
        assert!(
            objects.as_array().is_some_and(|o| !o.is_empty())
                || objects.as_object().is_some_and(|o| !o.is_empty()),
            "{name}: 0.9.2 reads objects: {from_dir}"
        );
        assert_eq!(from_bucket, from_dir, "{name}");
    }
}
