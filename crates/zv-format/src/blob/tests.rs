//! Blob reads and writes through the Zarr layer: documents, empty blobs, several chunks, packs
//! and the keys errors name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::key::StoreKey;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_store_mem::MemoryStore;

use super::{BlobData, Blobs};

fn blobs() -> (Arc<dyn Store>, Blobs) {
    crate::link_plugins();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    (store.clone(), Blobs::new(store))
}

fn raw() -> Vec<ExtensionMetadata> {
    vec![ExtensionMetadata::new("bytes")]
}

fn get(store: &Arc<dyn Store>, key: &str) -> Option<Vec<u8>> {
    store
        .get(&StoreKey::new(key).unwrap())
        .unwrap()
        .map(|b| b.to_vec())
}

#[test]
fn a_written_blob_is_one_chunk_and_the_document_of_zv_core() {
    let (store, blobs) = blobs();
    blobs
        .write_bytes("0/vertices/0.0", b"abcdef", &raw())
        .unwrap();
    assert_eq!(get(&store, "0/vertices/0.0/c/0").unwrap(), b"abcdef");
    let meta = ArrayMetadata::new(vec![6], vec![6], DataType::UInt8, raw()).unwrap();
    assert_eq!(
        get(&store, "0/vertices/0.0/zarr.json").unwrap(),
        meta.to_json_pretty()
    );
    assert_eq!(
        blobs.read("0/vertices/0.0").unwrap(),
        Some(BlobData::Bytes(b"abcdef".to_vec()))
    );
    assert_eq!(blobs.read_bytes("0/vertices/1.0").unwrap(), None);
}

#[test]
fn an_empty_blob_has_shape_zero_chunk_one_and_no_chunk_file() {
    let (store, blobs) = blobs();
    blobs.write_bytes("a/b", b"xyz", &raw()).unwrap();
    blobs.write_bytes("a/b", b"", &raw()).unwrap();
    assert_eq!(get(&store, "a/b/c/0"), None, "the old chunk is removed");
    let doc: serde_json::Value =
        serde_json::from_slice(&get(&store, "a/b/zarr.json").unwrap()).unwrap();
    assert_eq!(doc["shape"], json!([0]));
    assert_eq!(
        doc["chunk_grid"]["configuration"]["chunk_shape"],
        json!([1])
    );
    assert_eq!(blobs.read_bytes("a/b").unwrap(), Some(Vec::new()));
}

#[test]
fn variable_length_arrays_of_several_sparse_chunks_read_in_order() {
    let (store, blobs) = blobs();
    let codecs: Vec<ExtensionMetadata> =
        serde_json::from_value(json!([{"name": "vlen-bytes", "configuration": {}},
            {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]))
        .unwrap();
    let meta = ArrayMetadata::new(
        vec![40_000],
        vec![16_384],
        DataType::VariableLengthBytes,
        codecs,
    )
    .unwrap();
    let path = NodePath::new("0/object_index/manifests").unwrap();
    let array = Array::create(store.clone(), &path, meta).unwrap();
    let chunk = |base: u32| -> Vec<Vec<u8>> {
        (0..16_384u32)
            .map(|i| (base + i).to_le_bytes().to_vec())
            .collect()
    };
    // chunk 1 is missing: its elements are the fill value (empty)
    array
        .store_chunk(&[0], ArrayBytes::from_elements(chunk(0)))
        .unwrap();
    array
        .store_chunk(&[2], ArrayBytes::from_elements(chunk(32_768)))
        .unwrap();
    let Some(BlobData::Elements(items)) = blobs.read("0/object_index/manifests").unwrap() else {
        panic!("not elements");
    };
    assert_eq!(items.len(), 40_000);
    assert_eq!(items[5], 5u32.to_le_bytes());
    assert!(items[16_384..32_768].iter().all(Vec::is_empty));
    assert_eq!(items[39_999], 39_999u32.to_le_bytes());
    let err = blobs
        .read_bytes("0/object_index/manifests")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("0/object_index/manifests/zarr.json") && err.contains("variable-length"),
        "{err}"
    );
}

