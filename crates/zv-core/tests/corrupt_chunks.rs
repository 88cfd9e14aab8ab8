//! Corrupt input at the Zarr layer: truncated, bit-flipped and extended blosc and zstd frames,
//! frames of the wrong decoded size, crc32c mismatches and malformed `zarr.json` documents are
//! errors that name the key, never panics.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{json, Value};
use zv_core::array::Array;
use zv_core::codec::{ArrayBytes, CodecError};
use zv_core::grid::Region;
use zv_core::key::StoreKey;
use zv_core::metadata::ArrayMetadata;
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_core::Error;
use zv_store_mem::MemoryStore;

fn setup(codecs: Value) -> (Arc<dyn Store>, Array, Vec<u8>, StoreKey) {
    zv_codecs::link();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [64], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [64]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0.0, "codecs": codecs});
    let meta = ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap();
    let array = Array::create(store.clone(), &NodePath::new("/a").unwrap(), meta).unwrap();
    let values: Vec<f32> = (0..64).map(|i| (i as f32).sin() * 100.0).collect();
    array
        .store_region_elements(&Region::whole(&[64]), &values)
        .unwrap();
    let key = array.chunk_key(&[0]).unwrap();
    let frame = store.get(&key).unwrap().unwrap().to_vec();
    (store, array, frame, key)
}

fn read_with(
    store: &Arc<dyn Store>,
    array: &Array,
    key: &StoreKey,
    bytes: Vec<u8>,
) -> Result<Vec<f32>, Error> {
    store.set(key, Bytes::from(bytes)).unwrap();
    array.retrieve_region_elements::<f32>(&Region::whole(&[64]))
}

fn assert_names_key(err: &Error, key: &StoreKey) {
    let msg = err.to_string();
    assert!(
        msg.contains(key.as_str()),
        "error does not name `{key}`: {msg}"
    );
}

fn blosc_codecs() -> Value {
    json!([{"name": "bytes", "configuration": {"endian": "little"}},
           {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 4}}])
}

fn zstd_codecs(checksum: bool) -> Value {
    json!([{"name": "bytes", "configuration": {"endian": "little"}},
           {"name": "zstd", "configuration": {"level": 3, "checksum": checksum}}])
}

#[test]
fn truncated_and_extended_frames_are_errors_naming_the_key() {
    for codecs in [blosc_codecs(), zstd_codecs(false), zstd_codecs(true)] {
        let (store, array, frame, key) = setup(codecs.clone());
        for cut in 0..frame.len() {
            let err = read_with(&store, &array, &key, frame[..cut].to_vec())
                .expect_err(&format!("{codecs}: truncation to {cut} bytes accepted"));
            assert_names_key(&err, &key);
        }
        let mut extended = frame.clone();
        extended.extend_from_slice(&[0, 1, 2]);
        if codecs[1]["name"] == "blosc" {
            // blosc frames state their length: trailing bytes are refused
            let err = read_with(&store, &array, &key, extended).unwrap_err();
            assert_names_key(&err, &key);
        } else {
            // zstd may skip or refuse trailing bytes, but never panics or returns a wrong size
            let _ = read_with(&store, &array, &key, extended);
        }
    }
}

#[test]
fn bit_flips_never_panic_and_checksums_catch_them() {
    for codecs in [blosc_codecs(), zstd_codecs(false), zstd_codecs(true)] {
        let (store, array, frame, key) = setup(codecs.clone());
        let good = read_with(&store, &array, &key, frame.clone()).unwrap();
        let checksummed = codecs[1]["configuration"]["checksum"] == true;
        for bit in 0..frame.len() * 8 {
            let mut bad = frame.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            match read_with(&store, &array, &key, bad) {
                Ok(values) => {
                    assert_eq!(values.len(), 64);
                    if checksummed {
                        assert_eq!(
                            values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                            good.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                            "{codecs}: flip of bit {bit} returned wrong data despite the checksum"
                        );
                    }
                }
                Err(e) => assert_names_key(&e, &key),
            }
        }
        // Every flip in the blosc header is caught before c-blosc runs.
        if codecs[1]["name"] == "blosc" {
            for bit in (4 * 8)..(16 * 8) {
                let mut bad = frame.clone();
                bad[bit / 8] ^= 1 << (bit % 8);
                let err = read_with(&store, &array, &key, bad)
                    .expect_err(&format!("blosc header bit {bit} flip accepted"));
                assert_names_key(&err, &key);
            }
        }
    }
}

