//! Corrupt and hostile legacy stores: each defect gives an error naming the file at fault,
//! never a panic, and nothing is allocated beyond what the metadata and the file sizes
//! justify. Stores are built here with zv's own blosc codec; a property test feeds arbitrary
//! bytes as a superchunk, a `__zmeta__` and a chunk file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::json;
use zv_codecs::blosc::{BloscCodec, BloscCompressor, BloscConfig, BloscShuffle};
use zv_legacy::Legacy;

fn blosc(data: &[u8], typesize: u32) -> Vec<u8> {
    BloscCodec::new(
        &BloscConfig {
            cname: BloscCompressor::Lz4,
            clevel: 5,
            shuffle: BloscShuffle::Shuffle,
            typesize: Some(typesize),
            blocksize: 0,
        },
        4,
    )
    .unwrap()
    .compress(data)
    .unwrap()
}

fn i32s(range: std::ops::Range<i32>) -> Vec<u8> {
    range.flat_map(i32::to_le_bytes).collect()
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A valid zarr 0.4 array: shape [10], chunks [4], `<i4`, chunks 0..3 stored.
fn zarr04(dir: &Path) -> PathBuf {
    let root = dir.join("z");
    write(
        &root.join("__zmeta__"),
        json!({"shape": [10], "chunks": [4], "dtype": "<i4", "fill_value": 0, "cname": "lz4", "clevel": 5, "shuffle": 1})
            .to_string()
            .as_bytes(),
    );
    for i in 0..3 {
        write(
            &root.join(format!("__zdata__/{i}.blosc")),
            &blosc(&i32s(i * 4..i * 4 + 4), 4),
        );
    }
    root
}

fn superchunk(frame: &[u8]) -> Vec<u8> {
    let mut out = b"blpk\x01\0\0\0".to_vec();
    out.extend(1i64.to_le_bytes());
    out.extend(frame);
    out
}

/// A valid bcolz carray: 150 rows of int32, chunklen 64 (two full chunks, compressed, and a
/// leftover of 22 rows).
fn carray(dir: &Path) -> PathBuf {
    let root = dir.join("c");
    write(
        &root.join("meta/storage"),
        br#"{"dtype": "int32", "cparams": {"clevel": 5, "shuffle": 1, "cname": "lz4", "quantize": 0}, "chunklen": 64, "expectedlen": 150, "dflt": 0}"#,
    );
    write(
        &root.join("meta/sizes"),
        br#"{"shape": [150], "nbytes": 600, "cbytes": 0}"#,
    );
    for (i, rows) in [(0, 0..64), (1, 64..128), (2, 128..150)] {
        write(
            &root.join(format!("data/__{i}.blp")),
            &superchunk(&blosc(&i32s(rows), 4)),
        );
    }
    root
}

/// A change made to a file (or a store root) by a test case.
type Corruption = Box<dyn Fn(&Path)>;

/// Opens and reads everything; the error, if any.
fn read(root: &Path) -> Result<(), zv_legacy::Error> {
    match zv_legacy::open(root)? {
        Legacy::Array(a) => a.read_all().map(|_| ()),
        Legacy::Table(t) => {
            for (_, a) in t.columns() {
                a.read_all()?;
            }
            Ok(())
        }
    }
}

/// Asserts that reading fails with an error naming `file`.
fn fails_naming(root: &Path, file: &Path, what: &str) {
    let e = read(root).expect_err(what);
    assert_eq!(e.path(), Some(file), "{what}: {e}");
    assert!(
        e.to_string().contains(&file.display().to_string()),
        "{what}: {e}"
    );
}

#[test]
fn the_valid_stores_read() {
    let dir = tempfile::tempdir().unwrap();
    let Legacy::Array(z) = zv_legacy::open(&zarr04(dir.path())).unwrap() else {
        panic!()
    };
    assert_eq!(z.read_all().unwrap(), i32s(0..10));
    let Legacy::Array(c) = zv_legacy::open(&carray(dir.path())).unwrap() else {
        panic!()
    };
    assert_eq!(c.read_all().unwrap(), i32s(0..150));
}

#[test]
fn corrupt_superchunks_name_the_file() {
    let cases: Vec<(&str, Corruption)> = vec![
        (
            "wrong magic",
            Box::new(|f| {
                let mut b = std::fs::read(f).unwrap();
                b[..4].copy_from_slice(b"blpx");
                write(f, &b);
            }),
        ),
        (
            "wrong version",
            Box::new(|f| {
                let mut b = std::fs::read(f).unwrap();
                b[4] = 2;
                write(f, &b);
            }),
        ),
        (
            "nchunks 2",
            Box::new(|f| {
                let mut b = std::fs::read(f).unwrap();
                b[8..16].copy_from_slice(&2i64.to_le_bytes());
                write(f, &b);
            }),
        ),
        (
            "truncated frame",
            Box::new(|f| {
                let b = std::fs::read(f).unwrap();
                write(f, &b[..b.len() - 3]);
            }),
        ),
        ("truncated header", Box::new(|f| write(f, b"blpk\x01"))),
        (
            "blosc nbytes disagrees with chunklen",
            Box::new(|f| {
                write(f, &superchunk(&blosc(&i32s(0..3), 4)));
            }),
        ),
        (
            "frame body garbage",
            Box::new(|f| {
                let mut b = std::fs::read(f).unwrap();
                let n = b.len();
                for x in &mut b[16 + 16 + 4..n] {
                    *x = 0xff;
                }
                write(f, &b);
            }),
        ),
        (
            "file larger than a chunk can be",
            Box::new(|f| {
                let mut b = std::fs::read(f).unwrap();
                b.extend(vec![0u8; 1000]);
                write(f, &b);
            }),
        ),
        (
            "missing superchunk",
            Box::new(|f| std::fs::remove_file(f).unwrap()),
        ),
    ];
    for (what, corrupt) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = carray(dir.path());
        let file = root.join("data/__1.blp");
        corrupt(&file);
        fails_naming(&root, &file, what);
    }
}

