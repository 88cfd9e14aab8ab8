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

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, mark) in [
        ("bash", "_zv()"),
        ("zsh", "#compdef zv"),
        ("fish", "complete -c zv"),
    ] {
        let (ok, out, err) = zv(&["completions", shell]);
        assert!(ok, "{err}");
        assert!(out.contains(mark) && out.contains("import"), "{shell}");
    }
    let (ok, _, _) = zv(&["completions", "tcsh"]);
    assert!(!ok);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    // enough points that the export outlives the pipe buffer
    let mut csv = String::from("x,y,z\n");
    for i in 0..200_000 {
        csv += &format!("{i},{},{}\n", i % 7, i % 13);
    }
    std::fs::write(d("big.csv"), csv).unwrap();
    let (ok, _, err) = zv(&["import", &d("big.csv"), &d("big.zarr")]);
    assert!(ok, "{err}");
    for args in [
        vec!["export", "--format", "csv"],
        vec!["dump"],
        vec!["completions", "bash"],
    ] {
        let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        if args[0] != "completions" {
            args.insert(1, d("big.zarr"));
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_zv"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 16];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then the pipe closes
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(
            !err.contains("Broken pipe") && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn ls_lists_groups_and_arrays_and_quiet_imports_print_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    std::fs::write(d("p.ply"), PLY).unwrap();
    let (ok, out, err) = zv(&[
        "import",
        &d("p.ply"),
        &d("p.zarr"),
        "--quiet",
        "--chunk-shape",
        "4,4,4",
    ]);
    assert!(ok && out.is_empty() && err.is_empty(), "{out}{err}");
    let (ok, out, err) = zv(&["ls", &d("p.zarr")]);
    assert!(ok, "{err}");
    assert_eq!(out, "0/\n");
    let (ok, out, _) = zv(&["ls", &d("p.zarr"), "0"]);
    assert!(ok && out.lines().any(|l| l == "vertices/"), "{out}");
    let (ok, out, err) = zv(&["ls", &d("p.zarr"), "0/vertices", "--json"]);
    assert!(ok, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    // points at (1..7, 2..8, 3..9) in chunks of 4: three chunks, each a uint8 blob array
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3, "{out}");
    assert!(
        rows.iter()
            .all(|r| r["node_type"] == "array" && r["data_type"] == "uint8"),
        "{out}"
    );
    let (ok, _, err) = zv(&["ls", &d("p.zarr"), "0/vertices/0.0.0"]);
    assert!(!ok && err.contains("is an array, not a group"), "{err}");
}
