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
