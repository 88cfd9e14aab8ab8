//! Pyramids in the ZV 0.9 layout, checked against zarr-vectors 0.9.2:
//!
//! - stores whose levels 1 and 2 0.9.2's own pyramid builder wrote (`zv09_make.py`'s
//!   `pyramid_*` generators: point clouds, polylines, graphs and meshes, default and sharded
//!   layout, chunk scales 1 and 2, explicit cross-level links to depth 2): `zv dump` of every
//!   level equals 0.9.2's reading, the cross-level pairs zv follows are the ones 0.9.2's
//!   `read_links` reads, and `zv validate` (level 5) finds nothing;
//! - `zv pyramid` on 0.9 stores (fixtures of every geometry the 0.9 writer writes, migrated to
//!   0.9, and a point cloud 0.9.2 wrote): 0.9.2 reads every level with exactly the content zv
//!   reads and the cross-level pairs zv follows (depth 2, explicit and implicit storage),
//!   `zv validate` passes, zarr-python 3 opens every node; a 0.9 level with sparse object ids
//!   and a distributed step (`--part`) are refused with a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::path::{Path, PathBuf};

use common::zv09::{
    compare, cross_level_pairs, make, read_json, zarr_python_opens_every_node, zv09_cross_level,
    zv09_dump, zv_dump,
};
use zv_testkit::env::fixtures_dir;
use zv_testkit::env::zv09_python;

/// The pyramid generators of `zv09_make.py`.
const BUILT_BY_0_9_2: &[&str] = &[
    "pyramid_points",
    "pyramid_polyline",
    "pyramid_graph",
    "pyramid_mesh",
];
const SEEDS: &[u64] = &[1, 2];

