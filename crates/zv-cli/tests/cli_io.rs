//! `zv import` / `zv export` with the file formats of zv-io: format by extension or
//! `--format`, errors with the file and line, nothing left in the store after a failure.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::process::Command;

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

const PLY: &str = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nend_header\n1 2 3 10\n4 5 6 20\n7 8 9 30\n";

#[test]
fn ply_in_csv_out_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    std::fs::write(d("p.ply"), PLY).unwrap();
    let (ok, _, err) = zv(&[
        "import",
        &d("p.ply"),
        &d("p.zarr"),
        "--chunk-shape",
        "4,4,4",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("wrote 3 vertices"), "{err}");
    let (ok, _, err) = zv(&["export", &d("p.zarr"), &d("p.csv")]);
    assert!(ok, "{err}");
    let csv = std::fs::read_to_string(d("p.csv")).unwrap();
    let mut rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.remove(0), "x,y,z,red");
    rows.sort();
    assert_eq!(rows, ["1,2,3,10", "4,5,6,20", "7,8,9,30"]);
    // a file without a known extension, with --format
    std::fs::copy(d("p.csv"), d("p.txt")).unwrap();
    let (ok, _, err) = zv(&["import", &d("p.txt"), &d("q.zarr"), "--format", "csv"]);
    assert!(ok, "{err}");
    let (ok, out, err) = zv(&[
        "export",
        &d("q.zarr"),
        "--format",
        "ply",
        "--ply-encoding",
        "ascii",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.starts_with("ply\nformat ascii 1.0\n") && out.contains("property double x"),
        "{out}"
    );
    // JSON export unchanged without a format
    let (ok, out, _) = zv(&["export", &d("q.zarr")]);
    assert!(ok && out.contains("\"format\":\"zv-geometry/1\""), "{out}");
}

#[test]
fn a_malformed_file_names_its_line_and_leaves_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    std::fs::write(d("bad.ply"), PLY.replace("7 8 9 30", "7 8 9 300")).unwrap();
    let (ok, _, err) = zv(&["import", &d("bad.ply"), &d("bad.zarr")]);
    assert!(!ok);
    assert!(
        err.contains("bad.ply: line 11: vertex 2, property `red`: `300` is not a uchar value"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(d("bad.zarr"))
        .map(|r| r.collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    let (ok, _, err) = zv(&["export", &d("bad.zarr"), &d("x.ply")]);
    assert!(!ok && !err.is_empty());
    assert!(!dir.path().join("x.ply").exists());
    let (ok, _, err) = zv(&["import", &d("bad.ply"), &d("b2.zarr"), "--format", "las"]);
    assert!(!ok && err.contains("unknown format `las`"), "{err}");
}
