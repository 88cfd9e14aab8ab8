//! vlen-bytes chunks through the codec registry: `[u16 element count][chunk]`, decoded as a
//! `variable_length_bytes` chunk by the `vlen-bytes` codec (alone, and under `zstd`).
#![no_main]
use libfuzzer_sys::fuzz_target;
use zv_core::data_type::DataType;

fuzz_target!(|data: &[u8]| {
    let mut input = zv_fuzz::Input::new(data);
    let flags = input.u8();
    let n = input.u16() as u64;
    let vlen = serde_json::json!({"name": "vlen-bytes", "configuration": {}});
    let codecs = if flags & 1 == 0 {
        serde_json::json!([vlen])
    } else {
        serde_json::json!([vlen, {"name": "zstd", "configuration": {"level": 0}}])
    };
    let _ = zv_fuzz::decode_chunk(codecs, DataType::VariableLengthBytes, vec![n], input.rest());
});
