//! Chunk-level reads of stored chunks: `stored_chunks` (one listing), `retrieve_chunk_if_exists`,
//! handles built without I/O whose `zarr.json` is stored last, and nodes with reserved names.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use serde_json::json;
use zv_core::array::{read_node_metadata, Array};
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::key::StoreKey;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_store_mem::MemoryStore;

fn store() -> Arc<dyn Store> {
    zv_codecs::link();
    Arc::new(MemoryStore::new())
}

fn vlen(n: u64, chunk: u64) -> ArrayMetadata {
    let codecs: Vec<ExtensionMetadata> =
        serde_json::from_value(json!([{"name": "vlen-bytes", "configuration": {}}])).unwrap();
    ArrayMetadata::new(vec![n], vec![chunk], DataType::VariableLengthBytes, codecs).unwrap()
}

#[test]
fn stored_chunks_lists_only_chunks_of_the_grid() {
    let s = store();
    let path = NodePath::new("/m").unwrap();
    let a = Array::create(s.clone(), &path, vlen(40_000, 16_384)).unwrap();
    assert!(a.stored_chunks().unwrap().is_empty());
    let full: Vec<Vec<u8>> = (0..16_384u32).map(|i| i.to_le_bytes().to_vec()).collect();
    a.store_chunk(&[2], ArrayBytes::from_elements(&full))
        .unwrap();
    a.store_chunk(&[0], ArrayBytes::from_elements(&full))
        .unwrap();
    // keys that are not chunks of this grid are ignored
    for stray in ["m/c/3", "m/c/x", "m/c/1/0", "m/notes", "m2/c/1"] {
        s.set(&StoreKey::new(stray).unwrap(), vec![1u8].into())
            .unwrap();
    }
    assert_eq!(a.stored_chunks().unwrap(), vec![vec![0], vec![2]]);
    assert!(a.retrieve_chunk_if_exists(&[1]).unwrap().is_none());
    let c2 = a.retrieve_chunk_if_exists(&[2]).unwrap().unwrap();
    assert_eq!(c2.element(5), Some(&5u32.to_le_bytes()[..]));
    // a missing chunk still reads as the fill value through retrieve_chunk
    assert_eq!(a.retrieve_chunk(&[1]).unwrap().element(0), Some(&b""[..]));
    assert!(
        a.retrieve_chunk_if_exists(&[3]).is_err(),
        "outside the grid"
    );
}

#[test]
fn from_metadata_does_no_io_and_store_metadata_writes_the_document() {
    let s = store();
    let path = NodePath::new("/b").unwrap();
    let meta = ArrayMetadata::new(
        vec![3],
        vec![3],
        DataType::UInt8,
        vec![ExtensionMetadata::new("bytes")],
    )
    .unwrap();
    let a = Array::from_metadata(s.clone(), &path, meta.clone()).unwrap();
    a.store_chunk(&[0], ArrayBytes::Fixed(vec![1u8, 2, 3].into()))
        .unwrap();
    assert!(read_node_metadata(s.as_ref(), &path).unwrap().is_none());
    a.store_metadata().unwrap();
    let doc = s.get(&path.metadata_key()).unwrap().unwrap();
    assert_eq!(&doc[..], &meta.to_json_pretty()[..]);
    let back = Array::open(s, &path).unwrap();
    assert_eq!(
        back.retrieve_chunk(&[0]).unwrap(),
        ArrayBytes::Fixed(vec![1u8, 2, 3].into())
    );
}

#[test]
fn nodes_with_reserved_names_are_addressable_through_lenient_paths() {
    let s = store();
    assert!(NodePath::new("/g/__shard_000000").is_err());
    let path = NodePath::new_lenient("/g/__shard_000000").unwrap();
    let meta = ArrayMetadata::new(
        vec![2],
        vec![2],
        DataType::UInt8,
        vec![ExtensionMetadata::new("bytes")],
    )
    .unwrap();
    let a = Array::create(s.clone(), &path, meta).unwrap();
    a.store_chunk(&[0], ArrayBytes::Fixed(vec![7u8, 8].into()))
        .unwrap();
    assert!(s
        .get(&StoreKey::new("g/__shard_000000/c/0").unwrap())
        .unwrap()
        .is_some());
    let back = Array::open(s, &path).unwrap();
    assert_eq!(back.stored_chunks().unwrap(), vec![vec![0]]);
}

/// A chunk given as its array→bytes encoding goes through the bytes→bytes codecs only, and
/// reads back as the chunk the full chain stores; a chain with an array→array codec refuses
/// it.
#[test]
fn serialized_chunks_take_the_bytes_to_bytes_codecs() {
    let s = store();
    let items: Vec<Vec<u8>> = (0..300u32)
        .map(|i| vec![i as u8; (i % 7) as usize])
        .collect();
    let codecs = |extra: serde_json::Value| -> Vec<ExtensionMetadata> {
        let mut list = vec![json!({"name": "vlen-bytes", "configuration": {}})];
        list.extend(extra.as_array().cloned().unwrap_or_default());
        serde_json::from_value(json!(list)).unwrap()
    };
    let meta = |c| ArrayMetadata::new(vec![300], vec![300], DataType::VariableLengthBytes, c);
    for extra in [
        json!([]),
        json!([{"name": "zstd", "configuration": {"level": 3, "checksum": false}}, {"name": "crc32c"}]),
    ] {
        let full = Array::create(
            s.clone(),
            &NodePath::new("/full").unwrap(),
            meta(codecs(extra.clone())).unwrap(),
        )
        .unwrap();
        full.store_chunk(&[0], ArrayBytes::from_elements(&items))
            .unwrap();
        // the framing the vlen-bytes codec makes: the count, then each item after its length
        let mut framed = 300u32.to_le_bytes().to_vec();
        for it in &items {
            framed.extend_from_slice(&(it.len() as u32).to_le_bytes());
            framed.extend_from_slice(it);
        }
        let given = Array::create(
            s.clone(),
            &NodePath::new("/given").unwrap(),
            meta(codecs(extra)).unwrap(),
        )
        .unwrap();
        given.store_serialized_chunk(&[0], framed).unwrap();
        let key = |p: &str| StoreKey::new(p).unwrap();
        assert_eq!(
            s.get(&key("given/c/0")).unwrap(),
            s.get(&key("full/c/0")).unwrap()
        );
        let back = given.retrieve_chunk(&[0]).unwrap();
        assert_eq!(back.element(299), Some(&items[299][..]));
        assert!(
            given.store_serialized_chunk(&[1], vec![0; 4]).is_err(),
            "outside the grid"
        );
    }
    let fixed: Vec<ExtensionMetadata> = serde_json::from_value(json!([
        {"name": "transpose", "configuration": {"order": [0]}},
        {"name": "bytes", "configuration": {"endian": "little"}}
    ]))
    .unwrap();
    let a = Array::create(
        s.clone(),
        &NodePath::new("/t").unwrap(),
        ArrayMetadata::new(vec![4], vec![4], DataType::UInt8, fixed).unwrap(),
    )
    .unwrap();
    let err = a
        .store_serialized_chunk(&[0], vec![1, 2, 3, 4])
        .unwrap_err();
    assert!(err.to_string().contains("transpose"), "{err}");
}
