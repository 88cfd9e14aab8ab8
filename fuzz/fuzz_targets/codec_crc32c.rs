//! crc32c-checked chunks through the codec registry: `[data type][u16 element count][bytes]`,
//! decoded by `bytes` + `crc32c`; and, with the first byte's top bit set, by
//! `bytes` + `zstd` + `crc32c` (a checksum over a compressed frame).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let crc = serde_json::json!({"name": "crc32c", "configuration": {}});
    if data.first().is_some_and(|b| b & 0x80 != 0) {
        let mut input = zv_fuzz::Input::new(data);
        let data_type = zv_fuzz::DATA_TYPES[input.u8() as usize % zv_fuzz::DATA_TYPES.len()];
        let n = input.u16() as u64;
        let zstd = serde_json::json!({"name": "zstd", "configuration": {"level": 0}});
        let codecs = serde_json::json!([zv_fuzz::bytes_codec(), zstd, crc]);
        let _ = zv_fuzz::decode_chunk(codecs, data_type, vec![n], input.rest());
    } else {
        zv_fuzz::fuzz_bytes_to_bytes(data, crc);
    }
});
