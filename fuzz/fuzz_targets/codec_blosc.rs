//! blosc frames through the codec registry: `[data type][u16 element count][frame]`, decoded
//! by the `bytes` + `blosc` pipeline (the frame header decides the compressor and shuffle).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    zv_fuzz::fuzz_bytes_to_bytes(
        data,
        serde_json::json!({"name": "blosc",
            "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle"}}),
    );
});