#[test]
fn a_leftover_frame_of_the_wrong_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = carray(dir.path());
    let file = root.join("data/__2.blp");
    write(&file, &superchunk(&blosc(&i32s(0..3), 4)));
    fails_naming(&root, &file, "leftover of 3 rows where meta/sizes says 22");
}

#[test]
fn corrupt_zarr04_chunks_name_the_file() {
    let cases: Vec<(&str, Corruption)> = vec![
        (
            "__zmeta__ chunks do not match the frame",
            Box::new(|f| {
                write(f, &blosc(&i32s(0..5), 4));
            }),
        ),
        (
            "truncated frame",
            Box::new(|f| {
                let b = std::fs::read(f).unwrap();
                write(f, &b[..b.len() - 1]);
            }),
        ),
        (
            "frame shorter than its header",
            Box::new(|f| write(f, &[2, 1, 0x21])),
        ),
        (
            "not blosc at all",
            Box::new(|f| write(f, b"hello, world, this is not blosc")),
        ),
        (
            "file larger than a chunk can be",
            Box::new(|f| write(f, &[0u8; 33])),
        ),
    ];
    for (what, corrupt) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = zarr04(dir.path());
        let file = root.join("__zdata__/1.blosc");
        corrupt(&file);
        fails_naming(&root, &file, what);
    }
}

