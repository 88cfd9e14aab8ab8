//! `zv migrate` beyond the fixtures (`migrate.rs`): zv's 0.7 line stores (random documents)
//! migrated to 0.9 are read by zarr-vectors 0.9.2 with the content zv reads from the 0.7
//! store, and 0.9.2's `read_lines` gives the document's lines; a skeleton with link
//! attributes is refused; the command's `--json` summary, exit status 1 and nothing left at
//! OUT for a refused or failed migration, 2 for a bad `--to`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use common::migrate::{empty, migrate, migrate_ok, zv};
use common::zv09::{compare, make_with, zv09_dump, zv_dump};
use common::zv09_docs::import;
use serde_json::Value;
use zv_testkit::env::{fixtures_dir, zv09_python};

/// Line documents of the geometry strategy written by zv in 0.7.
const LINE_DOCUMENTS: usize = 8;

#[test]
fn zv_0_7_lines_migrated_to_0_9_are_read_by_zarr_vectors_0_9_2_with_their_content() {
    let dir = tempfile::tempdir().unwrap();
    let mut docs = zv_testkit_geometry::strategy::v09_documents(&["line"], LINE_DOCUMENTS);
    let mut stores = Vec::new();
    for (name, doc) in &mut docs {
        // every object-attribute row present: 0.7 stores zeros in absent rows, 0.9 its fill
        // value (writing absent rows in 0.9 is tested by zv09_writes.rs)
        for a in doc["object_attributes"]
            .as_object_mut()
            .into_iter()
            .flatten()
        {
            for v in a.1["values"].as_array_mut().into_iter().flatten() {
                if v.is_null() {
                    *v = serde_json::json!(1);
                }
            }
        }
        let v7 = import(dir.path(), name, doc, "0.7");
        let v9 = dir.path().join(format!("{name}.zarr"));
        migrate_ok(&v7, &v9, "0.9");
        zv_dump(&v7, &dir.path().join(format!("{name}.07.json")));
        stores.push(v9);
    }
    zv09_dump(&stores, dir.path(), false);
    let mut failures = Vec::new();
    for (name, doc) in &docs {
        let expected = dir.path().join(format!("{name}.expected.json"));
        // the 0.7 store has no line reader section, and 0.9.2's write_lines lists
        // `vertex_attributes` among the arrays; read_lines is compared with the document
        let ignore = "^/omitted|^/root_metadata/zv_version|/root_metadata/format_capabilities\
                      |/reader/|/level_metadata/arrays_present";
        let zv07 = dir.path().join(format!("{name}.07.json"));
        if let Some(report) = compare(&zv09_python(), &zv07, &expected, ignore, false) {
            failures.push(format!("{name}: 0.9.2 reads other content:\n{report}"));
        }
        let read: Value = serde_json::from_slice(&std::fs::read(&expected).unwrap()).unwrap();
        let reader = &read["levels"]["0"]["reader"];
        if reader["function"] != "read_lines" || reader["endpoints"] != doc["polylines"] {
            failures.push(format!(
                "{name}: read_lines gives {reader}, the document {}",
                doc["polylines"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_skeleton_with_link_attributes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store) in make_with(&dir.path().join("src"), 7, &["skeleton"], Some("skeleton")) {
        let out = dir.path().join(format!("{name}.07.zarr"));
        let o = migrate(&store, &out, "0.7");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains("0/link_attributes/kind/zarr.json"),
            "{name}: {err}"
        );
        assert!(empty(&out), "{name}: something was left at OUT");
    }
}

#[test]
fn the_command_reports_refuses_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = fixtures_dir().join("points_basic.zarr");
    // --json: the summary on stdout
    let out = dir.path().join("p9.zarr");
    let o = zv(&[
        "migrate".as_ref(),
        fixture.as_os_str(),
        out.as_os_str(),
        "--to".as_ref(),
        "0.9".as_ref(),
        "--json".as_ref(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["from"], "0.7.0");
    assert_eq!(summary["to"], "0.9.2");
    assert_eq!(summary["geometry"], "point_cloud");
    assert_eq!(summary["vertices"], 300);
    assert_eq!(summary["objects"], 12);
    // OUT not empty: refused, OUT untouched
    let o = migrate(&fixture, &out, "0.9");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not empty"), "{err}");
    assert!(out.join("zarr.json").exists());
    // a store already in the target layout
    let again = dir.path().join("again.zarr");
    let o = migrate(&out, &again, "0.9");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("already ZV 0.9.2"), "{err}");
    assert!(empty(&again));
    // a bad --to is a usage error
    let o = migrate(&fixture, &again, "0.8");
    assert_eq!(o.status.code(), Some(2));
    assert!(empty(&again));
    // a failure inside the writer (a present object-attribute value equal to 0.9's absent
    // value): nothing left at OUT
    let doc = serde_json::json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10], "vertices": [[1, 1], [15, 2]], "object_ids": [0, 1],
        "object_attributes": {"x": {"dtype": "int32", "values": [3, i32::MIN]}}});
    let v7 = import(dir.path(), "sentinel", &doc, "0.7");
    let failed = dir.path().join("sentinel9.zarr");
    let o = migrate(&v7, &failed, "0.9");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("absent"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(empty(&failed), "a failed migration left files at OUT");
}
