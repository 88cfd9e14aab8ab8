//! Legacy stores written by Python, read and converted by zv:
//!
//! - bcolz 1.x carrays and ctables written by the real bcolz (PyPI `bcolz-zipline`): every
//!   numeric dtype and fixed-size bytes, lengths that are and are not multiples of
//!   `chunklen`, every cname × shuffle, 2-D and 3-D carrays, defaults, attributes;
//! - zarr 0.4 stores assembled as zarr's 0.4 document describes with real c-blosc frames
//!   (PyPI `blosc`): every dtype, partial edge chunks, missing chunks, each shuffle;
//!
//! each read by zv with values equal to what bcolz (or the assembling script) reads, then
//! converted to Zarr v3 and read by zarr-python 3 with equal values, dtype, fill value and
//! attributes; and which chunks were passed through without recompression.
//!
//! The Python side is `tests/py/`; the interpreters come from `ZV_BCOLZ_PYTHON` (bcolz,
//! blosc) and `ZV_PYTHON` (zarr-python 3), or the workspace's `.venv-bcolz` and `.venv`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use zv_core::grid::Region;
use zv_legacy::convert::{convert, ChunkAction};
use zv_legacy::{Legacy, LegacyArray};
use zv_store_fs::FilesystemStore;
use zv_testkit::env::{bcolz_python, zarr_python};

/// The stores written by the two scripts (kept for the whole test binary).
struct Written {
    _dir: tempfile::TempDir,
    bcolz: PathBuf,
    zarr04: PathBuf,
}

fn run(python: &Path, args: &[&Path]) -> String {
    let out = Command::new(python)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert!(
        out.status.success(),
        "{} {args:?} failed:\n{}\n{}",
        python.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn written() -> &'static Written {
    static W: OnceLock<Written> = OnceLock::new();
    W.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let py = bcolz_python();
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py");
        let bcolz = dir.path().join("bcolz");
        let zarr04 = dir.path().join("zarr04");
        run(&py, &[&scripts.join("make_bcolz.py"), &bcolz]);
        run(&py, &[&scripts.join("make_zarr04.py"), &zarr04]);
        Written {
            _dir: dir,
            bcolz,
            zarr04,
        }
    })
}

fn manifest(dir: &Path) -> Vec<Value> {
    let bytes = std::fs::read(dir.join("manifest.json")).unwrap();
    let v = zv_legacy::files::parse_json(&bytes).unwrap();
    v.as_array().unwrap().clone()
}

