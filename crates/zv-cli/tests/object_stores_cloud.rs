//! `zv` on stores in the cloud emulators on 127.0.0.1, started by each test: Azure Blob
//! Storage (Azurite) and Google Cloud Storage (fake-gcs-server). Every reference fixture,
//! uploaded by another client, dumps from its `az://` and its `gs://` URL exactly as from its
//! path; a store `zv import` writes straight to `az://` has the keys and the dump of the same
//! import into a directory. (Not to `gs://`: the emulator refuses `object_store`'s XML API
//! writes — see zv-store-object's `tests/gcs.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;

use zv_testkit::env::fixtures_dir;
use zv_testkit::fixtures::fixture_stores;
use zv_testkit::servers::{AzuriteServer, GcsServer};

mod common;

use common::object::{local_keys, ok, zv_with as zv};

fn fixture_names() -> Vec<String> {
    let names = fixture_stores();
    assert_eq!(names.len(), 7, "the 7 reference fixtures");
    names
}

/// Every fixture, uploaded with `upload(name, dir)`, dumps from `{scheme}://{bucket}/NAME`
/// exactly as from its path.
fn every_fixture_dumps_as_from_its_path(
    options: &[(String, String)],
    bucket_url: &str,
    upload: impl Fn(&str, &Path),
) {
    for name in &fixture_names() {
        let local = fixtures_dir().join(name);
        upload(name, &local);
        let want = ok(zv(options, &["dump", local.to_str().unwrap()]), name);
        assert!(!want.is_empty());
        let url = format!("{bucket_url}/{name}");
        let got = ok(zv(options, &["dump", &url]), &url);
        assert!(
            want == got,
            "{url} dumps differently from {}",
            local.display()
        );
    }
}

#[test]
fn every_fixture_dumps_from_az_exactly_as_from_its_path() {
    let server = AzuriteServer::start();
    server.create_container("fixtures");
    every_fixture_dumps_as_from_its_path(&server.options(), "az://fixtures", |name, dir| {
        server.upload_dir("fixtures", name, dir);
    });
}

#[test]
fn every_fixture_dumps_from_gs_exactly_as_from_its_path() {
    let server = GcsServer::start();
    server.create_bucket("fixtures");
    every_fixture_dumps_as_from_its_path(&server.options(), "gs://fixtures", |name, dir| {
        server.upload_dir("fixtures", name, dir);
    });
}

/// `zv import` of the streamlines fixture's document with `extra` flags, to a directory and to
/// `az://written/NAME`: the same keys (listed by the Azure SDK), the same bytes (downloaded by
/// it), the same dump; `zv validate` passes; a second import is refused.
fn import_to_az_and_to_a_directory(server: &AzuriteServer, name: &str, extra: &[&str]) {
    let options = server.options();
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("streamlines_basic.input.json");
    let input: serde_json::Value = serde_json::from_slice(&std::fs::read(input).unwrap()).unwrap();
    let doc_path = dir.path().join("doc.json");
    let doc = zv_testkit::fixtures::input_to_geometry(&input);
    std::fs::write(&doc_path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let doc_arg = doc_path.to_str().unwrap();
    let local = dir.path().join("local.zv");
    let url = format!("az://written/{name}");
    let import = |to: &str| {
        let mut args = vec!["import", doc_arg, to];
        args.extend(extra);
        zv(&options, &args)
    };
    ok(import(local.to_str().unwrap()), "import to a directory");
    ok(import(&url), "import to az://");

    let keys: Vec<String> = server
        .keys("written", name)
        .iter()
        .map(|k| k[name.len() + 1..].to_owned())
        .collect();
    assert_eq!(keys, local_keys(&local), "{url}");
    let back = dir.path().join("back.zv");
    server.download_dir("written", name, &back);
    for key in &keys {
        assert!(
            std::fs::read(local.join(key)).unwrap() == std::fs::read(back.join(key)).unwrap(),
            "{url}: {key} differs"
        );
    }
    let want = ok(
        zv(&options, &["dump", local.to_str().unwrap()]),
        "dump local",
    );
    assert!(!want.is_empty());
    assert!(
        ok(zv(&options, &["dump", &url]), "dump az://") == want,
        "{url}"
    );
    let valid = zv(&options, &["validate", &url]);
    assert!(valid.status.success(), "zv validate {url}");

    // a second import does not overwrite it unasked
    let again = import(&url);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));
}

#[test]
fn a_store_imported_to_az_is_the_store_imported_to_a_directory() {
    let server = AzuriteServer::start();
    server.create_container("written");
    import_to_az_and_to_a_directory(&server, "streamlines.zv", &[]);
    // and with the chunk-grid arrays packed in shards
    let shards = ["--format-version", "0.9", "--shard-shape", "2,2,2"];
    import_to_az_and_to_a_directory(&server, "sharded.zv", &shards);
    let sharded = server.keys("written", "sharded.zv");
    assert!(
        sharded.len() < server.keys("written", "streamlines.zv").len(),
        "fewer objects in shards: {sharded:?}"
    );
}
