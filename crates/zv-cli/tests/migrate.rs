//! `zv migrate` between the ZV 0.7 and 0.9 layouts:
//!
//! - every 0.7 reference fixture migrated to 0.9 is read by zarr-vectors 0.9.2's own readers
//!   (`tests/interop/zv09_dump.py`) with the fixture's content (its `expected.json`, the 0.7.0
//!   reference's reading, link attributes included), less the keys a ruling lists in
//!   [`RULED_09`]; what the migration cannot carry (a pyramid of streamlines) gives the clear
//!   error and leaves nothing at OUT;
//! - random stores zarr-vectors 0.9.2 writes (every geometry, default and sharded layout)
//!   migrated to 0.7 are read by the 0.7.0 reference (the shared `dump_store.py`) with the
//!   content 0.9.2 reads, the graphs' link attributes included (a skeleton's are refused);
//! - 0.7 → 0.9 → 0.7 gives the fixture's content as zv reads it.
//!
//! Lines, refused skeletons and the command itself: `migrate_cli.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::migrate::{empty, migrate, migrate_ok, zv};
use common::zv09::{
    compare, cross_level_pairs, ignores, make_with, present_object_attributes_agree, read_json,
    zv09_cross_level, zv09_dump, zv_dump,
};
use serde_json::Value;
use zv_testkit::env::{fixtures_dir, reference_python, shared_dir, workspace_root, zv09_python};

/// The fixtures the migration to 0.9 carries.
const MIGRATED: &[&str] = &[
    "points_basic",
    "points_binned",
    "streamlines_basic",
    "graph_basic",
    "skeleton_basic",
    "mesh_basic",
    "pyramid_points",
];

/// Keys where 0.9.2's reading of a migrated fixture differs from the fixture's expected
/// content by a ruling (`docs/format-decisions.md`), with the fixtures concerned.
const RULED_09: &[(&str, &str, &str)] = &[
    (
        "*",
        "^/omitted",
        "what 0.9.2 stores that zv's dump has no model for (zv09_dump.py)",
    ),
    (
        "*",
        "^/root_metadata/zv_version",
        "the migrated store is 0.9.2",
    ),
    (
        "*",
        "/root_metadata/format_capabilities",
        "Capabilities: zv stamps `fragment_index`; the 0.7.0 reference never does",
    ),
    (
        "skeleton_basic",
        "/reader/|/edges_xyz_sorted|/objects$|/unassigned_links",
        "ZV 0.9 stores, 0.9.2's reading order: 0.9.2 reads skeleton parents per fragment, \
         the 0.7.0 reference level-globally; zv's own reading is compared by the round trip",
    ),
    (
        "graph_basic",
        "/reader/edges$",
        "ZV 0.9 stores, 0.9.2's reading order: read_graph lists the edges by offsets segment \
         and cell; the edges themselves are compared by `canonical/edges_xyz_sorted`",
    ),
    (
        "graph_basic",
        "/cross_chunk_link_attributes/weight$",
        "Missing link attribute values: the 0.7.0 reference stores no values for the edges \
         that cross chunks (the fixture has none); the migration stores them as NaN, and \
         0.9.2 reads one NaN per cross-chunk record",
    ),
    (
        "*",
        "/cross_level_links",
        "not in the fixture's dump: compared with zv's reading by `cross_level_pairs`",
    ),
    (
        "pyramid_points",
        "/object_attributes/[^/]+/(values|present_mask)",
        "Migrating, pyramids: 0.9 marks an absent object-attribute row by its fill value \
         (NaN, not the 0 the 0.7 reference stores) and reports no mask when every row is \
         present; the present values and the masks are compared by \
         `present_object_attributes_agree`",
    ),
    (
        "mesh_basic",
        "/reader/faces$",
        "ZV 0.9 stores, 0.9.2's reading order: read_mesh lists the faces by offsets segment \
         and cell; the faces themselves are compared by `canonical/faces_xyz_sorted`",
    ),
];

/// Rewrites each cross-chunk link attribute of the dump `path` given with its dtype
/// (`{"dtype": …, "values": […]}`, as zv's dump and `zv09_dump.py` give it) as its bare
/// values, as the 0.7.0 reference's `dump_store.py` gives it.
fn bare_cross_chunk_values(path: &Path) {
    let mut d: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    for level in d["levels"].as_object_mut().unwrap().values_mut() {
        let Some(attrs) = level["cross_chunk_link_attributes"].as_object_mut() else {
            continue;
        };
        for per_delta in attrs.values_mut().filter_map(Value::as_object_mut) {
            for v in per_delta.values_mut() {
                if let Some(values) = v.get("values").cloned() {
                    *v = values;
                }
            }
        }
    }
    std::fs::write(path, d.to_string()).unwrap();
}

