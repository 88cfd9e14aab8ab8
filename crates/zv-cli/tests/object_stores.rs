//! `zv` on stores in an S3 bucket (a `moto` server on 127.0.0.1, started by each test): every
//! reference fixture, uploaded with boto3, dumps from its `s3://` URL exactly as from its
//! path; a store `zv import` writes straight to `s3://` has the keys and content of the same
//! import into a directory, for zv and for zarr-python 3 (through s3fs); and of two writers
//! creating one store, the second is refused before it writes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::process::{Command, Output};
use std::sync::Arc;

use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_testkit::env::{fixtures_dir, s3_python, workspace_root};
use zv_testkit::fixtures::fixture_stores;
use zv_testkit::servers::S3Server;

mod common;

use common::object::{local_keys, ok, zv_with};

/// `zv --storage-option …(the server's)… ARGS`.
fn zv(server: &S3Server, args: &[&str]) -> Output {
    zv_with(&server.options(), args)
}

#[test]
fn every_fixture_dumps_from_s3_exactly_as_from_its_path() {
    let server = S3Server::start();
    server.create_bucket("fixtures");
    let names = fixture_stores();
    assert_eq!(names.len(), 7, "the 7 reference fixtures");
    for name in &names {
        let local = fixtures_dir().join(name);
        server.upload_dir("fixtures", name, &local);
        let want = ok(zv(&server, &["dump", local.to_str().unwrap()]), name);
        let url = format!("s3://fixtures/{name}");
        let got = ok(zv(&server, &["dump", &url]), &url);
        assert!(
            want == got,
            "{url} dumps differently from {}",
            local.display()
        );
    }
}

/// zarr-python 3's reading of every array at `location` (module doc of the script).
fn zarr_python_reads(server: &S3Server, location: &str) -> serde_json::Value {
    let script = workspace_root().join("tests/interop/zarr_s3_read.py");
    let out = Command::new(s3_python())
        .arg(script)
        .arg(location)
        .arg(server.endpoint())
        .output()
        .unwrap();
    let text = ok(out, &format!("zarr_s3_read.py {location}"));
    serde_json::from_slice(&text).unwrap()
}

#[test]
fn a_store_written_to_s3_is_the_store_written_to_a_directory() {
    let server = S3Server::start();
    server.create_bucket("written");
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("streamlines_basic.input.json");
    let input: serde_json::Value = serde_json::from_slice(&std::fs::read(input).unwrap()).unwrap();
    let doc_path = dir.path().join("doc.json");
    let doc = zv_testkit::fixtures::input_to_geometry(&input);
    std::fs::write(&doc_path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let doc_arg = doc_path.to_str().unwrap();
    let local = dir.path().join("local.zv");
    let url = "s3://written/streamlines.zv";
    ok(
        zv(&server, &["import", doc_arg, local.to_str().unwrap()]),
        "import to a directory",
    );
    ok(zv(&server, &["import", doc_arg, url]), "import to s3://");

    // the same keys, and zv reads the same content from both
    let keys: Vec<String> = server
        .keys("written", "streamlines.zv")
        .iter()
        .map(|k| k["streamlines.zv/".len()..].to_owned())
        .collect();
    assert_eq!(keys, local_keys(&local));
    let want = ok(
        zv(&server, &["dump", local.to_str().unwrap()]),
        "dump local",
    );
    assert!(!want.is_empty());
    assert!(ok(zv(&server, &["dump", url]), "dump s3://") == want);
    let valid = zv(&server, &["validate", url]);
    assert!(valid.status.success(), "zv validate {url}");

    // zarr-python reads the same arrays with the same values from the bucket
    let from_s3 = zarr_python_reads(&server, url);
    let from_dir = zarr_python_reads(&server, local.to_str().unwrap());
    assert!(from_s3.as_object().is_some_and(|o| !o.is_empty()));
    assert_eq!(from_s3, from_dir);

    // a second import does not overwrite it unasked
    let again = zv(&server, &["import", doc_arg, url]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));
}

