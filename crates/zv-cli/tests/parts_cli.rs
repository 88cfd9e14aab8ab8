//! `zv import --part K/N` on N "machines" (processes), then `zv commit`: the store is the
//! whole import's, file for file (points from CSV, streamlines from TCK); before the commit nothing opens; a missing part is named;
//! a part killed at any moment and run again, or a commit killed and run again, still gives
//! the whole import's store; and the 0.7.0 reference reads the committed store with exactly
//! zv's content.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::path::Path;
use std::process::Command;

use common::{kill_delays, tree, zv, zv_killed_after, zv_success};
use zv_testkit::env::{reference_python, shared_dir, workspace_root, zv09_python};

/// A CSV of `n` points in `[0, 100)^3` with an attribute and object ids.
fn csv(path: &Path, n: usize) {
    let mut next = common::uniform();
    let mut text = String::from("x,y,z,intensity,object_id\n");
    for _ in 0..n {
        let (x, y, z) = (next() * 100.0, next() * 100.0, next() * 100.0);
        let (i, o) = (next(), (next() * 40.0) as u64);
        text.push_str(&format!("{x:.3},{y:.3},{z:.3},{i:.4},{o}\n"));
    }
    std::fs::write(path, text).unwrap();
}

/// `zv import FILE STORE --chunk-shape 25,25,25 [--part K/N]`.
fn import_args<'a>(file: &'a str, store: &'a str, part: Option<&'a str>) -> Vec<&'a str> {
    let mut a = vec!["import", file, store, "--chunk-shape", "25,25,25"];
    if let Some(p) = part {
        a.extend(["--part", p]);
    }
    a
}

