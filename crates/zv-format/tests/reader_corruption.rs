//! Corruption over copies of the reference fixtures: for each blob kind, the blob is
//! truncated, bit-flipped and deleted, and the store is read completely (`zv dump`'s reading).
//!
//! - truncation: always an error naming the blob's key;
//! - deletion: an error naming the key ("missing …"), except for the per-chunk cross-level
//!   blobs `links/±N/<key>`, whose absence is valid (a chunk without same-key parents);
//! - bit flips: never a panic. Structural blobs (fragment indices, manifests, group offsets)
//!   detect a flip of their header. A flip inside raw, unchecksummed values (coordinates,
//!   attribute values, in-range row numbers) cannot be detected by any reader: the same copies
//!   re-encoded with a `crc32c` codec turn every flip into an error naming the key.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use zv_core::metadata::{ExtensionMetadata, NodeMetadata};
use zv_core::store::{ListableStore, ReadableStore};
use zv_format::blob::Blobs;
use zv_format::reader::ZvStore;
use zv_store_fs::FilesystemStore;
use zv_testkit::env::fixtures_dir;

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

/// The kind of a blob path: its array path with the level, chunk key or blob name generalised.
fn kind_of(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    let mut k: Vec<String> = parts[1..parts.len() - 1]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let last = parts[parts.len() - 1];
    if ["data", "offsets", "present_mask", "manifests"].contains(&last) {
        k.push(last.to_owned());
    }
    // attribute names are part of the kind only as a placeholder
    if k.first().map(String::as_str) == Some("vertex_attributes")
        || k.first().map(String::as_str) == Some("object_attributes")
        || k.first().map(String::as_str) == Some("group_attributes")
        || k.first().map(String::as_str) == Some("link_attributes")
    {
        k[1] = "*".into();
    }
    k.join("/")
}

/// One blob (with a non-empty chunk file) per kind, per fixture.
fn blob_kinds(store_dir: &Path) -> BTreeMap<String, String> {
    let fs = FilesystemStore::new(store_dir).unwrap();
    let mut out = BTreeMap::new();
    for key in fs.list().unwrap() {
        let Some(path) = key.as_str().strip_suffix("/zarr.json") else {
            continue;
        };
        let Ok(NodeMetadata::Array(meta)) =
            NodeMetadata::from_json(&fs.get(&key).unwrap().unwrap())
        else {
            continue;
        };
        if meta.shape.first().copied().unwrap_or(0) == 0
            || !store_dir.join(path).join("c/0").is_file()
        {
            continue;
        }
        out.entry(kind_of(path)).or_insert_with(|| path.to_owned());
    }
    out
}

fn read_all(dir: &Path) -> Result<Value, String> {
    let store = ZvStore::open_url(dir.to_str().unwrap()).map_err(|e| e.to_string())?;
    zv_format::dump::dump(&store).map_err(|e| e.to_string())
}

fn fresh_copy(name: &str, tmp: &Path, tag: &str) -> PathBuf {
    let to = tmp.join(format!("{name}-{tag}.zarr"));
    let _ = std::fs::remove_dir_all(&to);
    copy_dir(&fixtures_dir().join(format!("{name}.zarr")), &to);
    to
}

const FIXTURES: [&str; 7] = [
    "points_basic",
    "points_binned",
    "streamlines_basic",
    "graph_basic",
    "skeleton_basic",
    "mesh_basic",
    "pyramid_points",
];

/// Kinds whose header a single flip of the first byte must break.
const STRUCTURAL: [&str; 4] = [
    "vertex_fragments",
    "link_fragments",
    "object_index/manifests",
    "groups/offsets",
];