/// The number of values of `graph_basic`'s link attribute `weight` on the cross-chunk
/// records in the dump `path` (bare or with their dtype), each of which must be NaN, the
/// missing value of a float link attribute.
fn missing_cross_chunk_weights(path: &Path) -> usize {
    let d: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let v = &d["levels"]["0"]["cross_chunk_link_attributes"]["weight"]["0"];
    let values = v
        .get("values")
        .unwrap_or(v)
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(values.iter().all(|x| x == "NaN"), "{values:?}");
    values.len()
}

/// The number of cross-chunk records of level 0 in the dump `path` (0.7).
fn cross_chunk_records(path: &Path) -> usize {
    let d: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let records = &d["levels"]["0"]["cross_chunk_links"]["0"]["records"];
    records.as_array().map_or(0, Vec::len)
}

/// Whether `dir` holds nothing (or does not exist).

#[test]
fn fixtures_migrated_to_0_9_are_read_by_zarr_vectors_0_9_2_with_their_content() {
    migrated_fixtures_read_by_0_9_2(None);
}

#[test]
fn fixtures_migrated_to_sharded_0_9_are_read_by_zarr_vectors_0_9_2_with_their_content() {
    migrated_fixtures_read_by_0_9_2(Some(2));
}

/// Every fixture of [`MIGRATED`] migrated to 0.9 (with `--shard-shape S,…,S` when `shard`
/// is `Some(S)`) is read by zarr-vectors 0.9.2 with the fixture's content.
fn migrated_fixtures_read_by_0_9_2(shard: Option<u64>) {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = Vec::new();
    for name in MIGRATED {
        let out = dir.path().join(format!("{name}.zarr"));
        let from = fixtures_dir().join(format!("{name}.zarr"));
        match shard {
            None => migrate_ok(&from, &out, "0.9"),
            Some(s) => {
                let root: Value =
                    serde_json::from_slice(&std::fs::read(from.join("zarr.json")).unwrap())
                        .unwrap();
                let rank = root["attributes"]["zarr_vectors"]["chunk_shape"]
                    .as_array()
                    .unwrap()
                    .len();
                let shape = vec![s.to_string(); rank].join(",");
                let o = zv(&[
                    "migrate".as_ref(),
                    from.as_os_str(),
                    out.as_os_str(),
                    "--to".as_ref(),
                    "0.9".as_ref(),
                    "--shard-shape".as_ref(),
                    shape.as_ref(),
                    "--quiet".as_ref(),
                ]);
                assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                let vertices: Value = serde_json::from_slice(
                    &std::fs::read(out.join("0/vertices/zarr.json")).unwrap(),
                )
                .unwrap();
                assert_eq!(vertices["codecs"][0]["name"], "sharding_indexed", "{name}");
            }
        }
        let root: Value =
            serde_json::from_slice(&std::fs::read(out.join("zarr.json")).unwrap()).unwrap();
        assert_eq!(
            root["attributes"]["zarr_vectors"]["zv_version"], "0.9.2",
            "{name}"
        );
        stores.push(out);
    }
    zv09_dump(&stores, dir.path(), true);
    let mut failures = Vec::new();
    for name in MIGRATED {
        let expected = fixtures_dir().join(format!("{name}.expected.json"));
        let actual = dir.path().join(format!("{name}.expected.json"));
        bare_cross_chunk_values(&actual);
        if *name == "graph_basic" {
            // see RULED_09: 0.9.2 reads NaN for every edge the fixture has no value for
            assert_eq!(
                missing_cross_chunk_weights(&actual),
                cross_chunk_records(&expected)
            );
        }
        let ignore = ignores(RULED_09, name);
        if let Some(report) = compare(&zv09_python(), &expected, &actual, &ignore, true) {
            failures.push(format!("{name}: 0.9.2 reads other content:\n{report}"));
        }
        let (fixture, read) = (read_json(&expected), read_json(&actual));
        if let Some(report) = present_object_attributes_agree(&fixture, &read) {
            failures.push(format!("{name}: object attributes: {report}"));
        }
        // every level's cross-level pairs as 0.9.2 reads them are the fixture's as zv reads them
        let zv_pairs = cross_level_pairs(&fixtures_dir().join(format!("{name}.zarr")));
        if zv_pairs != zv09_cross_level(&read) {
            failures.push(format!(
                "{name}: 0.9.2 reads other cross-level pairs than the fixture's: {zv_pairs} vs {}",
                zv09_cross_level(&read)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_pyramid_the_migration_cannot_carry_gives_a_clear_error_and_leaves_nothing() {
    // every fixture migrates; a pyramid of streamlines (zv migrates point-cloud pyramids
    // only) is refused before anything is written
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("streamlines.zarr");
    common::copy_tree(&fixtures_dir().join("streamlines_basic.zarr"), &store);
    let s = store.to_str().unwrap();
    common::zv_success(&[
        "pyramid",
        s,
        "--levels",
        "2",
        "--chunk-scale",
        "2",
        "--quiet",
    ]);
    let out = dir.path().join("out.zarr");
    let o = migrate(&store, &out, "0.9");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("1/zarr.json") && err.contains("point-cloud pyramids"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(empty(&out), "something was left at OUT");
}

#[test]
fn migrating_to_0_9_and_back_gives_the_fixture_content() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for name in MIGRATED {
        let fixture = fixtures_dir().join(format!("{name}.zarr"));
        let v9 = dir.path().join(format!("{name}.09.zarr"));
        let v7 = dir.path().join(format!("{name}.07.zarr"));
        migrate_ok(&fixture, &v9, "0.9");
        migrate_ok(&v9, &v7, "0.7");
        let (before, after) = (
            dir.path().join(format!("{name}.before.json")),
            dir.path().join(format!("{name}.after.json")),
        );
        zv_dump(&fixture, &before);
        zv_dump(&v7, &after);
        // a skeleton's rows follow a depth-first order of the vertex order the writer is
        // given: compared through the order-independent `canonical` view, as the import
        // round trip of the fixtures is
        // a mesh's faces (a graph's edges) are read from 0.9 in its layout's order (see
        // RULED_09), and written back to 0.7 in that order: compared through
        // `canonical/faces_xyz_sorted` (`edges_xyz_sorted`)
        // the fixture has no values for the edges that cross chunks, the round trip one NaN
        // per cross-chunk record (see RULED_09): checked below
        let ignore = match *name {
            "skeleton_basic" => "/root_metadata/format_capabilities|/objects|/reader",
            "mesh_basic" => "/root_metadata/format_capabilities|/reader/faces$",
            "graph_basic" => {
                "/root_metadata/format_capabilities|/reader/edges$\
                 |/cross_chunk_link_attributes/weight$"
            }
            // 0.9 keeps no mask of all ones (see RULED_09): compared below
            "pyramid_points" => {
                "/root_metadata/format_capabilities|/object_attributes/[^/]+/present_mask"
            }
            _ => "/root_metadata/format_capabilities",
        };
        if *name == "graph_basic" {
            assert_eq!(missing_cross_chunk_weights(&before), 0);
            assert_eq!(
                missing_cross_chunk_weights(&after),
                cross_chunk_records(&before)
            );
        }
        if let Some(report) =
            present_object_attributes_agree(&read_json(&before), &read_json(&after))
        {
            failures.push(format!("{name}: object attributes: {report}"));
        }
        if let Some(report) = compare(&zv09_python(), &before, &after, ignore, true) {
            failures.push(format!(
                "{name}: 0.7 → 0.9 → 0.7 changed the content:\n{report}"
            ));
        }
        let pairs = cross_level_pairs(&fixture);
        for (store, what) in [(&v9, "0.9"), (&v7, "0.7 again")] {
            if cross_level_pairs(store) != pairs {
                failures.push(format!(
                    "{name}: in {what}, zv reads other cross-level pairs"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The geometries zarr-vectors 0.9.2 writes.
const READ: &[&str] = &[
    "point_cloud",
    "polyline",
    "streamline",
    "graph",
    "skeleton",
    "mesh",
    "line",
];

/// Keys where the 0.7.0 reference's reading of a migrated 0.9.2 store differs from 0.9.2's
/// reading of the source by a ruling, with the stores (geometry prefix) concerned.
const RULED_07: &[(&str, &str, &str)] = &[
    (
        "*",
        "^/omitted",
        "what 0.9.2 stores that zv's dump has no model for",
    ),
    (
        "*",
        "/cross_level_links",
        "0.9.2's cross-level pairs (none in these stores), not in the reference's dump",
    ),
    (
        "*",
        "^/root_metadata/zv_version",
        "the migrated store is 0.7.0",
    ),
    (
        "*",
        "/root_metadata/format_capabilities",
        "Capabilities: zv stamps `fragment_index`; 0.9.2 stamps none",
    ),
    (
        "graph",
        "/reader/edges$",
        "ZV 0.9 stores, 0.9.2's reading order: by offsets segment and cell in 0.9.2, intra-chunk \
         rows then cross-chunk records in the 0.7.0 reference; the edges themselves are \
         compared by `canonical/edges_xyz_sorted`",
    ),
    (
        "mesh",
        "/reader/faces$",
        "as for graphs, by `canonical/faces_xyz_sorted`",
    ),
    (
        "skeleton",
        "/reader/|/edges_xyz_sorted|/objects$|/unassigned_links",
        "ZV 0.9 stores, 0.9.2's reading order: per-fragment parents in 0.9.2, level-global \
         ones in the 0.7.0 reference",
    ),
    (
        "line",
        "/reader/|/level_metadata/arrays_present",
        "the 0.7.0 reference has no line reader (0.9.2's read_lines is compared by \
         `zv09_reads.rs`), and 0.9.2's write_lines lists `vertex_attributes` among the arrays",
    ),
];

/// 0.9 object ids may be sparse (0.9.2's sharded stores); the 0.7 copy holds ids
/// `0..max + 1`, the ids 0.9 does not store being empty objects with absent attribute rows
/// (`docs/format-decisions.md`, "Migrating between 0.7 and 0.9"). Keeps, in the reference's
/// dump `actual`, the objects and object-attribute rows of the ids the 0.9.2 dump `expected`
/// lists, after checking that every id dropped is an empty object with absent rows.
fn keep_stored_ids(expected: &Path, actual: &Path) {
    let e: Value = serde_json::from_slice(&std::fs::read(expected).unwrap()).unwrap();
    let mut a: Value = serde_json::from_slice(&std::fs::read(actual).unwrap()).unwrap();
    let Some(levels) = a["levels"].as_object_mut() else {
        return;
    };
    for (l, level) in levels.iter_mut() {
        let ids: Vec<u64> = e["levels"][l]["objects"]
            .as_array()
            .map(|o| o.iter().filter_map(|x| x["id"].as_u64()).collect())
            .unwrap_or_default();
        let Some(objects) = level["objects"].as_array_mut() else {
            continue;
        };
        if objects.len() == ids.len() {
            continue;
        }
        for o in objects.iter() {
            if !ids.contains(&o["id"].as_u64().unwrap()) {
                assert_eq!(o["vertex_count"], 0, "object {} is not empty", o["id"]);
            }
        }
        objects.retain(|o| ids.contains(&o["id"].as_u64().unwrap()));
        let Some(attrs) = level["object_attributes"].as_object_mut() else {
            continue;
        };
        for attr in attrs.values_mut() {
            let mask: Vec<u64> = attr["present_mask"]
                .as_array()
                .map(|m| m.iter().map(|v| v.as_u64().unwrap()).collect())
                .unwrap_or_default();
            let values = attr["values"].as_array().unwrap().clone();
            let kept: Vec<Value> = ids.iter().map(|&i| values[i as usize].clone()).collect();
            for (i, present) in mask.iter().enumerate() {
                assert!(
                    *present == 0 || ids.contains(&(i as u64)),
                    "a row of id {i}, which 0.9 does not store, is present"
                );
            }
            let kept_mask: Vec<u64> = ids.iter().map(|&i| mask[i as usize]).collect();
            attr["values"] = Value::from(kept);
            attr["shape"][0] = Value::from(ids.len());
            attr["present_mask"] = if kept_mask.iter().all(|&m| m == 1) {
                Value::Null
            } else {
                Value::from(kept_mask)
            };
        }
    }
    std::fs::write(actual, a.to_string()).unwrap();
}

#[test]
fn zarr_vectors_0_9_2_stores_migrated_to_0_7_are_read_by_the_reference_with_their_content() {
    let dir = tempfile::tempdir().unwrap();
    // link attributes on the graphs (zv writes none on skeletons: refused, tested below)
    let stores = make_with(&dir.path().join("src"), 5, READ, Some("graph"));
    assert_eq!(stores.len(), READ.len() * 2);
    let paths: Vec<PathBuf> = stores.iter().map(|(_, p)| p.clone()).collect();
    zv09_dump(&paths, dir.path(), true);
    // every store migrated, then read by one reference process (tests/interop/reference_dumps.py)
    let mut dumps = Command::new(reference_python());
    dumps
        .arg(workspace_root().join("tests/interop/reference_dumps.py"))
        .arg(shared_dir().join("tools"));
    for (name, store) in &stores {
        let v7 = dir.path().join(format!("{name}.07.zarr"));
        migrate_ok(store, &v7, "0.7");
        dumps
            .arg(&v7)
            .arg(dir.path().join(format!("{name}.reference.json")));
    }
    let out = dumps.output().unwrap();
    assert!(
        out.status.success(),
        "reference_dumps.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut failures = Vec::new();
    for (name, store) in &stores {
        let stem = store.file_stem().unwrap().to_str().unwrap();
        let expected = dir.path().join(format!("{stem}.expected.json"));
        let reference = dir.path().join(format!("{name}.reference.json"));
        keep_stored_ids(&expected, &reference);
        bare_cross_chunk_values(&expected);
        let geometry = name.rsplit_once('-').unwrap().0;
        if let Some(report) = compare(
            &reference_python(),
            &expected,
            &reference,
            &ignores(RULED_07, geometry),
            true,
        ) {
            failures.push(format!(
                "{name}: the reference reads other content:\n{report}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
