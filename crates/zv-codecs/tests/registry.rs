//! The registry holds every expected codec exactly once.

use zv_core::plugin::{codec_plugin, codec_plugins, registered_codec_names};

#[test]
fn every_codec_resolves_and_none_is_registered_twice() {
    zv_codecs::link();
    for name in zv_codecs::CODEC_NAMES {
        let count = codec_plugins().filter(|p| p.name == name).count();
        assert_eq!(count, 1, "`{name}` is registered {count} times");
    }
    let names = registered_codec_names();
    let mut dedup = names.clone();
    dedup.dedup();
    assert_eq!(names, dedup, "a codec name is registered twice");
    #[cfg(all(
        feature = "blosc",
        feature = "zstd",
        feature = "gzip",
        feature = "crc32c"
    ))]
    for name in zv_codecs::CODEC_NAMES {
        assert!(codec_plugin(name).is_ok(), "`{name}` does not resolve");
    }
}

#[test]
fn unknown_codec_error_lists_registered_names() {
    zv_codecs::link();
    let err = codec_plugin("lzma").unwrap_err().to_string();
    assert!(err.contains("unknown codec `lzma`"), "{err}");
    assert!(err.contains("bytes") && err.contains("transpose"), "{err}");
}
