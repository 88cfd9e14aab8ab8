//! zv reads the ZV 0.9 stores zarr-vectors 0.9.2 writes: random stores of every geometry
//! (point clouds, polylines, streamlines, graphs, skeletons, meshes, lines), in 0.9.2's default layout
//! and its sharded layout (with sparse object ids), dumped by 0.9.2's own readers
//! (`tests/interop/zv09_dump.py`) and by `zv dump`, compare equal in the logical scope and
//! in the link attributes (graphs and skeletons carry a float and an integer one).
//! `zv info` reads every one. Corrupt 0.9
//! stores (metadata, vertex cells, link cells, link attribute cells and segments) give errors
//! naming the key.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::zv09::{compare, make, zv09_dump};
use serde_json::Value;
use zv_testkit::env::zv09_python;

/// The geometries 0.9.2 writes.
const READ: &[&str] = &[
    "point_cloud",
    "polyline",
    "streamline",
    "graph",
    "skeleton",
    "mesh",
    "line",
];
const SEEDS: &[u64] = &[1, 2, 3];

fn zv(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_zv"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn zv_dumps_what_zarr_vectors_0_9_2_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    let mut link_rows = (0, 0);
    for &seed in SEEDS {
        let sub = dir.path().join(seed.to_string());
        let stores = make(&sub, seed, READ);
        // one 0.9.2 process dumps every store of the seed
        let paths: Vec<PathBuf> = stores.iter().map(|(_, s)| s.clone()).collect();
        zv09_dump(&paths, &sub, false);
        for (name, store) in stores {
            let expected = sub.join(format!("{name}.expected.json"));
            let out = zv(&["dump".as_ref(), store.as_os_str()]);
            assert!(
                out.status.success(),
                "zv dump {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let info = zv(&["info".as_ref(), store.as_os_str()]);
            let text = String::from_utf8_lossy(&info.stdout);
            let geometry = name.rsplit_once('-').unwrap().0;
            assert!(
                info.status.success()
                    && text.starts_with(&format!("ZV 0.9.2 store, geometry {geometry}")),
                "zv info {name}: {text}{}",
                String::from_utf8_lossy(&info.stderr)
            );
            let actual = sub.join(format!("{name}.zv.json"));
            std::fs::write(&actual, &out.stdout).unwrap();
            // the logical scope and the link attributes (per chunk, and per cross-chunk record)
            if let Some(text) = compare(&zv09_python(), &expected, &actual, "^/omitted", true) {
                failures.push(format!("seed {seed} {name}:\n{text}"));
            }
            let (intra, cross) = link_attribute_rows(&expected);
            link_rows = (link_rows.0 + intra, link_rows.1 + cross);
            compared += 1;
        }
    }
    assert_eq!(compared, SEEDS.len() * READ.len() * 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // graphs and skeletons carry two link attributes, on intra- and cross-chunk records
    assert!(link_rows.0 > 0 && link_rows.1 > 0, "{link_rows:?}");
}

/// The link attribute rows 0.9.2 read in the dump `path`: (intra-chunk, cross-chunk).
fn link_attribute_rows(path: &Path) -> (usize, usize) {
    let d: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let count = |v: &Value| v.as_array().map_or(0, Vec::len);
    let mut rows = (0, 0);
    for level in d["levels"].as_object().unwrap().values() {
        for per_delta in level["link_attributes"].as_object().unwrap().values() {
            for chunks in per_delta["0"]["chunks"].as_object().unwrap().values() {
                rows.0 += count(chunks);
            }
        }
        for per_delta in level["cross_chunk_link_attributes"]
            .as_object()
            .unwrap()
            .values()
        {
            rows.1 += count(&per_delta["0"]["values"]);
        }
    }
    rows
}

/// Rewrites `key` (relative to `store`) with `edit` applied to its text.
fn edit(store: &Path, key: &str, edit: impl FnOnce(&mut Value)) {
    let path = store.join(key);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut doc);
    std::fs::write(&path, doc.to_string()).unwrap();
}

fn dump_error(store: &Path) -> String {
    let out = zv(&["dump".as_ref(), store.as_os_str()]);
    assert!(!out.status.success(), "a corrupt store dumped");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn corrupt_zero_nine_stores_give_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let stores = make(dir.path(), 11, &["point_cloud"]);
    let fresh = |i: usize| {
        let to = dir.path().join(format!("case{i}"));
        let status = Command::new("cp")
            .arg("-r")
            .arg(&stores[0].1)
            .arg(&to)
            .status()
            .unwrap();
        assert!(status.success());
        to
    };
    // zv validate checks 0.9 stores (crates/zv-cli/tests/validate_zv09.rs has the rules)
    let out = zv(&["validate".as_ref(), stores[0].1.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // a wrong grid origin: the first non-empty chunk falls outside the grid or into an empty cell
    let s = fresh(0);
    edit(&s, "0/vertices/zarr.json", |d| {
        d["attributes"]["chunk_grid_origin"] = serde_json::json!([0, 0]);
    });
    let e = dump_error(&s);
    assert!(
        e.contains("0/vertices/zarr.json") && e.contains("chunk_grid_origin"),
        "{e}"
    );
    // a truncated vlen cell
    let s = fresh(1);
    let cell = first_cell(&s.join("0/vertices/c"));
    let bytes = std::fs::read(&cell).unwrap();
    std::fs::write(&cell, &bytes[..bytes.len() - 3]).unwrap();
    let e = dump_error(&s);
    let rel = cell.strip_prefix(&s).unwrap().to_str().unwrap().to_owned();
    assert!(e.contains(&rel), "{e} (expected {rel})");
    // an object id table of the wrong length
    let s = fresh(2);
    edit(&s, "0/object_index/zarr.json", |d| {
        d["attributes"]["num_objects"] = serde_json::json!(1);
    });
    let e = dump_error(&s);
    assert!(e.contains("0/object_index"), "{e}");
    // nonempty_chunks that are not chunk keys
    let s = fresh(3);
    edit(&s, "0/vertex_fragments/zarr.json", |d| {
        d["attributes"]["nonempty_chunks"] = serde_json::json!(["x.y.z"]);
    });
    let e = dump_error(&s);
    assert!(e.contains("0/vertex_fragments/zarr.json"), "{e}");
}

/// A cell file of the grid array whose chunks are under `dir`.
fn first_cell(dir: &Path) -> PathBuf {
    let mut p = dir.to_path_buf();
    while p.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&p)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        p = entries.into_iter().next().unwrap();
    }
    p
}

/// The single element of a `vlen-bytes` chunk file of one cell: `(u32 count, u32 length, bytes)`.
fn vlen_cell(path: &Path) -> Vec<u8> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..4], &1u32.to_le_bytes(), "{}", path.display());
    let n = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    b[8..8 + n].to_vec()
}

