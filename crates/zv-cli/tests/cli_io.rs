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
    let (ok, _, err) = zv(&["import", &d("bad.ply"), &d("b2.zarr"), "--format", "xyz"]);
    assert!(!ok && err.contains("unknown format `xyz`"), "{err}");
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
    // the 0.7 layout: a group per per-chunk array (0.9 has one grid array instead)
    let (ok, out, err) = zv(&[
        "import",
        "--format-version",
        "0.7",
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

#[test]
fn csv_graphs_import_with_edges_and_export_two_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    std::fs::write(d("n.csv"), "id,x,y,z\n10,0,0,0\n20,1,0,0\n30,0,1,0\n").unwrap();
    std::fs::write(d("e.csv"), "source,target,len\n10,20,1.5\n20,30,2\n").unwrap();
    let (ok, _, err) = zv(&["import", &d("n.csv"), &d("g.zarr"), "--edges", &d("e.csv")]);
    assert!(ok, "{err}");
    let (ok, _, err) = zv(&["export", &d("g.zarr"), &d("out.csv")]);
    assert!(ok, "{err}");
    let edges = std::fs::read_to_string(d("out.edges.csv")).unwrap();
    let mut rows: Vec<&str> = edges.lines().collect();
    assert_eq!(rows.remove(0), "source,target,len");
    rows.sort();
    assert_eq!(rows, ["10,20,1.5", "20,30,2"]);
    assert!(std::fs::read_to_string(d("out.csv"))
        .unwrap()
        .starts_with("x,y,z,id\n"));
    // two files cannot go to stdout
    let (ok, _, err) = zv(&["export", &d("g.zarr"), "--format", "csv"]);
    assert!(!ok && err.contains("name the output file"), "{err}");
    // an edge naming a missing node: the edge file and line, and no store
    std::fs::write(d("bad.csv"), "source,target\n10,20\n10,40\n").unwrap();
    let (ok, _, err) = zv(&[
        "import",
        &d("n.csv"),
        &d("b.zarr"),
        "--edges",
        &d("bad.csv"),
    ]);
    assert!(!ok);
    assert!(err.contains("bad.csv: line 3: target `40`"), "{err}");
    let left: Vec<_> = std::fs::read_dir(d("b.zarr"))
        .map(|r| r.collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn las_and_laz_export_and_import_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n).to_str().unwrap().to_owned();
    let csv = "x,y,z,intensity,classification\n1.5,2,3,10,2\n4,5.25,6,20,6\n";
    std::fs::write(d("p.csv"), csv).unwrap();
    let (ok, _, err) = zv(&["import", &d("p.csv"), &d("p.zarr")]);
    assert!(ok, "{err}");
    for ext in ["las", "laz"] {
        let (ok, _, err) = zv(&["export", &d("p.zarr"), &d(&format!("p.{ext}"))]);
        assert!(ok, "{err}");
        let store = d(&format!("{ext}.zarr"));
        let (ok, _, err) = zv(&["import", &d(&format!("p.{ext}")), &store]);
        assert!(ok, "{err}");
        let (ok, _, err) = zv(&["export", &store, &d(&format!("{ext}.csv"))]);
        assert!(ok, "{err}");
        let back = std::fs::read_to_string(d(&format!("{ext}.csv"))).unwrap();
        let mut rows: Vec<&str> = back.lines().collect();
        let header = rows.remove(0);
        assert!(header.starts_with("x,y,z,"), "{header}");
        let names: Vec<&str> = header.split(',').collect();
        let col = |r: &str, n: &str| -> String {
            let i = names.iter().position(|h| *h == n).unwrap();
            r.split(',').nth(i).unwrap().to_owned()
        };
        let mut got: Vec<String> = rows
            .iter()
            .map(|r| {
                ["x", "y", "z", "intensity", "classification"]
                    .map(|n| col(r, n))
                    .join(",")
            })
            .collect();
        got.sort();
        assert_eq!(got, ["1.5,2,3,10,2", "4,5.25,6,20,6"], "{ext}");
    }
}