#[test]
fn pyramids_built_by_zarr_vectors_0_9_2_are_read_as_it_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for &seed in SEEDS {
        let sub = dir.path().join(seed.to_string());
        let stores = make(&sub, seed, BUILT_BY_0_9_2);
        let paths: Vec<PathBuf> = stores.iter().map(|(_, s)| s.clone()).collect();
        zv09_dump(&paths, &sub, true);
        for (name, store) in &stores {
            let expected = sub.join(format!("{name}.expected.json"));
            let actual = sub.join(format!("{name}.zv.json"));
            zv_dump(store, &actual);
            let read = read_json(&expected);
            assert_eq!(
                read["level_ids"],
                serde_json::json!([0, 1, 2]),
                "seed {seed} {name}"
            );
            // every level, cross-level pairs apart (zv's dump has none: compared below)
            let ignore = "^/omitted|/cross_level_links";
            if let Some(report) = compare(&zv09_python(), &expected, &actual, ignore, true) {
                failures.push(format!(
                    "seed {seed} {name}: zv reads other content:\n{report}"
                ));
            }
            let theirs = zv09_cross_level(&read);
            // 0.9.2 wrote +1, +2 at level 0; -1, +1 at level 1; -2, -1 at level 2
            for (l, deltas) in [
                ("0", ["+1", "+2"]),
                ("1", ["-1", "+1"]),
                ("2", ["-2", "-1"]),
            ] {
                for d in deltas {
                    assert!(
                        theirs[l][d].as_array().is_some_and(|p| !p.is_empty()),
                        "seed {seed} {name}: 0.9.2 reads no pairs at level {l} delta {d}"
                    );
                }
            }
            let ours = cross_level_pairs(store);
            if ours != theirs {
                failures.push(format!(
                    "seed {seed} {name}: zv follows other cross-level pairs: {ours} vs {theirs}"
                ));
            }
            let out = common::zv(&["validate", "--level", "5", store.to_str().unwrap()]);
            if !out.status.success() {
                failures.push(format!(
                    "seed {seed} {name}: zv validate: {}",
                    String::from_utf8_lossy(&out.stdout)
                ));
            }
            compared += 1;
        }
    }
    assert_eq!(compared, SEEDS.len() * BUILT_BY_0_9_2.len() * 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The fixtures `zv pyramid` is tried on after `zv migrate --to 0.9`: every geometry the 0.9
/// writer writes among them (`graph_basic` has a link attribute, which it does not), with
/// the `zv pyramid` options of each (`--levels`, `--chunk-scale`, `--cross-level`).
const PYRAMIDED: &[(&str, &str, &str, &str)] = &[
    ("points_basic", "2,2;2,1", "2,2", "explicit"),
    ("points_binned", "2;2,2", "1,2", "implicit"),
    ("streamlines_basic", "2,2;2,1", "2,2", "explicit"),
    ("skeleton_basic", "2;2,2", "2,2", "explicit"),
    ("mesh_basic", "2,2;2", "2,2", "explicit"),
];

/// `zv pyramid STORE --levels L --chunk-scale C --cross-level X --depth 2`, which must succeed.
fn pyramid(store: &Path, levels: &str, scale: &str, cross_level: &str) {
    common::zv_success(&[
        "pyramid",
        store.to_str().unwrap(),
        "--levels",
        levels,
        "--chunk-scale",
        scale,
        "--cross-level",
        cross_level,
        "--depth",
        "2",
        "--quiet",
    ]);
}

#[test]
fn zv_pyramids_of_0_9_stores_are_read_by_zarr_vectors_0_9_2_as_zv_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = Vec::new();
    for (name, levels, scale, cross_level) in PYRAMIDED {
        let store = dir.path().join(format!("{name}.zarr"));
        let fixture = fixtures_dir().join(format!("{name}.zarr"));
        common::zv_success(&[
            "migrate",
            fixture.to_str().unwrap(),
            store.to_str().unwrap(),
            "--to",
            "0.9",
            "--quiet",
        ]);
        pyramid(&store, levels, scale, cross_level);
        stores.push((name.to_string(), *cross_level, store));
    }
    // a point cloud written by 0.9.2 itself (its root lists its levels in an `ome` block)
    let made = make(&dir.path().join("made"), 4, &["point_cloud"]);
    let (_, own) = made
        .iter()
        .find(|(n, _)| n == "point_cloud-default")
        .unwrap();
    pyramid(own, "2;2,2", "2,2", "explicit");
    stores.push(("point_cloud-0.9.2".into(), "explicit", own.clone()));
    let paths: Vec<PathBuf> = stores.iter().map(|(_, _, s)| s.clone()).collect();
    zv09_dump(&paths, dir.path(), true);
    let mut failures = Vec::new();
    for (name, cross_level, store) in &stores {
        let stem = store.file_stem().unwrap().to_str().unwrap();
        let expected = dir.path().join(format!("{stem}.expected.json"));
        let actual = dir.path().join(format!("{stem}.zv.json"));
        zv_dump(store, &actual);
        let read = read_json(&expected);
        assert_eq!(read["level_ids"], serde_json::json!([0, 1, 2]), "{name}");
        let ignore = "^/omitted|/cross_level_links";
        if let Some(report) = compare(&zv09_python(), &expected, &actual, ignore, true) {
            failures.push(format!("{name}: 0.9.2 reads other content:\n{report}"));
        }
        let theirs = zv09_cross_level(&read);
        let mut want = vec![("0", "+1"), ("0", "+2"), ("1", "+1")];
        if *cross_level == "explicit" {
            want.extend([("1", "-1"), ("2", "-1"), ("2", "-2")]);
        }
        for (l, d) in want {
            assert!(
                theirs[l][d].as_array().is_some_and(|p| !p.is_empty()),
                "{name}: 0.9.2 reads no pairs at level {l} delta {d}: {theirs}"
            );
        }
        if *cross_level == "implicit" {
            assert!(
                theirs["2"].as_object().unwrap().is_empty(),
                "{name}: {theirs}"
            );
        }
        let ours = cross_level_pairs(store);
        if ours != theirs {
            failures.push(format!(
                "{name}: 0.9.2 reads other cross-level pairs: {ours} vs {theirs}"
            ));
        }
        let out = common::zv(&["validate", "--level", "5", store.to_str().unwrap()]);
        if !out.status.success() {
            failures.push(format!(
                "{name}: zv validate: {}",
                String::from_utf8_lossy(&out.stdout)
            ));
        }
    }
    // 0.9.2's `ome` block lists the new levels
    let root = read_json(&own.join("zarr.json"));
    let nodes: Vec<&str> = root["attributes"]["ome"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(nodes, ["0", "1", "2"]);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let nodes = zarr_python_opens_every_node(&paths);
    assert!(nodes > 30 * stores.len() as u64, "{nodes} nodes");
}

#[test]
fn what_a_0_9_pyramid_cannot_be_built_on_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let made = make(dir.path(), 6, &["point_cloud"]);
    // sparse object ids (0.9.2's sharded stores here): the coarse levels would hold every id
    let (_, sparse) = made
        .iter()
        .find(|(n, _)| n == "point_cloud-sharded")
        .unwrap();
    let before = common::tree(sparse);
    let out = common::zv(&[
        "pyramid",
        sparse.to_str().unwrap(),
        "--levels",
        "2",
        "--chunk-scale",
        "2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("0/object_index/object_ids") && err.contains("sparse"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        common::tree(sparse) == before,
        "a refused pyramid changed the store"
    );
    // a distributed step writes the 0.7 layout only
    let (_, dense) = made
        .iter()
        .find(|(n, _)| n == "point_cloud-default")
        .unwrap();
    let before = common::tree(dense);
    let out = common::zv(&[
        "pyramid",
        dense.to_str().unwrap(),
        "--levels",
        "2",
        "--chunk-scale",
        "2",
        "--step",
        "0",
        "--part",
        "1/2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("ZV 0.9.2") && err.contains("--part"), "{err}");
    assert!(
        common::tree(dense) == before,
        "a refused step changed the store"
    );
}