#[test]
fn of_two_writers_creating_one_s3_store_the_second_is_refused_before_it_writes() {
    let server = S3Server::start();
    server.create_bucket("race");
    zv_format::link_plugins();
    let options: zv_store_object::Options = server.options().into_iter().collect();
    let open = || -> Arc<dyn zv_core::store::Store> {
        Arc::new(zv_store_object::ObjectStore::open("s3://race/points.zv", &options).unwrap())
    };
    let writer = |store, x: f64| {
        let mut w = ZvWriter::create(
            store,
            WriterOptions::new(Geometry::PointCloud, vec![10.0; 3]),
        )?;
        w.add_vertices_flat(&[x, 1.0, 1.0, 2.0, 2.0, 2.0], None, &BTreeMap::new())
            .unwrap();
        Ok::<_, zv_format::Error>(w)
    };
    // while the first writes, the second is refused its claim on the store, before it
    // writes anything
    let first = writer(open(), 1.0).unwrap();
    let err = writer(open(), 5.0).unwrap_err().to_string();
    assert!(err.contains(zv_format::writer::LOCK_KEY), "{err}");
    first.finish().unwrap();
    // after the commit, a writer is refused because the store exists
    let err = writer(open(), 5.0).unwrap_err().to_string();
    assert!(err.contains("zarr.json"), "{err}");
    // a writer that does not claim the store (another implementation) committing first:
    // zv's writer stops before writing over its blobs
    let other = "s3://race/other.zv";
    let open_other = || -> Arc<dyn zv_core::store::Store> {
        Arc::new(zv_store_object::ObjectStore::open(other, &options).unwrap())
    };
    let late = writer(open_other(), 7.0).unwrap();
    let root = zv_core::key::StoreKey::new("zarr.json").unwrap();
    open_other()
        .set_new(
            &root,
            bytes::Bytes::from_static(b"{\"zarr_format\": 3, \"node_type\": \"group\"}"),
        )
        .unwrap();
    let err = late.finish().unwrap_err().to_string();
    assert!(err.contains("another writer committed"), "{err}");
    // the store is the first writer's, blobs included
    let store = ZvStore::open(open()).unwrap();
    let hits = store
        .level(0)
        .unwrap()
        .query_box(&[0.0; 3], &[10.0; 3])
        .unwrap();
    assert_eq!(hits.positions.len(), 2);
    assert!(hits.positions.contains(&[1.0, 1.0, 1.0]));
    assert!(!hits.positions.contains(&[5.0, 1.0, 1.0]));
}

#[test]
fn parts_written_to_s3_commit_to_the_store_of_one_import() {
    let server = S3Server::start();
    server.create_bucket("parts");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("points.csv");
    let mut text = String::from("x,y,z,intensity,object_id\n");
    for i in 0..2000u64 {
        let f = |k: u64| ((i * 7919 + k * 104_729) % 1000) as f64 / 10.0;
        text.push_str(&format!(
            "{},{},{},{},{}\n",
            f(1),
            f(2),
            f(3),
            f(4) / 100.0,
            i % 17
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let csv = csv.to_str().unwrap();
    let local = dir.path().join("local.zv");
    let chunk = ["--chunk-shape", "25,25,25"];
    let import = |store: &str, part: Option<&str>| {
        let mut a = vec!["import", csv, store];
        a.extend(chunk);
        if let Some(p) = part {
            a.extend(["--part", p]);
        }
        ok(zv(&server, &a), &format!("import {store} {part:?}"));
    };
    import(local.to_str().unwrap(), None);
    let url = "s3://parts/points.zv";
    import(url, Some("1/2"));
    assert!(
        !zv(&server, &["dump", url]).status.success(),
        "opens before the commit"
    );
    import(url, Some("0/2"));
    ok(zv(&server, &["commit", url]), "commit");
    let keys: Vec<String> = server
        .keys("parts", "points.zv")
        .iter()
        .map(|k| k["points.zv/".len()..].to_owned())
        .collect();
    assert_eq!(keys, local_keys(&local), "the plan and receipts are gone");
    let want = ok(
        zv(&server, &["dump", local.to_str().unwrap()]),
        "dump local",
    );
    assert!(ok(zv(&server, &["dump", url]), "dump s3://") == want);
}