fn write_vlen_cell(path: &Path, element: &[u8]) {
    let mut b = 1u32.to_le_bytes().to_vec();
    b.extend_from_slice(&(element.len() as u32).to_le_bytes());
    b.extend_from_slice(element);
    std::fs::write(path, b).unwrap();
}

/// The segments of `<store>/0/links/0` that hold cells: (intra, first cross-chunk one).
fn link_segments(store: &Path) -> (PathBuf, PathBuf) {
    let fam = store.join("0/links/0");
    let mut segs: Vec<PathBuf> = std::fs::read_dir(&fam)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("c").is_dir())
        .collect();
    segs.sort();
    let intra = segs.iter().position(|p| p.ends_with("0.0.0")).unwrap();
    let intra = segs.remove(intra);
    (intra, segs.remove(0))
}

#[test]
fn corrupt_zero_nine_link_cells_give_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let stores = make(dir.path(), 13, &["graph"]);
    let default = &stores.iter().find(|(n, _)| n == "graph-default").unwrap().1;
    let fresh = |i: usize| {
        let to = dir.path().join(format!("case{i}"));
        let status = Command::new("cp")
            .arg("-r")
            .arg(default)
            .arg(&to)
            .status()
            .unwrap();
        assert!(status.success());
        to
    };
    let rel = |s: &Path, p: &Path| p.strip_prefix(s).unwrap().to_str().unwrap().to_owned();
    // a truncated cross-chunk cell
    let s = fresh(0);
    let (_, cross) = link_segments(&s);
    let cell = first_cell(&cross.join("c"));
    let bytes = std::fs::read(&cell).unwrap();
    std::fs::write(&cell, &bytes[..bytes.len() - 5]).unwrap();
    let e = dump_error(&s);
    assert!(e.contains(&rel(&s, &cell)), "{e}");
    // a perm_idx that is not a permutation
    let s = fresh(1);
    let (_, cross) = link_segments(&s);
    let cell = first_cell(&cross.join("c"));
    let mut el = vlen_cell(&cell);
    let k = i64::from_le_bytes(el[..8].try_into().unwrap()) as usize;
    let first = 8 * (1 + k);
    el[first..first + 8].copy_from_slice(&7i64.to_le_bytes());
    write_vlen_cell(&cell, &el);
    let e = dump_error(&s);
    assert!(e.contains(&rel(&s, &cell)) && e.contains("perm_idx"), "{e}");
    // a cross-chunk record naming a row its chunk does not have
    let s = fresh(2);
    let (_, cross) = link_segments(&s);
    let cell = first_cell(&cross.join("c"));
    let mut el = vlen_cell(&cell);
    el[first + 8..first + 16].copy_from_slice(&999i64.to_le_bytes());
    write_vlen_cell(&cell, &el);
    let e = dump_error(&s);
    assert!(e.contains("0/links/0") && e.contains("999"), "{e}");
    // intra-chunk rows naming vertices the chunk does not have
    let s = fresh(3);
    let (intra, _) = link_segments(&s);
    let cell = first_cell(&intra.join("c"));
    let el: Vec<u8> = vlen_cell(&cell)
        .chunks(8)
        .flat_map(|_| 999i64.to_le_bytes())
        .collect();
    write_vlen_cell(&cell, &el);
    let e = dump_error(&s);
    assert!(e.contains("0/links/0/0.0.0"), "{e}");
    // a family whose link_width the geometry does not allow
    let s = fresh(4);
    edit(&s, "0/links/0/zarr.json", |d| {
        d["attributes"]["link_width"] = serde_json::json!(5);
    });
    let e = dump_error(&s);
    assert!(e.contains("0/links/0/zarr.json"), "{e}");
    // an offsets segment that is not one
    let s = fresh(5);
    let (_, cross) = link_segments(&s);
    std::fs::rename(&cross, s.join("0/links/0/+1.x.0")).unwrap();
    let e = dump_error(&s);
    assert!(e.contains("0/links/0/+1.x.0/zarr.json"), "{e}");
}