#[test]
fn a_corrupt_chunk_is_an_error_naming_the_chunk_key() {
    let (store, blobs) = blobs();
    blobs.write_bytes("g/k", &[1, 2, 3, 4], &raw()).unwrap();
    store
        .set(&StoreKey::new("g/k/c/0").unwrap(), vec![1u8, 2].into())
        .unwrap();
    let err = blobs.read_bytes("g/k").unwrap_err().to_string();
    assert!(err.contains("`g/k/c/0`"), "{err}");
    store
        .set(
            &StoreKey::new("g/k/zarr.json").unwrap(),
            b"{".to_vec().into(),
        )
        .unwrap();
    let err = blobs.read_bytes("g/k").unwrap_err().to_string();
    assert!(err.contains("`g/k/zarr.json`"), "{err}");
    let err = blobs.read_bytes("g/../x").unwrap_err().to_string();
    assert!(err.contains("invalid"), "{err}");
}

#[test]
fn packed_blobs_are_sliced_out_of_their_pack() {
    let (store, blobs) = blobs();
    blobs
        .write_bytes("0/vertices/__shard_000000", b"aaabbbb", &raw())
        .unwrap();
    blobs.write_bytes("0/vertices/2.0", b"cc", &raw()).unwrap();
    let key = StoreKey::new("0/vertices/__shard_000000/zarr.json").unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&store.get(&key).unwrap().unwrap()).unwrap();
    doc["attributes"]["shard_index"] = json!({"0.0": [0, 3], "1.0": [3, 4], "9.9": [5, 9]});
    store
        .set(&key, serde_json::to_vec(&doc).unwrap().into())
        .unwrap();
    assert_eq!(blobs.read_bytes("0/vertices/0.0").unwrap().unwrap(), b"aaa");
    assert_eq!(
        blobs.read_bytes("0/vertices/1.0").unwrap().unwrap(),
        b"bbbb"
    );
    assert_eq!(blobs.read_bytes("0/vertices/2.0").unwrap().unwrap(), b"cc");
    assert_eq!(blobs.read_bytes("0/vertices/3.0").unwrap(), None);
    assert_eq!(
        blobs.blob_names("0/vertices").unwrap(),
        vec!["0.0", "1.0", "2.0", "9.9"]
    );
    let err = blobs.read_bytes("0/vertices/9.9").unwrap_err().to_string();
    assert!(
        err.contains("0/vertices/__shard_000000/zarr.json") && err.contains("outside"),
        "{err}"
    );
}

#[test]
fn groups_and_arrays_are_told_apart() {
    let (_, blobs) = blobs();
    let attrs = json!({"zv_array": "vertices"}).as_object().unwrap().clone();
    blobs.write_group("0/vertices", attrs.clone()).unwrap();
    blobs.write_bytes("0/vertices/0.0", b"x", &raw()).unwrap();
    assert_eq!(blobs.group_attributes("0/vertices").unwrap(), Some(attrs));
    assert!(blobs.group_attributes("0/vertices/0.0").is_err());
    assert!(blobs.read("0/vertices").is_err());
    assert_eq!(blobs.children("0").unwrap(), vec!["vertices"]);
    assert!(blobs.exists("0/vertices").unwrap());
    assert!(!blobs.exists("1").unwrap());
    assert!(blobs.node("").unwrap().is_none());
}

