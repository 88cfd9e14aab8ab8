//! `zv convert legacy` and legacy arrays in `zv zarr info/get` (feature `legacy`), on stores
//! built here with zv's blosc codec: a zarr 0.4 array with a missing chunk and a bcolz ctable
//! with a short leftover chunk.
#![cfg(feature = "legacy")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use zv_codecs::blosc::{BloscCodec, BloscCompressor, BloscConfig, BloscShuffle};

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

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn blosc(data: &[u8]) -> Vec<u8> {
    let config = BloscConfig {
        cname: BloscCompressor::Zstd,
        clevel: 5,
        shuffle: BloscShuffle::Shuffle,
        typesize: Some(8),
        blocksize: 0,
    };
    BloscCodec::new(&config, 8).unwrap().compress(data).unwrap()
}

fn f64s(values: impl IntoIterator<Item = f64>) -> Vec<u8> {
    values.into_iter().flat_map(f64::to_le_bytes).collect()
}

/// A 5 × 4 zarr 0.4 array of `<f8` in 2 × 3 chunks; chunk (1, 0) is missing (fill -1).
fn zarr04(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("old.zarr");
    write(
        &root.join("__zmeta__"),
        json!({"shape": [5, 4], "chunks": [2, 3], "dtype": "<f8", "fill_value": -1.0,
               "cname": "zstd", "clevel": 5, "shuffle": 1})
        .to_string()
        .as_bytes(),
    );
    write(&root.join("__zattr__"), br#"{"units": "K"}"#);
    for (i, j) in [(0, 0), (0, 1), (1, 1), (2, 0), (2, 1)] {
        // Full chunk shape, edge padding included; value = 10 * row + column.
        let values =
            (0..2).flat_map(|r| (0..3).map(move |c| f64::from(10 * (2 * i + r) + 3 * j + c)));
        write(
            &root.join(format!("__zdata__/{i}.{j}.blosc")),
            &blosc(&f64s(values)),
        );
    }
    root
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
    let root = dir.join("table.bcolz");
    write(&root.join("__rootdirs__"), br#"{"names": ["a", "b"]}"#);
    write(&root.join("__attrs__"), br#"{"origin": "test"}"#);
    for (name, offset) in [("a", 0.0), ("b", 100.0)] {
        let col = root.join(name);
        write(
            &col.join("meta/storage"),
            br#"{"dtype": "float64", "cparams": {"clevel": 5, "shuffle": 1, "cname": "zstd"}, "chunklen": 2, "expectedlen": 5, "dflt": 0.0}"#,
        );
        write(
            &col.join("meta/sizes"),
            br#"{"shape": [5], "nbytes": 40, "cbytes": 0}"#,
        );
        for (i, rows) in [(0, 0..2), (1, 2..4), (2, 4..5)] {
            let mut file = b"blpk\x01\0\0\0".to_vec();
            file.extend(1i64.to_le_bytes());
            file.extend(blosc(&f64s(rows.map(|r| offset + f64::from(r)))));
            write(&col.join(format!("data/__{i}.blp")), &file);
        }
    }
    root
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
    let (ok, _, err) = zv(&["convert", "legacy", src, dst, "--quiet"]);
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