#[test]
fn bad_metadata_names_the_metadata_file() {
    let zmeta = |v: serde_json::Value| {
        move |root: &Path| write(&root.join("__zmeta__"), v.to_string().as_bytes())
    };
    let base = json!({"shape": [10], "chunks": [4], "dtype": "<i4", "fill_value": 0, "cname": "lz4", "clevel": 5, "shuffle": 1});
    let with = |k: &str, v: serde_json::Value| {
        let mut b = base.clone();
        b[k] = v;
        b
    };
    let cases: Vec<(&str, Corruption)> = vec![
        ("object dtype", Box::new(zmeta(with("dtype", json!("|O"))))),
        (
            "unicode dtype",
            Box::new(zmeta(with("dtype", json!("<U4")))),
        ),
        (
            "chunks of another rank",
            Box::new(zmeta(with("chunks", json!([4, 4])))),
        ),
        (
            "chunks too large for a frame",
            Box::new(zmeta(with("chunks", json!([u64::MAX / 2])))),
        ),
        (
            "shape not a list",
            Box::new(zmeta(with("shape", json!(10)))),
        ),
        (
            "fill value of the wrong type",
            Box::new(zmeta(with("fill_value", json!("x")))),
        ),
        (
            "not JSON",
            Box::new(|root: &Path| write(&root.join("__zmeta__"), b"{\"shape\": [1")),
        ),
        (
            "huge metadata file",
            Box::new(|root: &Path| {
                let f = std::fs::File::create(root.join("__zmeta__")).unwrap();
                f.set_len(zv_legacy::files::MAX_METADATA_BYTES + 1).unwrap();
            }),
        ),
    ];
    for (what, corrupt) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = zarr04(dir.path());
        corrupt(&root);
        fails_naming(&root, &root.join("__zmeta__"), what);
    }
    // bcolz: object dtype, a zero chunklen, `__attrs__` that is not an object.
    for (what, file, bytes) in [
        (
            "object dtype",
            "meta/storage",
            &br#"{"dtype": "object", "chunklen": 4}"#[..],
        ),
        (
            "zero chunklen",
            "meta/storage",
            br#"{"dtype": "int32", "chunklen": 0}"#,
        ),
        ("negative shape", "meta/sizes", br#"{"shape": [-10]}"#),
        ("attributes not an object", "__attrs__", b"[1, 2]"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = carray(dir.path());
        write(&root.join(file), bytes);
        fails_naming(&root, &root.join(file), what);
    }
}

#[test]
fn ctable_column_names_cannot_leave_the_table() {
    for names in [
        json!(["../c"]),
        json!(["a/b"]),
        json!([".."]),
        json!(["x", "x"]),
        json!("c"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        carray(dir.path());
        let file = dir.path().join("__rootdirs__");
        write(&file, json!({"names": names}).to_string().as_bytes());
        fails_naming(dir.path(), &file, &names.to_string());
    }
}

#[test]
fn an_absent_directory_is_not_a_legacy_store() {
    let dir = tempfile::tempdir().unwrap();
    let e = zv_legacy::open(&dir.path().join("nothing")).unwrap_err();
    assert!(e.to_string().contains("nothing"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_superchunk_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), keep_header in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = carray(dir.path());
        let file = root.join("data/__0.blp");
        let content = if keep_header { superchunk(&bytes) } else { bytes };
        write(&file, &content);
        if let Err(e) = read(&root) {
            prop_assert_eq!(e.path(), Some(file.as_path()));
        }
    }

    #[test]
    fn arbitrary_chunk_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..40), header in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let root = zarr04(dir.path());
        let file = root.join("__zdata__/0.blosc");
        // With a plausible header (version 2, 16 bytes decoded) the body is reached.
        let mut content = if header { vec![2, 1, 0x21, 4, 16, 0, 0, 0, 16, 0, 0, 0] } else { Vec::new() };
        if header {
            content.extend(((bytes.len() + 16) as u32).to_le_bytes());
        }
        content.extend(&bytes);
        write(&file, &content);
        if let Err(e) = read(&root) {
            prop_assert_eq!(e.path(), Some(file.as_path()));
        }
    }

    #[test]
    fn arbitrary_zmeta_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let dir = tempfile::tempdir().unwrap();
        let root = zarr04(dir.path());
        write(&root.join("__zmeta__"), &bytes);
        let _ = read(&root);
    }

    #[test]
    fn arbitrary_zmeta_fields_never_panic(
        shape in prop::collection::vec(0u64..50, 0..3),
        chunks in prop::collection::vec(0u64..8, 0..3),
        dtype in prop::sample::select(vec!["<i4", ">f8", "|b1", "|S3", "<c8", "|O", "<U2", "x"]),
        fill in prop::sample::select(vec![json!(null), json!(1), json!("NaN"), json!(true), json!("ab"), json!([1, 2])]),
        shuffle in 0u64..4,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = zarr04(dir.path());
        let meta = json!({"shape": shape, "chunks": chunks, "dtype": dtype, "fill_value": fill, "cname": "lz4", "clevel": 5, "shuffle": shuffle});
        write(&root.join("__zmeta__"), meta.to_string().as_bytes());
        let _ = read(&root);
    }
}