/// Missing chunks read as the fill value, but the shape alone may not size more than
/// `MAX_FILL_BYTES` of it (found by the `whole_store` fuzz target: a blob's shape raised to
/// hundreds of millions with its chunk deleted took 40 s and as many bytes to read).
#[test]
fn fill_for_missing_chunks_is_bounded_by_what_is_stored() {
    let (store, blobs) = blobs();
    let set_shape = |n: u64, chunk: u64| {
        let key = StoreKey::new("g/k/zarr.json").unwrap();
        let mut doc: serde_json::Value =
            serde_json::from_slice(&store.get(&key).unwrap().unwrap()).unwrap();
        doc["shape"] = json!([n]);
        doc["chunk_grid"]["configuration"]["chunk_shape"] = json!([chunk]);
        store
            .set(&key, doc.to_string().into_bytes().into())
            .unwrap();
        store.delete(&StoreKey::new("g/k/c/0").unwrap()).unwrap();
    };
    blobs.write_bytes("g/k", &[1, 2, 3, 4], &raw()).unwrap();
    // a small blob whose one chunk is missing: fill (zeros)
    set_shape(1000, 1000);
    assert_eq!(blobs.read_bytes("g/k").unwrap().unwrap(), vec![0; 1000]);
    // one chunk of 2^30 elements, missing: refused, naming the document
    set_shape(1 << 30, 1 << 30);
    let err = blobs.read_bytes("g/k").unwrap_err().to_string();
    assert!(
        err.contains("`g/k/zarr.json`") && err.contains("fill"),
        "{err}"
    );
    // many missing chunks of a small size add up the same way
    set_shape(1 << 30, 4);
    let err = blobs.read_bytes("g/k").unwrap_err().to_string();
    assert!(
        err.contains("`g/k/zarr.json`") && err.contains("fill"),
        "{err}"
    );
    // exactly the allowed amount still reads
    let max = super::MAX_FILL_BYTES;
    set_shape(max, max);
    assert_eq!(blobs.read_bytes("g/k").unwrap().unwrap().len() as u64, max);
}

#[test]
fn a_grid_array_without_its_document_is_caught_before_the_commit() {
    use crate::metadata::{ChunkKey, JsonObject};
    for shard in [None, Some(vec![2, 2])] {
        let (store, blobs) = blobs();
        let keys = [ChunkKey(vec![0, 0]), ChunkKey(vec![1, 1])];
        blobs
            .begin_grid(vec![0, 0], vec![2, 2], shard.clone(), &keys)
            .unwrap();
        assert!(blobs.check_grid_complete().is_ok(), "nothing written yet");
        blobs.write_bytes("0/vertices/0.0", b"abc", &raw()).unwrap();
        let err = blobs.check_grid_complete().unwrap_err().to_string();
        assert!(err.contains("0/vertices/zarr.json"), "{shard:?}: {err}");
        blobs
            .write_chunk_array_document("0/vertices", JsonObject::new(), &raw())
            .unwrap();
        assert!(blobs.check_grid_complete().is_ok(), "{shard:?}");
        // the cell was stored: unsharded as its own chunk, sharded in the shard holding it
        // (both at `c/0/0`)
        assert!(get(&store, "0/vertices/c/0/0").is_some(), "{shard:?}");
    }
}

#[test]
fn a_cell_of_a_shard_read_by_another_thread_is_decoded_alone() {
    use crate::metadata::{ChunkKey, JsonObject, Layout};
    let (store, blobs) = blobs();
    let keys = [
        ChunkKey(vec![0, 0]),
        ChunkKey(vec![0, 1]),
        ChunkKey(vec![1, 1]),
    ];
    blobs
        .begin_grid(vec![0, 0], vec![2, 2], Some(vec![2, 2]), &keys)
        .unwrap();
    for (k, v) in [("0.0", &b"aa"[..]), ("0.1", b"bbb"), ("1.1", b"c")] {
        blobs
            .write_bytes(&format!("0/vertices/{k}"), v, &raw())
            .unwrap();
    }
    blobs
        .write_chunk_array_document("0/vertices", JsonObject::new(), &raw())
        .unwrap();
    let reader = Blobs::with_layout(store, Layout::ChunkGrid);
    let grid = reader.grid("0/vertices").unwrap().unwrap();
    // another asker has read the shard and not decoded it yet
    let (state, read_here) = grid
        .decoded
        .get_or_read(&[0, 0], || grid.read_encoded(&[0, 0]))
        .unwrap();
    assert!(read_here && matches!(state, super::grid_cache::State::Read(_)));
    for (k, want) in [
        (vec![0, 1], Some(b"bbb".to_vec())),
        (vec![1, 0], None),
        (vec![1, 1], Some(b"c".to_vec())),
    ] {
        assert_eq!(grid.cell(&ChunkKey(k.clone())).unwrap(), want, "{k:?}");
    }
    // decoded alone: the shard is still not kept decoded
    assert!(!grid.decoded.has_chunk(&[0, 0]));
    // a whole read decodes and keeps it
    assert_eq!(
        grid.cell(&ChunkKey(vec![0, 0])).unwrap(),
        Some(b"aa".to_vec())
    );
    assert!(grid.decoded_chunk(&[0, 0]).unwrap().is_some());
    assert!(grid.decoded.has_chunk(&[0, 0]));
}

