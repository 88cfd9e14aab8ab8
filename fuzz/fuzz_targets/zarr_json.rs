//! `zarr.json` documents: the input is parsed as an array, a group and either
//! (`ArrayMetadata`, `GroupMetadata`, `NodeMetadata::from_json`). A document that parses
//! writes back to one that parses equal (so every fill-value form round-trips), its chunk key
//! encoding round-trips the first chunk's key, and its codecs are resolved through the codec
//! registry for one chunk.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_core::codec::{ChunkRepresentation, CodecChain};
use zv_core::data_type::FillValue;
use zv_core::metadata::{ArrayMetadata, GroupMetadata, NodeMetadata};

fuzz_target!(|data: &[u8]| {
    zv_codecs::link();
    if let Ok(meta) = ArrayMetadata::from_json(data) {
        let again = ArrayMetadata::from_json(&meta.to_json_pretty())
            .unwrap_or_else(|e| panic!("an array document does not re-parse: {e}"));
        assert_eq!(again, meta);
        let fill = meta.fill_value.to_json(meta.data_type);
        let fill_again = FillValue::from_json(meta.data_type, &fill)
            .unwrap_or_else(|e| panic!("fill value {fill} does not re-parse: {e}"));
        assert_eq!(fill_again, meta.fill_value);
        let origin = vec![0; meta.chunk_shape().len()];
        let key = meta.chunk_key_encoding.encode(&origin);
        assert_eq!(
            meta.chunk_key_encoding.decode(&key, origin.len()),
            Some(origin),
            "chunk key {key}"
        );
        let repr = ChunkRepresentation::new(
            meta.chunk_shape().to_vec(),
            meta.data_type,
            meta.fill_value.clone(),
        );
        if let Ok(repr) = repr {
            let _ = CodecChain::from_metadata(&meta.codecs, &repr);
        }
    }
    if let Ok(meta) = GroupMetadata::from_json(data) {
        let again = GroupMetadata::from_json(&meta.to_json_pretty())
            .unwrap_or_else(|e| panic!("a group document does not re-parse: {e}"));
        assert_eq!(again, meta);
    }
    if let Ok(node) = NodeMetadata::from_json(data) {
        let _ = node.attributes();
        let _ = node.to_value();
    }
});