#[test]
fn corrupt_zero_nine_link_attribute_cells_give_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let stores = make(dir.path(), 13, &["graph"]);
    let default = &stores.iter().find(|(n, _)| n == "graph-default").unwrap().1;
    let fresh = |i: usize| {
        let to = dir.path().join(format!("case{i}"));
        let status = Command::new("cp")
            .arg("-r")
            .arg(default)
            .arg(&to)
            .status()
            .unwrap();
        assert!(status.success());
        to
    };
    let rel = |s: &Path, p: &Path| p.strip_prefix(s).unwrap().to_str().unwrap().to_owned();
    // the segments of the float32 attribute `weight`: (intra, first cross-chunk one)
    let segments = |s: &Path| {
        let (intra, cross) = link_segments(s);
        let at = |p: &Path| {
            let seg = p.file_name().unwrap();
            s.join("0/link_attributes/weight/0").join(seg)
        };
        (at(&intra), at(&cross))
    };
    // the store reads, and validates, as 0.9.2 wrote it
    let out = zv(&["validate".as_ref(), default.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // each edit, on a fresh copy: (what, the cell edited, its new element or None to delete it)
    type Edit = fn(Vec<u8>) -> Option<Vec<u8>>;
    let cases: [(&str, bool, Edit); 5] = [
        ("an intra-chunk cell of a wrong length", true, |mut e| {
            e.truncate(e.len() - 2);
            Some(e)
        }),
        ("an intra-chunk cell with a row too many", true, |mut e| {
            e.extend_from_slice(&1f32.to_le_bytes());
            Some(e)
        }),
        ("a cross-chunk cell of a wrong length", false, |mut e| {
            e.push(0);
            Some(e)
        }),
        ("a cross-chunk cell with a row too few", false, |mut e| {
            e.truncate(e.len() - 4);
            Some(e)
        }),
        ("a cross-chunk cell deleted", false, |_| None),
    ];
    for (i, (what, intra, f)) in cases.into_iter().enumerate() {
        let s = fresh(i);
        let (intra_seg, cross_seg) = segments(&s);
        let seg = if intra { intra_seg } else { cross_seg };
        let cell = first_cell(&seg.join("c"));
        match f(vlen_cell(&cell)) {
            Some(el) => write_vlen_cell(&cell, &el),
            None => std::fs::remove_file(&cell).unwrap(),
        }
        let e = dump_error(&s);
        assert!(e.contains(&rel(&s, &cell)), "{what}: {e}");
        let out = zv(&["validate".as_ref(), s.as_os_str()]);
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.code() == Some(1) && report.contains(&rel(&s, &cell)),
            "validate, {what}: {report}"
        );
    }
    // a segment of another dtype than the attribute's
    let s = fresh(8);
    let (_, cross) = segments(&s);
    let key = format!("{}/zarr.json", rel(&s, &cross));
    edit(&s, &key, |d| {
        d["attributes"]["dtype"] = serde_json::json!("int32")
    });
    let e = dump_error(&s);
    assert!(e.contains(&key) && e.contains("dtype"), "{e}");
    // an attribute segment the links family does not have
    let s = fresh(9);
    let (_, cross) = segments(&s);
    let stray = s.join("0/link_attributes/weight/0/+7.0.0");
    std::fs::rename(&cross, &stray).unwrap();
    let e = dump_error(&s);
    assert!(e.contains("0/link_attributes/weight/0/+7.0.0"), "{e}");
}
