//! Good stores validate at level 5 with no error: every reference fixture, the fixtures
//! exported and re-imported by zv, and random documents of every geometry (2–4 dimensions,
//! bins, attributes, codecs) written by zv's writer; `zv validate` exits 0 on them and
//! `zv info` agrees with each fixture's expected content.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;
use std::sync::Arc;
use zv_format::writer::FormatVersion;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestRunner};
use serde_json::Value;
use zv_testkit::env::fixtures_dir;

const FIXTURES: [&str; 7] = [
    "graph_basic",
    "mesh_basic",
    "points_basic",
    "points_binned",
    "pyramid_points",
    "skeleton_basic",
    "streamlines_basic",
];

fn zv(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

fn errors(report: &zv_format::validate::Report) -> Vec<String> {
    report.errors().map(ToString::to_string).collect()
}

#[test]
fn every_fixture_validates_at_level_5_and_the_command_exits_0() {
    for name in FIXTURES {
        let path = fixtures_dir().join(format!("{name}.zarr"));
        let report = zv_format::validate::validate_url(path.to_str().unwrap(), 5).unwrap();
        assert!(report.is_valid(), "{name}: {report}");
        assert_eq!(report.checked_level, 5);
        let out = zv(&["validate", path.to_str().unwrap(), "--json"]);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["valid"], true, "{name}");
        assert_eq!(doc["errors"], 0, "{name}");
    }
}

#[test]
fn fixtures_exported_and_reimported_by_zv_validate() {
    let dir = tempfile::tempdir().unwrap();
    let mut written = 0;
    for name in FIXTURES {
        let src = fixtures_dir().join(format!("{name}.zarr"));
        let doc = dir.path().join(format!("{name}.json"));
        let store = dir.path().join(format!("{name}.zarr"));
        let out = zv(&["export", src.to_str().unwrap(), "-o", doc.to_str().unwrap()]);
        assert!(out.status.success(), "{name}");
        let out = zv(&[
            "import",
            "--format-version",
            "0.7",
            doc.to_str().unwrap(),
            store.to_str().unwrap(),
        ]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        written += 1;
        let out = zv(&["validate", store.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    assert_eq!(written, FIXTURES.len());
}

#[test]
fn random_documents_written_by_zv_validate_at_level_5() {
    let cases: u32 = std::env::var("ZV_VALIDATE_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(48);
    let mut runner = TestRunner::new(Config::default());
    let strategy = zv_testkit_geometry::strategy::geometry_document();
    let mut geometries = std::collections::BTreeSet::new();
    for i in 0..cases {
        let doc_json = strategy.new_tree(&mut runner).unwrap().current();
        let doc = zv_format::document::GeometryDocument::from_value(&doc_json).unwrap();
        let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
        zv_format::import::write_document_in(store.clone(), &doc, 7, FormatVersion::V0_7).unwrap();
        geometries.insert(doc.geometry.name().to_owned());
        let report = zv_format::validate::validate(store, 5);
        assert!(
            report.is_valid(),
            "case {i}: {:?}\n{doc_json}",
            errors(&report)
        );
    }
    assert!(geometries.len() >= 5, "{geometries:?}");
}

#[test]
fn info_agrees_with_each_fixtures_expected_content() {
    for name in FIXTURES {
        let path = fixtures_dir().join(format!("{name}.zarr"));
        let out = zv(&["info", path.to_str().unwrap(), "--json"]);
        assert!(out.status.success(), "{name}");
        let info: Value = serde_json::from_slice(&out.stdout).unwrap();
        let expected: Value = serde_json::from_slice(
            &std::fs::read(fixtures_dir().join(format!("{name}.expected.json"))).unwrap(),
        )
        .unwrap();
        let root = &expected["root_metadata"];
        assert_eq!(info["bounds"], root["bounds"], "{name}");
        assert_eq!(info["chunk_shape"], root["chunk_shape"], "{name}");
        assert_eq!(info["geometry_types"], root["geometry_types"], "{name}");
        assert_eq!(info["level_ids"], expected["level_ids"], "{name}");
        for (id, level) in expected["levels"].as_object().unwrap() {
            let got = &info["levels"][id];
            let chunks = level["chunk_keys"].as_array().unwrap().len();
            assert_eq!(got["chunks"], chunks, "{name} level {id}");
            assert_eq!(
                got["vertices"], level["canonical"]["vertex_count"],
                "{name} level {id}"
            );
            let objects = level["object_index"]["manifest_blocks"]
                .as_array()
                .map(Vec::len);
            assert_eq!(
                got["objects"].as_u64(),
                objects.map(|n| n as u64),
                "{name} level {id}"
            );
            let groups = level["groups"].as_array().map(Vec::len);
            assert_eq!(
                got["groups"].as_u64(),
                groups.map(|n| n as u64),
                "{name} level {id}"
            );
            for (attr, a) in level["vertex_attribute_info"].as_object().unwrap() {
                assert_eq!(
                    got["attributes"][format!("vertex/{attr}")]["dtype"],
                    a["dtype"],
                    "{name} level {id} {attr}"
                );
            }
            let occupancy = &got["vertices_per_chunk"];
            assert!(occupancy["min"].as_u64() <= occupancy["max"].as_u64());
            assert!(got["arrays"]["vertices"]["files"].as_u64().unwrap() >= chunks as u64);
        }
    }
}
