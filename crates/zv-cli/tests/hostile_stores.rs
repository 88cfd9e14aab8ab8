//! Hostile stores from the outside: a huge `shape`, a FIFO in place of a chunk, links to
//! devices and to files outside the store. Each command ends by itself (no hang, no abort
//! from an allocation) with an error naming the key.
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// Runs `zv ARGS`; kills it and fails the test if it does not end within a minute, or if it
/// ended by a signal (an abort).
fn zv(args: &[&str]) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("`zv {}` hung", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.code().is_some(),
        "`zv {}` was killed by a signal: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(dir: &Path, key: &str, value: &[u8]) {
    let path = dir.join(key);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, value).unwrap();
}

/// How a case replaces a file: (name, maker, expected reason).
type Case<'a> = (&'a str, &'a dyn Fn(&Path), &'a str);

fn array_doc(shape: u64, chunk: u64) -> Vec<u8> {
    json!({"zarr_format": 3, "node_type": "array", "shape": [shape], "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [chunk]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes"}], "attributes": {}})
    .to_string()
    .into_bytes()
}

fn expect_error(args: &[&str], wanted: &[&str]) {
    let (ok, out, err) = zv(args);
    assert!(!ok, "`zv {}` succeeded: {out}", args.join(" "));
    for w in wanted {
        assert!(err.contains(w), "`zv {}`: {err}", args.join(" "));
    }
}

#[test]
fn a_huge_shape_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for shape in [1u64 << 40, (1u64 << 53) + 1] {
        write(d, "a/zarr.json", &array_doc(shape, 1000));
        write(d, "a/c/0", &[1u8; 1000]);
        expect_error(&["zarr", "get", d.to_str().unwrap(), "/a"], &["too large"]);
        expect_error(
            &["zarr", "get", d.to_str().unwrap(), "/a", "--raw"],
            &["too large"],
        );
        // a small region of the same array reads fine
        let (ok, out, err) = zv(&["zarr", "get", d.to_str().unwrap(), "/a", "--region", "0:3"]);
        assert!(ok, "{err}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&out).unwrap(),
            json!([1, 1, 1])
        );
    }
}

#[test]
fn special_files_and_links_out_of_the_root_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    write(
        outside.path(),
        "secret",
        b"root:x:0:0:root:/root:/bin/bash\n",
    );
    write(outside.path(), "arr/zarr.json", &array_doc(4, 4));
    write(outside.path(), "arr/c/0", &[9u8; 4]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let store = d.to_str().unwrap();
    let cases: [Case; 5] = [
        (
            "fifo",
            &|p| assert!(Command::new("mkfifo").arg(p).status().unwrap().success()),
            "FIFO",
        ),
        (
            "zero",
            &|p| symlink("/dev/zero", p).unwrap(),
            "leaves the store root",
        ),
        (
            "urandom",
            &|p| symlink("/dev/urandom", p).unwrap(),
            "leaves the store root",
        ),
        (
            "passwd",
            &|p| symlink(outside.path().join("secret"), p).unwrap(),
            "leaves the store root",
        ),
        (
            "rel",
            &|p| symlink("../../../../../../../../../etc/passwd", p).unwrap(),
            "leaves the store root",
        ),
    ];
    for (name, make, why) in cases {
        let array = name.to_owned();
        write(d, &format!("{array}/zarr.json"), &array_doc(4, 4));
        std::fs::create_dir_all(d.join(&array).join("c")).unwrap();
        make(&d.join(&array).join("c").join("0"));
        for raw in [false, true] {
            let mut args = vec!["zarr", "get", store, array.as_str()];
            if raw {
                args.push("--raw");
            }
            expect_error(&args, &[&format!("{array}/c/0"), why]);
        }
        // the metadata document
        let meta = d.join(&array).join("zarr.json");
        std::fs::remove_file(&meta).unwrap();
        make(&meta);
        expect_error(
            &["zarr", "info", store, array.as_str()],
            &["zarr.json", why],
        );
    }
    // an array directory linked from outside, named directly
    symlink(outside.path().join("arr"), d.join("linked")).unwrap();
    expect_error(
        &["zarr", "get", store, "linked"],
        &["leaves the store root"],
    );
    expect_error(
        &["zarr", "info", store, "linked"],
        &["leaves the store root"],
    );
}

#[test]
fn a_fifo_or_device_inside_a_zv_store_is_an_error_for_every_reader() {
    let fixture = zv_testkit::env::fixtures_dir().join("points_basic.zarr");
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("s.zarr");
    let status = Command::new("cp")
        .arg("-r")
        .arg(&fixture)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let chunk = copy.join("0/vertices/0.0.0/c/0");
    std::fs::remove_file(&chunk).unwrap();
    assert!(Command::new("mkfifo")
        .arg(&chunk)
        .status()
        .unwrap()
        .success());
    let store = copy.to_str().unwrap();
    expect_error(&["dump", store], &["0/vertices/0.0.0/c/0", "FIFO"]);
    expect_error(&["export", store], &["0/vertices/0.0.0/c/0", "FIFO"]);
    std::fs::remove_file(&chunk).unwrap();
    symlink("/dev/zero", &chunk).unwrap();
    expect_error(
        &["dump", store],
        &["0/vertices/0.0.0/c/0", "leaves the store root"],
    );
}