#[test]
fn frames_of_the_wrong_size_are_refused() {
    zv_codecs::link();
    // A valid frame of another array's chunk (100 floats instead of 64).
    for codecs in [blosc_codecs(), zstd_codecs(false)] {
        let (store, array, _, key) = setup(codecs.clone());
        let other_doc = json!({"zarr_format": 3, "node_type": "array", "shape": [100], "data_type": "float32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [100]}},
            "fill_value": 0.0, "codecs": codecs});
        let other = Array::create(
            store.clone(),
            &NodePath::new("/b").unwrap(),
            ArrayMetadata::from_json(other_doc.to_string().as_bytes()).unwrap(),
        )
        .unwrap();
        other
            .store_region_elements(&Region::whole(&[100]), &vec![1.5f32; 100])
            .unwrap();
        let wrong = store
            .get(&other.chunk_key(&[0]).unwrap())
            .unwrap()
            .unwrap()
            .to_vec();
        let err = read_with(&store, &array, &key, wrong).unwrap_err();
        assert_names_key(&err, &key);
        assert!(
            matches!(
                &err,
                Error::Chunk {
                    source: CodecError::SizeMismatch {
                        expected: 256,
                        actual: 400,
                        ..
                    },
                    ..
                }
            ),
            "{codecs}: {err}"
        );
    }
    // Raw bytes of the wrong length.
    let (store, array, _, key) =
        setup(json!([{"name": "bytes", "configuration": {"endian": "little"}}]));
    let err = read_with(&store, &array, &key, vec![0; 255]).unwrap_err();
    assert!(matches!(
        &err,
        Error::Chunk {
            source: CodecError::SizeMismatch { .. },
            ..
        }
    ));
}