#[test]
fn parts_and_a_commit_make_the_whole_imports_store() {
    let dir = common::scratch_dir();
    let file = dir.path().join("points.csv");
    csv(&file, 5000);
    let file = file.to_str().unwrap();
    let whole = dir.path().join("whole.zv");
    zv_success(&import_args(file, whole.to_str().unwrap(), None));
    let store = dir.path().join("parts.zv");
    let s = store.to_str().unwrap();
    zv_success(&import_args(file, s, Some("2/3")));
    zv_success(&import_args(file, s, Some("0/3")));
    // not committed: nothing opens, and the commit names the missing part
    assert!(!zv(&["dump", s]).status.success());
    let out = zv(&["commit", s]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("1 of 3 parts") && err.contains(": 1"),
        "{err}"
    );
    zv_success(&import_args(file, s, Some("1/3")));
    zv_success(&["commit", s]);
    let (want, got) = (tree(&whole), tree(&store));
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert!(got == want, "the stores differ in content");
    // options that differ from the staged write's are refused, not mixed in
    let other = dir.path().join("other.zv");
    let o = other.to_str().unwrap();
    zv_success(&import_args(file, o, Some("0/2")));
    let out = zv(&[
        "import",
        file,
        o,
        "--chunk-shape",
        "10,10,10",
        "--part",
        "1/2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another distributed write is staged here"),
        "{err}"
    );
    // a part of something that is not a point cloud from PLY or CSV
    let out = zv(&["import", file, o, "--part", "1/2", "--overwrite"]);
    assert!(!out.status.success());
    let out = zv(&["import", file, o, "--part", "2/2"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected K/N"));
}

#[test]
fn killed_parts_and_a_killed_commit_are_run_again_to_the_same_store() {
    let dir = common::scratch_dir();
    let file = dir.path().join("points.csv");
    csv(&file, 60_000);
    let file = file.to_str().unwrap();
    let whole = dir.path().join("whole.zv");
    let took = common::zv_ok(&import_args(file, whole.to_str().unwrap(), None));
    let want = tree(&whole);
    let mut killed = 0;
    for (round, delay) in kill_delays(took).enumerate().take(6) {
        let store = dir.path().join(format!("parts{round}.zv"));
        let s = store.to_str().unwrap();
        // part 1 is killed at some moment; part 0 runs whole
        let finished = zv_killed_after(&import_args(file, s, Some("1/2")), delay);
        zv_success(&import_args(file, s, Some("0/2")));
        if !finished {
            killed += 1;
            assert!(!zv(&["dump", s]).status.success(), "round {round}: opens");
            zv_success(&import_args(file, s, Some("1/2")));
        }
        // the commit is killed at some moment too, then run again if it did not finish
        if !zv_killed_after(&["commit", s], delay / 4) {
            let out = zv(&["commit", s]);
            assert!(
                out.status.success() || tree(&store) == want,
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            tree(&store) == want,
            "round {round} (delay {delay:?}) differs"
        );
    }
    assert!(killed > 0, "no part was killed: the test tested nothing");
}

#[test]
fn the_reference_reads_a_store_written_in_parts_as_zv_does() {
    let dir = common::scratch_dir();
    let file = dir.path().join("points.csv");
    csv(&file, 3000);
    let file = file.to_str().unwrap();
    let store = dir.path().join("parts.zv");
    let s = store.to_str().unwrap();
    for part in ["1/4", "3/4", "0/4", "2/4"] {
        zv_success(&with_layout(import_args(file, s, Some(part)), V07));
    }
    zv_success(&["commit", s]);
    assert_reference_agrees(&store, dir.path());
}

/// A TCK file of `n` random walks of 2 to 60 points in `[0, 100)^3`, steps up to 6.
fn tck(path: &Path, n: usize) {
    let mut next = common::uniform();
    let head = format!("mrtrix tracks\ndatatype: Float32LE\ncount: {n}\nfile: . 128\nEND\n");
    let mut f = head.into_bytes();
    f.resize(128, 0);
    let put = |f: &mut Vec<u8>, v: [f32; 3]| f.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    for _ in 0..n {
        let mut p = [next() * 100.0, next() * 100.0, next() * 100.0];
        for _ in 0..2 + (next() * 58.0) as usize {
            for x in p.iter_mut() {
                *x = (*x + (next() - 0.5) * 12.0).clamp(0.0, 99.9);
            }
            put(&mut f, p.map(|x| x as f32));
        }
        put(&mut f, [f32::NAN; 3]);
    }
    put(&mut f, [f32::INFINITY; 3]);
    std::fs::write(path, f).unwrap();
}

#[test]
fn streamline_parts_make_the_whole_imports_store_and_the_reference_reads_it() {
    let dir = common::scratch_dir();
    let file = dir.path().join("tracks.tck");
    tck(&file, 1500);
    let file = file.to_str().unwrap();
    let whole = dir.path().join("whole.zv");
    zv_success(&with_layout(
        import_args(file, whole.to_str().unwrap(), None),
        V07,
    ));
    let store = dir.path().join("parts.zv");
    let s = store.to_str().unwrap();
    for part in ["2/3", "0/3"] {
        zv_success(&with_layout(import_args(file, s, Some(part)), V07));
    }
    assert!(
        !zv(&["dump", s]).status.success(),
        "opens before the commit"
    );
    zv_success(&with_layout(import_args(file, s, Some("1/3")), V07));
    zv_success(&["commit", s]);
    let (want, got) = (tree(&whole), tree(&store));
    assert!(
        want.keys().any(|k| k.contains("cross_chunk_links")),
        "the streamlines cross chunks"
    );
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert!(got == want, "the stores differ in content");
    assert_reference_agrees(&store, dir.path());
}

#[test]
fn zero_nine_parts_make_the_whole_imports_store_and_zarr_vectors_reads_it() {
    let dir = common::scratch_dir();
    let points = dir.path().join("points.csv");
    csv(&points, 3000);
    let tracks = dir.path().join("tracks.tck");
    tck(&tracks, 400);
    let layouts: [&[&str]; 2] = [
        &["--format-version", "0.9"],
        &["--format-version", "0.9", "--shard-shape", "2,2,2"],
    ];
    for (i, layout) in layouts.iter().enumerate() {
        for file in [&points, &tracks] {
            let file = file.to_str().unwrap();
            let whole = dir.path().join(format!("whole{i}.zv"));
            let store = dir.path().join(format!("parts{i}.zv"));
            let (w, s) = (whole.to_str().unwrap(), store.to_str().unwrap());
            let _ = std::fs::remove_dir_all(&whole);
            let _ = std::fs::remove_dir_all(&store);
            zv_success(&with_layout(import_args(file, w, None), layout));
            for part in ["2/3", "0/3", "1/3"] {
                zv_success(&with_layout(import_args(file, s, Some(part)), layout));
            }
            assert!(
                !zv(&["dump", s]).status.success(),
                "opens before the commit"
            );
            zv_success(&["commit", s]);
            let (want, got) = (tree(&whole), tree(&store));
            assert_eq!(
                got.keys().collect::<Vec<_>>(),
                want.keys().collect::<Vec<_>>(),
                "{file} {layout:?}"
            );
            assert!(
                got == want,
                "{file} {layout:?}: the stores differ in content"
            );
            assert!(
                want.keys().any(|k| k.starts_with("0/vertices/c/")),
                "a 0.9 store"
            );
            assert_zarr_vectors_agrees(&store, dir.path());
        }
    }
}

/// The ZV 0.7 layout, for the tests the 0.7.0 reference reads.
const V07: &[&str] = &["--format-version", "0.7"];

/// `args` followed by `layout`.
fn with_layout<'a>(mut args: Vec<&'a str>, layout: &[&'a str]) -> Vec<&'a str> {
    args.extend_from_slice(layout);
    args
}

/// zarr-vectors 0.9.2 reads the ZV 0.9 `store` with zv's content (its own readers through
/// `tests/interop/zv09_dump.py`, compared with `zv dump` by `compare_dumps`).
fn assert_zarr_vectors_agrees(store: &Path, dir: &Path) {
    let out = Command::new(zv09_python())
        .arg(workspace_root().join("tests/interop/zv09_dump.py"))
        .arg(store)
        .arg("--out-dir")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stem = store.file_stem().unwrap().to_str().unwrap();
    let expected = dir.join(format!("{stem}.expected.json"));
    let zv_path = dir.join(format!("{stem}.zv.json"));
    std::fs::write(
        &zv_path,
        zv_success(&["dump", store.to_str().unwrap()]).stdout,
    )
    .unwrap();
    let out = Command::new(zv09_python())
        .arg(shared_dir().join("tools/compare_dumps.py"))
        .args([&expected, &zv_path])
        .args(["--ignore", "^/omitted"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.trim_end().ends_with("equal (scope=logical)"), "{text}");
}

/// The 0.7.0 reference reads `store` with zv's content (`compare_dumps`) and its
/// `validate(level=5)` finds no error.
fn assert_reference_agrees(store: &Path, dir: &Path) {
    let python = reference_python();
    let s = store.to_str().unwrap();
    let reference = Command::new(&python)
        .arg(shared_dir().join("tools/dump_store.py"))
        .arg(store)
        .output()
        .unwrap();
    assert!(
        reference.status.success(),
        "{}",
        String::from_utf8_lossy(&reference.stderr)
    );
    let ref_path = dir.join("reference.json");
    std::fs::write(&ref_path, &reference.stdout).unwrap();
    let zv_path = dir.join("zv.json");
    std::fs::write(&zv_path, zv_success(&["dump", s]).stdout).unwrap();
    let out = Command::new(&python)
        .arg(shared_dir().join("tools/compare_dumps.py"))
        .args([&ref_path, &zv_path])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.trim_end().ends_with("equal (scope=logical)"), "{text}");
    let validate = Command::new(&python)
        .args([
            "-c",
            "import sys; from zarr_vectors.validate import validate; r = validate(sys.argv[1], level=5); \
             print(r.errors, len(r.passed)); sys.exit(1 if r.errors or not r.passed else 0)",
            s,
        ])
        .output()
        .unwrap();
    assert!(
        validate.status.success(),
        "{}{}",
        String::from_utf8_lossy(&validate.stdout),
        String::from_utf8_lossy(&validate.stderr)
    );
}

#[test]
fn pyramid_steps_built_in_parts_and_committed_are_zv_pyramids_store() {
    let dir = common::scratch_dir();
    let file = dir.path().join("points.csv");
    csv(&file, 8000);
    let file = file.to_str().unwrap();
    let (one, many) = (dir.path().join("one.zv"), dir.path().join("many.zv"));
    for store in [&one, &many] {
        zv_success(&with_layout(
            import_args(file, store.to_str().unwrap(), None),
            V07,
        ));
    }
    // no bins: the coarse bins need larger chunks, so no cross-level links in parts
    let opts = [
        "--levels",
        "2;2",
        "--chunk-scale",
        "2,2",
        "--cross-level",
        "none",
    ];
    let mut single = vec!["pyramid", one.to_str().unwrap()];
    single.extend(opts);
    zv_success(&single);
    let m = many.to_str().unwrap();
    for step in ["0", "1"] {
        for part in ["2/3", "0/3"] {
            let mut a = vec!["pyramid", m, "--step", step, "--part", part];
            a.extend(opts);
            zv_success(&a);
        }
        // part 1 has not run: the commit names it
        let out = zv(&["commit", m]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(": 1"), "{err}");
        let mut a = vec!["pyramid", m, "--step", step, "--part", "1/3"];
        a.extend(opts);
        zv_success(&a);
        zv_success(&["commit", m]);
    }
    let (want, got) = (tree(&one), tree(&many));
    assert!(want.keys().any(|k| k.starts_with("2/")), "two levels");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    assert!(got == want, "the stores differ in content");
    // links in parts need the chunk shape kept: refused, naming why
    let mut a = vec![
        "pyramid", m, "--levels", "2;2;2", "--step", "2", "--part", "0/2",
    ];
    a.extend(["--chunk-scale", "2,2,2"]);
    let out = zv(&a);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("chunk-scale 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
