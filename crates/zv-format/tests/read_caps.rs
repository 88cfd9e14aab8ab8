//! Every read of a key is capped by what its metadata allows (issue 14, resource bounds): a
//! chunk larger than its codecs can produce and a `zarr.json` larger than
//! `MAX_METADATA_BYTES` are errors naming the key, refused before they are read (the file
//! store learns the size first, so the oversized files here are sparse and cost nothing).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use zv_core::array::Array;
use zv_core::codec::COMPRESSOR_SLACK;
use zv_core::data_type::DataType;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata, MAX_METADATA_BYTES};
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_format::reader::ZvStore;
use zv_store_fs::FilesystemStore;
use zv_testkit::env::fixtures_dir;

fn codec(name: &str, config: serde_json::Value) -> ExtensionMetadata {
    serde_json::from_value(json!({"name": name, "configuration": config})).unwrap()
}

/// A 1-D uint8 array of 100 elements in one chunk at `/a` with `codecs`.
fn array(dir: &Path, codecs: Vec<ExtensionMetadata>) -> Array {
    zv_format::link_plugins();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir).unwrap());
    let meta = ArrayMetadata::new(vec![100], vec![100], DataType::UInt8, codecs).unwrap();
    Array::create(store, &NodePath::new("/a").unwrap(), meta).unwrap()
}

/// Grows the file at `path` to `len` bytes (sparse).
fn grow(path: &Path, len: u64) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_len(len).unwrap();
}

fn assert_too_large(err: String, key: &str) {
    assert!(
        err.contains(key) && err.contains("more than"),
        "not a too-large error naming `{key}`: {err}"
    );
}

#[test]
fn a_raw_chunk_larger_than_its_shape_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = array(dir.path(), vec![codec("bytes", json!({}))]);
    assert_eq!(a.chunk_cap(), 100);
    a.store_chunk(
        &[0],
        zv_core::codec::ArrayBytes::Fixed(vec![7u8; 100].into()),
    )
    .unwrap();
    assert!(a.retrieve_chunk_if_exists(&[0]).unwrap().is_some());
    grow(&dir.path().join("a/c/0"), 101);
    let err = a.retrieve_chunk_if_exists(&[0]).unwrap_err().to_string();
    assert_too_large(err, "a/c/0");
    let err = a.retrieve_encoded_chunk(&[0]).unwrap_err().to_string();
    assert_too_large(err, "a/c/0");
}

#[test]
fn a_checksummed_chunk_has_an_exact_cap() {
    let dir = tempfile::tempdir().unwrap();
    let a = array(
        dir.path(),
        vec![codec("bytes", json!({})), codec("crc32c", json!({}))],
    );
    assert_eq!(a.chunk_cap(), 104);
}

#[test]
fn a_compressed_chunk_has_a_generous_cap() {
    let dir = tempfile::tempdir().unwrap();
    let a = array(
        dir.path(),
        vec![
            codec("bytes", json!({})),
            codec("zstd", json!({"level": 3, "checksum": false})),
        ],
    );
    let cap = 100 + 100 / 8 + COMPRESSOR_SLACK;
    assert_eq!(a.chunk_cap(), cap);
    a.store_chunk(
        &[0],
        zv_core::codec::ArrayBytes::Fixed(vec![7u8; 100].into()),
    )
    .unwrap();
    assert!(a.retrieve_chunk_if_exists(&[0]).unwrap().is_some());
    grow(&dir.path().join("a/c/0"), cap + 1);
    let err = a.retrieve_chunk_if_exists(&[0]).unwrap_err().to_string();
    assert_too_large(err, "a/c/0");
}

#[test]
fn a_huge_zarr_json_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    array(dir.path(), vec![codec("bytes", json!({}))]);
    grow(&dir.path().join("a/zarr.json"), MAX_METADATA_BYTES + 1);
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir.path()).unwrap());
    let err = zv_core::array::read_node_metadata(store.as_ref(), &NodePath::new("/a").unwrap())
        .unwrap_err()
        .to_string();
    assert_too_large(err, "a/zarr.json");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}

#[test]
fn a_zv_store_with_an_oversized_blob_or_document() {
    let tmp = tempfile::tempdir().unwrap();
    let read = |dir: &Path| -> Result<serde_json::Value, String> {
        let store = ZvStore::open_url(dir.to_str().unwrap()).map_err(|e| e.to_string())?;
        zv_format::dump::dump(&store).map_err(|e| e.to_string())
    };
    // a raw vertex blob one byte larger than its shape
    let copy = tmp.path().join("blob.zarr");
    copy_dir(&fixtures_dir().join("points_basic.zarr"), &copy);
    let chunk = copy.join("0/vertices/0.0.0/c/0");
    let len = std::fs::metadata(&chunk).unwrap().len();
    grow(&chunk, len + 1);
    assert_too_large(read(&copy).unwrap_err(), "0/vertices/0.0.0/c/0");
    // a level document of 64 MiB + 1
    let copy = tmp.path().join("doc.zarr");
    copy_dir(&fixtures_dir().join("points_basic.zarr"), &copy);
    grow(&copy.join("0/zarr.json"), MAX_METADATA_BYTES + 1);
    assert_too_large(read(&copy).unwrap_err(), "0/zarr.json");
}