#[test]
fn nonempty_chunks_is_read_apart_from_the_attributes_it_was_written_with() {
    use crate::metadata::{ChunkKey, JsonObject, Layout};
    let (store, blobs) = blobs();
    let keys = [ChunkKey(vec![1, 0]), ChunkKey(vec![0, 1])];
    blobs
        .begin_grid(vec![0, 0], vec![2, 2], None, &keys)
        .unwrap();
    for k in ["0.1", "1.0"] {
        blobs
            .write_bytes(&format!("0/vertices/{k}"), b"ab", &raw())
            .unwrap();
    }
    let mut own = JsonObject::new();
    own.insert("zv_array".into(), json!("vertices"));
    blobs
        .write_chunk_array_document("0/vertices", own, &raw())
        .unwrap();
    // a group that happens to carry an attribute of that name keeps it
    let mut group = JsonObject::new();
    group.insert("nonempty_chunks".into(), json!(["not", "a", "grid"]));
    blobs.write_group("0", group).unwrap();
    // both ways of opening the array (its cells first, or its attributes first)
    for attributes_first in [false, true] {
        let reader = Blobs::with_layout(store.clone(), Layout::ChunkGrid);
        let attributes = if attributes_first {
            reader.group_attributes("0/vertices").unwrap().unwrap()
        } else {
            reader.grid("0/vertices").unwrap();
            reader.group_attributes("0/vertices").unwrap().unwrap()
        };
        assert_eq!(attributes.get("zv_array"), Some(&json!("vertices")));
        assert!(
            attributes.contains_key("chunk_grid_origin"),
            "{attributes:?}"
        );
        assert!(
            !attributes.contains_key("nonempty_chunks"),
            "{attributes:?}"
        );
        let grid = reader.grid("0/vertices").unwrap().unwrap();
        assert!(!grid.attributes().contains_key("nonempty_chunks"));
        assert_eq!(
            grid.listed().unwrap().unwrap(),
            &[ChunkKey(vec![0, 1]), ChunkKey(vec![1, 0])]
        );
        assert_eq!(
            reader.group_attributes("0").unwrap().unwrap()["nonempty_chunks"],
            json!(["not", "a", "grid"])
        );
    }
}

/// Pieces, announced sizes and keys.
type Pieces = (Vec<Vec<u8>>, Vec<u64>, Vec<String>);

/// The pieces `read_bytes_pieces` hands over for `path`, with the size it announces and
/// their keys.
fn pieces(blobs: &Blobs, path: &str) -> Option<Pieces> {
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    let found = blobs
        .read_bytes_pieces(path, &mut |piece, total, key| {
            out.0.push(piece.to_vec());
            out.1.push(total);
            out.2.push(key.to_owned());
            Ok(())
        })
        .unwrap();
    found.then_some(out)
}