#[test]
fn crc32c_mismatch_names_the_key() {
    let (store, array, frame, key) = setup(json!([
        {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]));
    for bit in [0, 77, frame.len() * 8 - 1] {
        let mut bad = frame.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let err = read_with(&store, &array, &key, bad).unwrap_err();
        assert_names_key(&err, &key);
        assert!(
            matches!(
                &err,
                Error::Chunk {
                    source: CodecError::ChecksumMismatch { .. },
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("checksum mismatch"));
    }
}

#[test]
fn malformed_zarr_json_is_an_error_naming_the_key() {
    zv_codecs::link();
    let good = json!({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]});
    type Mutation = Box<dyn Fn(&mut Value)>;
    let mutations: Vec<(&str, Mutation)> = vec![
        ("shape not a list", Box::new(|d| d["shape"] = json!("4"))),
        ("negative extent", Box::new(|d| d["shape"] = json!([-4]))),
        (
            "missing shape",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("shape");
            }),
        ),
        (
            "missing data_type",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("data_type");
            }),
        ),
        (
            "missing codecs",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("codecs");
            }),
        ),
        (
            "missing chunk_grid",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("chunk_grid");
            }),
        ),
        ("data_type number", Box::new(|d| d["data_type"] = json!(4))),
        (
            "fill_value string for int",
            Box::new(|d| d["fill_value"] = json!("zero")),
        ),
        (
            "fill_value out of range",
            Box::new(|d| d["fill_value"] = json!(1u64 << 40)),
        ),
        (
            "chunk_grid irregular",
            Box::new(|d| d["chunk_grid"]["name"] = json!("rectilinear")),
        ),
        (
            "chunk_shape zero",
            Box::new(|d| d["chunk_grid"]["configuration"]["chunk_shape"] = json!([0])),
        ),
        (
            "codecs not a list",
            Box::new(|d| d["codecs"] = json!({"name": "bytes"})),
        ),
        (
            "unknown codec",
            Box::new(
                |d| d["codecs"] = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "lzma"}]),
            ),
        ),
        (
            "no array-to-bytes codec",
            Box::new(|d| d["codecs"] = json!([{"name": "crc32c"}])),
        ),
        (
            "codec order",
            Box::new(
                |d| d["codecs"] = json!([{"name": "crc32c"}, {"name": "bytes", "configuration": {"endian": "little"}}]),
            ),
        ),
        (
            "bytes without endian",
            Box::new(|d| d["codecs"] = json!([{"name": "bytes"}])),
        ),
        (
            "blosc bad config",
            Box::new(
                |d| d["codecs"] = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": "high", "shuffle": "shuffle"}}]),
            ),
        ),
        (
            "blosc unknown field",
            Box::new(
                |d| d["codecs"] = json!([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 1, "shuffle": "shuffle", "speed": 3}}]),
            ),
        ),
        ("zarr_format 2", Box::new(|d| d["zarr_format"] = json!(2))),
        (
            "node_type bogus",
            Box::new(|d| d["node_type"] = json!("table")),
        ),
        ("unknown key", Box::new(|d| d["new_feature"] = json!(true))),
        (
            "storage transformer",
            Box::new(|d| d["storage_transformers"] = json!([{"name": "sharding"}])),
        ),
    ];
    for (what, mutate) in mutations {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut doc = good.clone();
        mutate(&mut doc);
        let key = StoreKey::new("x/zarr.json").unwrap();
        store.set(&key, Bytes::from(doc.to_string())).unwrap();
        let err = Array::open(store, &NodePath::new("/x").unwrap())
            .expect_err(&format!("{what}: accepted"));
        let msg = err.to_string();
        assert!(
            msg.contains("x/zarr.json") || msg.contains("array `/x`"),
            "{what}: {msg}"
        );
    }
    for raw in [
        &b""[..],
        b"{",
        b"[]",
        b"null",
        b"\xff\xfe",
        b"{\"zarr_format\": 3}",
    ] {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let key = StoreKey::new("x/zarr.json").unwrap();
        store.set(&key, Bytes::copy_from_slice(raw)).unwrap();
        let err = Array::open(store, &NodePath::new("/x").unwrap()).unwrap_err();
        assert!(err.to_string().contains("x/zarr.json"), "{err}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_chunk_bytes_never_panic(junk in prop::collection::vec(any::<u8>(), 0..600), which in 0usize..4) {
        let codecs = match which {
            0 => blosc_codecs(),
            1 => zstd_codecs(true),
            2 => json!([{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}]),
            _ => json!([{"name": "transpose", "configuration": {"order": [0]}}, {"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]),
        };
        let (store, array, _, key) = setup(codecs);
        if let Ok(v) = read_with(&store, &array, &key, junk) {
            prop_assert_eq!(v.len(), 64);
        }
    }
}

#[test]
fn edge_chunks_missing_chunks_and_empty_chunk_deletion() {
    zv_codecs::link();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [5, 7], "data_type": "int16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2, 3]}},
        "fill_value": -1, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]});
    let mut array = Array::create(
        store.clone(),
        &NodePath::new("/e").unwrap(),
        ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap(),
    )
    .unwrap();
    // nothing written: all fill
    let all = array
        .retrieve_region_elements::<i16>(&Region::whole(&[5, 7]))
        .unwrap();
    assert!(all.iter().all(|&v| v == -1));
    // write the bottom-right corner (edge chunks on both axes)
    let region = Region::new(vec![3, 4], vec![2, 3]).unwrap();
    array
        .store_region_elements::<i16>(&region, &[1, 2, 3, 4, 5, 6])
        .unwrap();
    let all = array
        .retrieve_region_elements::<i16>(&Region::whole(&[5, 7]))
        .unwrap();
    assert_eq!(&all[3 * 7 + 4..3 * 7 + 7], &[1, 2, 3]);
    assert_eq!(&all[4 * 7 + 4..4 * 7 + 7], &[4, 5, 6]);
    assert_eq!(all.iter().filter(|&&v| v == -1).count(), 35 - 6);
    // edge chunk (2, 2) covers rows 4..6 and columns 6..9: stored whole, padded with fill
    let edge = array.retrieve_chunk(&[2, 2]).unwrap();
    assert_eq!(
        edge,
        ArrayBytes::Fixed(
            [6i16, -1, -1, -1, -1, -1]
                .iter()
                .flat_map(|v| v.to_ne_bytes())
                .collect::<Vec<u8>>()
                .into()
        )
    );
    // writing fill values back deletes the chunks when empty chunks are not stored
    array.set_store_empty_chunks(false);
    array
        .store_region_elements::<i16>(&region, &[-1; 6])
        .unwrap();
    assert!(
        store
            .list()
            .unwrap()
            .iter()
            .all(|k| k.as_str() == "e/zarr.json"),
        "{:?}",
        store.list().unwrap()
    );
    // a chunk outside the grid is an error, not a panic
    assert!(array.retrieve_chunk(&[3, 0]).is_err());
    assert!(array
        .retrieve_region(&Region::new(vec![4, 0], vec![2, 1]).unwrap())
        .is_err());
}