#[test]
fn truncated_deleted_and_flipped_blobs() {
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut undetected_flips: BTreeMap<String, usize> = BTreeMap::new();
    for name in FIXTURES {
        let pristine = fresh_copy(name, tmp.path(), "pristine");
        let original = read_all(&pristine).unwrap();
        for (kind, blob) in blob_kinds(&pristine) {
            let chunk = PathBuf::from(&blob).join("c/0");
            let bytes = std::fs::read(pristine.join(&chunk)).unwrap();
            // truncate
            for cut in [bytes.len() / 2, bytes.len() - 1] {
                let copy = fresh_copy(name, tmp.path(), "t");
                std::fs::write(copy.join(&chunk), &bytes[..cut]).unwrap();
                let err = read_all(&copy).expect_err(&format!(
                    "{name}: truncated {blob} to {cut} bytes was accepted"
                ));
                assert!(
                    err.contains(&blob),
                    "{name}: truncation error does not name `{blob}`: {err}"
                );
                checked += 1;
            }
            // delete the blob node
            let copy = fresh_copy(name, tmp.path(), "d");
            std::fs::remove_dir_all(copy.join(&blob)).unwrap();
            match read_all(&copy) {
                Err(err) => assert!(
                    err.contains(&blob),
                    "{name}: deletion error does not name `{blob}`: {err}"
                ),
                Ok(doc) if kind.starts_with("links/+") || kind.starts_with("links/-") => {
                    assert_ne!(doc, original, "{name}: deleting {blob} changed nothing");
                }
                Ok(_) => panic!("{name}: deleting {blob} ({kind}) was not reported"),
            }
            checked += 1;
            // flip bits
            for (i, bit) in [(0usize, 0u8), (bytes.len() / 2, 3), (bytes.len() - 1, 7)] {
                let copy = fresh_copy(name, tmp.path(), "f");
                let mut bad = bytes.clone();
                bad[i] ^= 1 << bit;
                std::fs::write(copy.join(&chunk), &bad).unwrap();
                match read_all(&copy) {
                    Err(err) => assert!(
                        err.contains(&blob) || err.contains(name) || err.contains('`'),
                        "{name}: {err}"
                    ),
                    Ok(doc) => {
                        assert!(
                            !(i == 0 && STRUCTURAL.contains(&kind.as_str())),
                            "{name}: a flip of the first byte of {blob} was not detected"
                        );
                        if doc != original {
                            *undetected_flips.entry(kind.clone()).or_default() += 1;
                        }
                    }
                }
                checked += 1;
            }
        }
    }
    eprintln!("{checked} corruptions checked; flips inside unchecksummed values (undetectable): {undetected_flips:?}");
    assert!(checked > 300, "{checked}");
}

#[test]
fn with_crc32c_every_flip_is_an_error_naming_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let crc: Vec<ExtensionMetadata> =
        serde_json::from_value(serde_json::json!([{"name": "bytes"}, {"name": "crc32c"}])).unwrap();
    let mut checked = 0;
    for name in FIXTURES {
        let dir = fresh_copy(name, tmp.path(), "crc");
        let original = read_all(&dir).unwrap();
        let blobs = Blobs::new(Arc::new(FilesystemStore::new(&dir).unwrap()));
        let kinds = blob_kinds(&dir);
        // re-encode every byte blob with a checksum
        let fs = FilesystemStore::new(&dir).unwrap();
        for key in fs.list().unwrap() {
            let Some(path) = key.as_str().strip_suffix("/zarr.json") else {
                continue;
            };
            let Ok(NodeMetadata::Array(meta)) =
                NodeMetadata::from_json(&fs.get(&key).unwrap().unwrap())
            else {
                continue;
            };
            if meta.data_type != zv_core::data_type::DataType::UInt8 {
                continue; // the vlen manifests keep their zstd frames
            }
            let bytes = blobs.read_bytes(path).unwrap().unwrap();
            blobs.write_bytes(path, &bytes, &crc).unwrap();
        }
        assert_eq!(
            read_all(&dir).unwrap(),
            original,
            "{name}: re-encoding changed the content"
        );
        for (kind, blob) in kinds {
            if kind == "object_index/manifests" {
                continue;
            }
            let chunk = dir.join(&blob).join("c/0");
            let bytes = std::fs::read(&chunk).unwrap();
            for i in [0, bytes.len() / 3, bytes.len() - 5] {
                let mut bad = bytes.clone();
                bad[i] ^= 0x10;
                std::fs::write(&chunk, &bad).unwrap();
                let err =
                    read_all(&dir).expect_err(&format!("{name}: flip in {blob} byte {i} accepted"));
                assert!(
                    err.contains(&blob) && err.contains("checksum"),
                    "{name}: {err}"
                );
                checked += 1;
            }
            std::fs::write(&chunk, &bytes).unwrap();
        }
    }
    eprintln!("{checked} checksummed flips detected");
    assert!(checked > 100);
}
