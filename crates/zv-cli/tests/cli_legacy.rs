//! `zv convert legacy` and legacy arrays in `zv zarr info/get` (feature `legacy`), on stores
//! built here with zv's blosc codec: a zarr 0.4 array with a missing chunk and a bcolz ctable
//! with a short leftover chunk.
#![cfg(feature = "legacy")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

mod common;

fn zv(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The 5 × 4 zarr 0.4 array in 2 × 3 chunks; chunk (1, 0) is missing (fill -1).
fn zarr04(dir: &Path) -> std::path::PathBuf {
    common::legacy::zarr04(dir, [5, 4], [2, 3], &[(1, 0)])
}

fn expected_zarr04() -> Value {
    let v = |r: u32, c: u32| -> Value {
        if r / 2 == 1 && c / 3 == 0 {
            json!(-1.0)
        } else {
            json!(f64::from(10 * r + c))
        }
    };
    Value::Array(
        (0..5)
            .map(|r| Value::Array((0..4).map(|c| v(r, c)).collect()))
            .collect(),
    )
}

/// A bcolz ctable of 5 rows (chunklen 2: two full chunks, a leftover of 1), columns `a`, `b`.
fn ctable(dir: &Path) -> std::path::PathBuf {
    common::legacy::ctable(dir, 5, 2, &["a", "b"])
}

#[test]
fn zarr04_converts_and_reads_the_same_through_zv_zarr_get() {
    let dir = tempfile::tempdir().unwrap();
    let src = zarr04(dir.path());
    let src = src.to_str().unwrap();
    let dst = dir.path().join("new.zarr");
    let dst = dst.to_str().unwrap();
    // Detected by its file names, and with the prefix.
    for arg in [src.to_owned(), format!("legacy-zarr:{src}")] {
        let (ok, out, err) = zv(&["zarr", "get", &arg, "/"]);
        assert!(ok, "{err}");
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            expected_zarr04()
        );
    }
    let (ok, out, err) = zv(&["zarr", "info", src]);
    assert!(ok, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["attributes"], json!({"units": "K"}));
    assert_eq!(info["fill_value"], json!(-1.0));
    let (ok, _, err) = zv(&["convert", "legacy", src, dst]);
    assert!(ok, "{err}");
    assert!(
        err.contains("5 chunks passed through, 0 re-encoded, 1 not stored"),
        "{err}"
    );
    let (ok, out, err) = zv(&["zarr", "get", dst, "/"]);
    assert!(ok, "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        expected_zarr04()
    );
    // The target must be empty.
    let (ok, _, err) = zv(&["convert", "legacy", src, dst]);
    assert!(!ok && err.contains("not empty"), "{err}");
}

#[test]
fn a_ctable_becomes_a_group_of_columns() {
    let dir = tempfile::tempdir().unwrap();
    let src = ctable(dir.path());
    let src = src.to_str().unwrap();
    let dst = dir.path().join("table.zarr");
    let dst = dst.to_str().unwrap();
    let (ok, out, err) = zv(&["zarr", "info", &format!("bcolz:{src}"), "/", "--children"]);
    assert!(ok, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["metadata"]["attributes"], json!({"origin": "test"}));
    assert_eq!(info["children"].as_array().unwrap().len(), 2);
    // the summary is an informational line: printed without --quiet
    let (ok, _, err) = zv(&["convert", "legacy", src, dst]);
    assert!(ok, "{err}");
    assert!(
        err.contains("4 chunks passed through, 2 re-encoded"),
        "{err}"
    );
    for (col, first) in [("/a", 0.0), ("/b", 100.0)] {
        let want = json!((0..5).map(|r| first + f64::from(r)).collect::<Vec<_>>());
        for store in [src, dst] {
            let (ok, out, err) = zv(&["zarr", "get", store, col]);
            assert!(ok, "{store} {col}: {err}");
            assert_eq!(
                serde_json::from_str::<Value>(&out).unwrap(),
                want,
                "{store} {col}"
            );
        }
    }
    let (ok, out, _) = zv(&["zarr", "info", dst, "/"]);
    assert!(ok);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["attributes"],
        json!({"origin": "test"})
    );
}

#[test]
fn corrupt_legacy_input_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = ctable(dir.path());
    let bad = src.join("b/data/__1.blp");
    let mut bytes = std::fs::read(&bad).unwrap();
    bytes[0] = b'x';
    std::fs::write(&bad, bytes).unwrap();
    let dst = dir.path().join("out");
    let (ok, _, err) = zv(&[
        "convert",
        "legacy",
        src.to_str().unwrap(),
        dst.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains(bad.to_str().unwrap()) && err.contains("magic"),
        "{err}"
    );
    let (ok, _, err) = zv(&["zarr", "get", src.to_str().unwrap(), "/b"]);
    assert!(!ok && err.contains(bad.to_str().unwrap()), "{err}");
    let (ok, _, err) = zv(&[
        "convert",
        "legacy",
        dir.path().to_str().unwrap(),
        "memory://x",
    ]);
    assert!(!ok && err.contains("no legacy array"), "{err}");
}
