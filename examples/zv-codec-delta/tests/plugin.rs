//! The example plugin passes zv's codec conformance suite and works inside a real array.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use serde_json::json;
use zv_core::array::Array;
use zv_core::grid::Region;
use zv_core::metadata::ArrayMetadata;
use zv_core::node::NodePath;

#[test]
fn passes_the_codec_conformance_suite() {
    zv_codec_delta::link();
    zv_codecs::link();
    zv_testkit::codec::check_codec(json!({"name": "example.delta", "configuration": {"order": 1}}));
    zv_testkit::codec::check_codec(json!({"name": "example.delta", "configuration": {"order": 2}}));
    zv_testkit::codec::check_codec(json!({"name": "example.delta"}));
}

#[test]
fn refuses_bad_configurations_and_types() {
    zv_codec_delta::link();
    zv_codecs::link();
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let doc = |dt: &str, cfg: serde_json::Value| {
        json!({"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": dt,
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "fill_value": 0, "codecs": [{"name": "example.delta", "configuration": cfg},
                {"name": "bytes", "configuration": {"endian": "little"}}]})
    };
    for (dt, cfg) in [
        ("float32", json!({})),
        ("int32", json!({"order": 3})),
        ("int32", json!({"lag": 1})),
    ] {
        let meta = ArrayMetadata::from_json(doc(dt, cfg).to_string().as_bytes()).unwrap();
        assert!(Array::create(store.clone(), &NodePath::new("/bad").unwrap(), meta).is_err());
    }
}

#[test]
fn works_in_an_array_with_zstd() {
    zv_codec_delta::link();
    zv_codecs::link();
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [1000], "data_type": "uint64",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [300]}},
        "fill_value": 0, "codecs": [{"name": "example.delta", "configuration": {"order": 1}},
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": false}}]});
    let meta = ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap();
    let array = Array::create(store.clone(), &NodePath::new("/ids").unwrap(), meta).unwrap();
    let ids: Vec<u64> = (0..1000).map(|i| 1_000_000 + i * 3).collect();
    array
        .store_region_elements(&Region::whole(&[1000]), &ids)
        .unwrap();
    let reopened = Array::open(store, &NodePath::new("/ids").unwrap()).unwrap();
    assert_eq!(
        reopened
            .retrieve_region_elements::<u64>(&Region::whole(&[1000]))
            .unwrap(),
        ids
    );
}
