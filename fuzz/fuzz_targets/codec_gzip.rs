//! gzip streams through the codec registry: `[data type][u16 element count][stream]`, decoded
//! by the `bytes` + `gzip` pipeline.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    zv_fuzz::fuzz_bytes_to_bytes(
        data,
        serde_json::json!({"name": "gzip", "configuration": {"level": 5}}),
    );
});