#[test]
fn a_blob_of_several_chunks_is_handed_over_a_chunk_at_a_time() {
    let (store, blobs) = blobs();
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut s = blobs.stream_bytes("a/records", 1000, 64, &raw()).unwrap();
    for part in data.chunks(37) {
        s.write(part).unwrap();
    }
    s.finish().unwrap();
    let (parts, totals, keys) = pieces(&blobs, "a/records").unwrap();
    // 16 chunks of 63 bytes (1000 / 16, rounded up), the last trimmed to the shape, each
    // named by its key
    assert_eq!(parts.len(), 16);
    let expected: Vec<String> = (0..16).map(|i| format!("a/records/c/{i}")).collect();
    assert_eq!(keys, expected);
    assert!(parts.iter().all(|p| p.len() <= 64));
    assert_eq!(parts.concat(), data);
    assert!(totals.iter().all(|&t| t == 1000));
    // one chunk: handed over whole; absent: `false`
    blobs.write_bytes("a/one", &data, &raw()).unwrap();
    let one = pieces(&blobs, "a/one").unwrap();
    assert_eq!(
        (one.0, one.2),
        (vec![data.clone()], vec!["a/one/c/0".to_owned()])
    );
    assert_eq!(pieces(&blobs, "a/none"), None);
    // a chunk missing: read whole, with the fill value in its gap (as `read_bytes` reads it)
    store
        .delete(&StoreKey::new("a/records/c/3").unwrap())
        .unwrap();
    let whole = blobs.read_bytes("a/records").unwrap().unwrap();
    assert_eq!(&whole[3 * 63..4 * 63], &[0u8; 63][..]);
    assert_eq!(pieces(&blobs, "a/records").unwrap().0, vec![whole]);
    // a damaged chunk is an error naming its key
    store
        .set(
            &StoreKey::new("a/records/c/5").unwrap(),
            b"short".to_vec().into(),
        )
        .unwrap();
    let err = blobs
        .read_bytes_pieces("a/records", &mut |_, _, _| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("a/records/c/5"), "{err}");
}

/// A blob given up (`write_vec`) is stored as a borrowed one is (`write_bytes`), byte for
/// byte: plain blobs, grid cells (framed in place, with or without spare capacity; sharded)
/// and empty ones, uncompressed and compressed.
#[test]
fn a_blob_given_up_is_stored_as_a_borrowed_one() {
    use crate::metadata::ChunkKey;
    let zstd: Vec<ExtensionMetadata> = serde_json::from_value(json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 3, "checksum": false}}
    ]))
    .unwrap();
    let payloads: [&[u8]; 3] = [b"", b"x", &[7u8; 5000]];
    for codecs in [raw(), zstd] {
        for grid in [None, Some(None), Some(Some(vec![2, 2]))] {
            let mut stores = Vec::new();
            for given_up in [false, true] {
                let (store, blobs) = blobs();
                let keys = [
                    ChunkKey(vec![0, 0]),
                    ChunkKey(vec![0, 1]),
                    ChunkKey(vec![1, 1]),
                ];
                if let Some(shard) = &grid {
                    blobs
                        .begin_grid(vec![0, 0], vec![2, 2], shard.clone(), &keys)
                        .unwrap();
                }
                for (i, (p, key)) in payloads.iter().zip(["0.0", "0.1", "1.1"]).enumerate() {
                    let path = format!("0/vertices/{key}");
                    if !given_up {
                        blobs.write_bytes(&path, p, &codecs).unwrap();
                        continue;
                    }
                    // with and without room to frame the cell in place
                    let mut v =
                        Vec::with_capacity(p.len() + if i == 2 { super::CELL_HEADROOM } else { 0 });
                    v.extend_from_slice(p);
                    blobs.write_vec(&path, v, &codecs).unwrap();
                }
                if grid.is_some() {
                    let doc = crate::metadata::JsonObject::new();
                    blobs
                        .write_chunk_array_document("0/vertices", doc, &codecs)
                        .unwrap();
                    blobs.check_grid_complete().unwrap();
                }
                let prefix = zv_core::key::StorePrefix::root();
                let mut all: Vec<(String, Vec<u8>)> = store
                    .list_prefix(&prefix)
                    .unwrap()
                    .into_iter()
                    .map(|k| (k.to_string(), get(&store, k.as_str()).unwrap()))
                    .collect();
                all.sort();
                // sharded, the cells share one shard
                let keys: Vec<&str> = all.iter().map(|(k, _)| k.as_str()).collect();
                assert!(
                    keys.len() >= 2 && keys.iter().any(|k| k.contains("/c")),
                    "{grid:?}: {keys:?}"
                );
                stores.push(all);
            }
            assert!(stores[0] == stores[1], "{grid:?}: the stores differ");
        }
    }
}
