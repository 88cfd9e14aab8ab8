//! Every codec of this crate, in several configurations, passes the zv-testkit codec
//! conformance suite.

use serde_json::json;
use zv_testkit::codec::check_codec as check;

/// Links zv-codecs (so that its registrations are seen) and runs the suite.
fn check_codec(metadata: serde_json::Value) {
    zv_codecs::link();
    check(metadata);
}

#[test]
fn bytes_codec() {
    check_codec(json!({"name": "bytes", "configuration": {"endian": "little"}}));
    check_codec(json!({"name": "bytes", "configuration": {"endian": "big"}}));
    check_codec(json!({"name": "bytes"}));
}

#[test]
fn transpose_codec() {
    check_codec(json!({"name": "transpose", "configuration": {"order": [1, 0]}}));
    check_codec(json!({"name": "transpose", "configuration": {"order": [2, 0, 1]}}));
    check_codec(json!({"name": "transpose", "configuration": {"order": [0]}}));
}

#[test]
fn vlen_bytes_codec() {
    check_codec(json!({"name": "vlen-bytes", "configuration": {}}));
}

#[cfg(feature = "blosc")]
#[test]
fn blosc_codec() {
    for cname in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"] {
        for shuffle in ["noshuffle", "shuffle", "bitshuffle"] {
            check_codec(json!({"name": "blosc", "configuration":
                {"cname": cname, "clevel": 5, "shuffle": shuffle, "blocksize": 0}}));
        }
    }
    check_codec(json!({"name": "blosc", "configuration":
        {"cname": "zstd", "clevel": 9, "shuffle": "shuffle", "typesize": 8, "blocksize": 256}}));
}

#[cfg(feature = "zstd")]
#[test]
fn zstd_codec() {
    check_codec(json!({"name": "zstd", "configuration": {"level": 0, "checksum": false}}));
    check_codec(json!({"name": "zstd", "configuration": {"level": 5, "checksum": true}}));
    check_codec(json!({"name": "zstd", "configuration": {"level": -3}}));
}

#[cfg(feature = "gzip")]
#[test]
fn gzip_codec() {
    check_codec(json!({"name": "gzip", "configuration": {"level": 1}}));
    check_codec(json!({"name": "gzip", "configuration": {"level": 9}}));
}

#[cfg(feature = "crc32c")]
#[test]
fn crc32c_codec() {
    check_codec(json!({"name": "crc32c"}));
}

#[cfg(all(feature = "sharding", feature = "crc32c"))]
#[test]
fn sharding_codec() {
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let index_crc = json!([bytes.clone(), {"name": "crc32c"}]);
    for (shape, location, index) in [
        (json!([1]), "end", index_crc.clone()),
        (json!([1, 1]), "start", json!([bytes.clone()])),
        (json!([1, 1, 1]), "end", json!([bytes.clone()])),
        (json!([]), "start", index_crc.clone()),
    ] {
        check_codec(json!({"name": "sharding_indexed", "configuration": {
            "chunk_shape": shape, "codecs": [bytes.clone()], "index_codecs": index,
            "index_location": location}}));
    }
    // variable-length elements inside shards
    check_codec(json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1], "codecs": [{"name": "vlen-bytes", "configuration": {}}],
        "index_codecs": index_crc.clone()}}));
    // nested sharding, inner chunks with a checksum
    check_codec(json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": [1, 1],
        "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [1, 1], "codecs": [bytes.clone(), {"name": "crc32c"}],
            "index_codecs": index_crc.clone(), "index_location": "start"}}],
        "index_codecs": index_crc}}));
}