fn shape_of(entry: &Value) -> Vec<u64> {
    entry["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect()
}

/// The C-order elements of `region` of a C-order buffer of `shape`.
fn slice(all: &[u8], shape: &[u64], region: &Region, item: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let n: u64 = region.shape().iter().product();
    for flat in 0..n {
        let mut rem = flat;
        let mut offset = 0u64;
        let mut stride = 1u64;
        let mut idx = vec![0u64; shape.len()];
        for d in (0..shape.len()).rev() {
            idx[d] = region.start()[d] + rem % region.shape()[d];
            rem /= region.shape()[d];
        }
        for d in (0..shape.len()).rev() {
            offset += idx[d] * stride;
            stride *= shape[d];
        }
        let o = offset as usize * item;
        out.extend_from_slice(&all[o..o + item]);
    }
    out
}

/// Checks one array against its manifest entry and expected values; returns the number of
/// chunks visited by the chunk iterator.
fn check_array(dir: &Path, entry: &Value, array: &LegacyArray) -> u64 {
    let name = entry["name"].as_str().unwrap();
    let shape = shape_of(entry);
    assert_eq!(array.shape(), shape.as_slice(), "{name}: shape");
    assert_eq!(
        array.dtype().to_numpy(),
        entry["dtype"].as_str().unwrap(),
        "{name}: dtype"
    );
    let fill = array.dtype().fill_from_json(&entry["fill"]).unwrap();
    assert_eq!(array.info().fill_value, fill, "{name}: fill value");
    assert_eq!(
        Value::Object(array.attributes().clone()),
        entry["attrs"],
        "{name}: attributes"
    );
    let expected = std::fs::read(dir.join(format!("{name}.bin"))).unwrap();
    assert_eq!(array.read_all().unwrap(), expected, "{name}: values");
    // A region in the middle of every dimension.
    let item = array.dtype().size();
    let start: Vec<u64> = shape.iter().map(|&n| n / 3).collect();
    let len: Vec<u64> = shape
        .iter()
        .map(|&n| (n / 2).max(1).min(n - n / 3))
        .collect();
    if shape.iter().all(|&n| n > 0) {
        let region = Region::new(start, len).unwrap();
        assert_eq!(
            array.read_region(&region).unwrap(),
            slice(&expected, &shape, &region, item),
            "{name}: region {region}"
        );
    }
    // Chunk iteration: every chunk, clipped to the array.
    let grid = array.info().grid();
    let mut visited = 0;
    for (coords, data) in array.chunks() {
        let region = grid.chunk_region(&coords).unwrap();
        assert_eq!(
            data.unwrap(),
            slice(&expected, &shape, &region, item),
            "{name}: chunk {coords:?}"
        );
        visited += 1;
    }
    assert_eq!(visited, array.num_chunks(), "{name}: chunk count");
    visited
}

#[test]
fn bcolz_stores_read_equal_to_bcolz() {
    let dir = &written().bcolz;
    let mut arrays = 0;
    for entry in manifest(dir) {
        let name = entry["name"].as_str().unwrap();
        let root = dir.join("stores").join(name);
        match zv_legacy::open(&root).unwrap() {
            Legacy::Array(a) => {
                assert_eq!(entry["kind"], "carray", "{name}");
                assert_eq!(a.chunk_shape()[0], entry["chunklen"].as_u64().unwrap());
                check_array(dir, &entry, &a);
                arrays += 1;
            }
            Legacy::Table(t) => {
                assert_eq!(entry["kind"], "ctable", "{name}");
                assert_eq!(Value::Object(t.attributes().clone()), entry["attrs"]);
                let columns = entry["columns"].as_array().unwrap();
                assert_eq!(t.columns().count(), columns.len());
                for col in columns {
                    let cname = col["name"].as_str().unwrap().split_once('.').unwrap().1;
                    check_array(dir, col, t.column(cname).unwrap());
                    arrays += 1;
                }
            }
        }
    }
    // 36 dtype cases, 15 codec cases, 4 others, 3 n-d, 2 ctables of 4 columns.
    assert_eq!(arrays, 36 + 15 + 4 + 3 + 8);
}

#[test]
fn zarr04_stores_read_equal() {
    let dir = &written().zarr04;
    let mut arrays = 0;
    for entry in manifest(dir) {
        let name = entry["name"].as_str().unwrap();
        let Legacy::Array(a) = zv_legacy::open(&dir.join("stores").join(name)).unwrap() else {
            panic!("{name}: not an array");
        };
        check_array(dir, &entry, &a);
        // Missing chunks are reported as missing, stored ones as frames.
        let missing: Vec<Vec<u64>> = serde_json::from_value(entry["missing"].clone()).unwrap();
        for m in &missing {
            assert!(a.stored_chunk(m).unwrap().is_none(), "{name}: {m:?}");
        }
        arrays += 1;
    }
    assert_eq!(arrays, 22 + 15 + 6);
}

/// A converted case: its name, the report and every chunk event.
type Converted = (
    String,
    zv_legacy::convert::ConvertReport,
    Vec<(Vec<u64>, ChunkAction)>,
);

/// Converts every case of `dir` into `out/NAME`, returning the reports by name.
fn convert_all(dir: &Path, out: &Path) -> Vec<Converted> {
    let mut reports = Vec::new();
    for entry in manifest(dir) {
        let name = entry["name"].as_str().unwrap().to_owned();
        let legacy = zv_legacy::open(&dir.join("stores").join(&name)).unwrap();
        let target = Arc::new(FilesystemStore::new(out.join(&name)).unwrap());
        let mut events = Vec::new();
        let report = convert(&legacy, target.as_ref(), &mut |e| {
            events.push((e.coords.to_vec(), e.action));
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        reports.push((name, report, events));
    }
    reports
}

fn zarr_python_reads(v3: &Path, expected: &Path, cases: usize) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/check_v3.py");
    let out = run(&zarr_python(), &[&script, v3, expected]);
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["failures"], Value::Array(vec![]), "{out}");
    assert_eq!(report["checked"].as_array().unwrap().len(), cases, "{out}");
}

#[test]
fn converted_zarr04_stores_read_equal_in_zarr_python_and_pass_frames_through() {
    let dir = &written().zarr04;
    let out = tempfile::tempdir().unwrap();
    let reports = convert_all(dir, out.path());
    let entries = manifest(dir);
    for ((name, report, events), entry) in reports.iter().zip(&entries) {
        // zarr 0.4 chunks are full-size: every stored frame passes through unchanged.
        let stored = entry["stored"].as_u64().unwrap();
        assert_eq!(report.passed_through(), stored, "{name}");
        assert_eq!(report.reencoded(), 0, "{name}");
        let src = dir.join("stores").join(name).join("__zdata__");
        for (coords, action) in events {
            let file = coords.iter().map(u64::to_string).collect::<Vec<_>>();
            let v3 = out.path().join(name).join("c").join(file.join("/"));
            match action {
                ChunkAction::PassedThrough => assert_eq!(
                    std::fs::read(&v3).unwrap(),
                    std::fs::read(src.join(format!("{}.blosc", file.join(".")))).unwrap(),
                    "{name} {coords:?}: the v3 chunk is the zarr 0.4 frame"
                ),
                ChunkAction::Missing => assert!(!v3.exists(), "{name} {coords:?}"),
                ChunkAction::Reencoded => panic!("{name} {coords:?} re-encoded"),
            }
        }
    }
    zarr_python_reads(out.path(), dir, entries.len());
}

#[test]
fn converted_bcolz_stores_read_equal_in_zarr_python_and_only_leftovers_are_reencoded() {
    let dir = &written().bcolz;
    let out = tempfile::tempdir().unwrap();
    let reports = convert_all(dir, out.path());
    let mut passed = 0;
    let mut reencoded = 0;
    let mut columns = 0;
    for (name, report, events) in &reports {
        for a in &report.arrays {
            let root = if a.path.is_root() {
                dir.join("stores").join(name)
            } else {
                dir.join("stores")
                    .join(name)
                    .join(a.path.name().unwrap().as_str())
            };
            let array = zv_legacy::bcolz::open_carray(&root).unwrap();
            let rows = array.shape()[0];
            let chunklen = array.chunk_shape()[0];
            assert_eq!(a.passed_through, rows / chunklen, "{name} {}", a.path);
            assert_eq!(
                a.reencoded,
                u64::from(rows % chunklen != 0),
                "{name} {}",
                a.path
            );
            assert_eq!(a.missing, 0);
            passed += a.passed_through;
            reencoded += a.reencoded;
            columns += 1;
        }
        // Full chunks: the v3 chunk is the superchunk's blosc frame, byte for byte.
        if report.arrays.len() == 1 {
            for (coords, action) in events {
                let v3 = out.path().join(name).join("c").join(
                    coords
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join("/"),
                );
                let blp = dir
                    .join("stores")
                    .join(name)
                    .join(format!("data/__{}.blp", coords[0]));
                let frame = std::fs::read(&blp).unwrap()[16..].to_vec();
                let written = std::fs::read(&v3).unwrap();
                match action {
                    ChunkAction::PassedThrough => assert_eq!(written, frame, "{name} {coords:?}"),
                    ChunkAction::Reencoded => assert_ne!(written, frame, "{name} {coords:?}"),
                    ChunkAction::Missing => panic!("{name}: bcolz chunks are never missing"),
                }
            }
        }
    }
    assert_eq!(columns, 58 + 8);
    assert!(
        passed > 200 && reencoded > 20,
        "{passed} passed, {reencoded} re-encoded"
    );
    zarr_python_reads(out.path(), dir, manifest(dir).len() - 2 + 8);
}
