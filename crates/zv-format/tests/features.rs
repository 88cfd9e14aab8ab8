//! What a build of zv-format resolves depends on its features. CI runs this test in the
//! default build and in `--no-default-features --features mem,zstd`.

use zv_core::codec::CodecError;
use zv_core::plugin::{codec_plugin, open_store, registered_store_schemes, store_plugins};

#[test]
fn enabled_codecs_resolve_and_disabled_ones_name_their_feature() {
    zv_format::link_plugins();
    for name in ["bytes", "transpose", "vlen-bytes"] {
        assert!(codec_plugin(name).is_ok(), "{name}");
    }
    for (name, enabled) in [
        ("blosc", cfg!(feature = "blosc")),
        ("zstd", cfg!(feature = "zstd")),
        ("gzip", cfg!(feature = "gzip")),
        ("crc32c", cfg!(feature = "crc32c")),
    ] {
        match codec_plugin(name) {
            Ok(p) => assert!(
                enabled && p.is_available(),
                "{name} resolves but is disabled"
            ),
            Err(CodecError::Disabled { feature, .. }) => {
                assert!(!enabled, "{name} is enabled but refused");
                assert_eq!(feature, name);
                let msg = codec_plugin(name).unwrap_err().to_string();
                assert!(
                    msg.contains(&format!("enable feature `{name}`")),
                    "message does not name the feature: {msg}"
                );
            }
            Err(e) => panic!("{name}: unexpected error {e}"),
        }
    }
    for (name, feature, enabled) in [("sharding_indexed", "sharding", cfg!(feature = "sharding"))] {
        match codec_plugin(name) {
            Ok(p) => assert!(enabled && p.is_available(), "{name}"),
            Err(CodecError::Disabled { feature: f, .. }) => {
                assert!(!enabled, "{name} is enabled but refused");
                assert_eq!(f, feature);
            }
            Err(e) => panic!("{name}: unexpected error {e}"),
        }
    }
}

#[cfg(all(feature = "mem", feature = "zstd", not(feature = "blosc")))]
#[test]
fn minimal_build_resolves_zstd_and_refuses_blosc() {
    zv_format::link_plugins();
    assert!(codec_plugin("zstd").is_ok());
    let msg = codec_plugin("blosc").unwrap_err().to_string();
    assert_eq!(
        msg,
        "codec `blosc` is disabled at compile time: enable feature `blosc` of `zv-codecs`"
    );
    assert!(open_store("memory://minimal").is_ok());
    let err = open_store("/tmp/zv-minimal-build")
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("no store is registered for scheme `file`"),
        "{err}"
    );
}

#[cfg(all(feature = "fs", feature = "mem"))]
#[test]
fn default_build_has_both_stores() {
    zv_format::link_plugins();
    assert!(open_store("memory://default-build").is_ok());
    let dir = std::env::temp_dir().join(format!("zv-features-{}", std::process::id()));
    assert!(open_store(dir.to_str().unwrap()).is_ok());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn store_schemes_are_registered_once() {
    zv_format::link_plugins();
    let schemes = registered_store_schemes();
    let mut dedup = schemes.clone();
    dedup.dedup();
    assert_eq!(schemes, dedup, "a store scheme is registered twice");
    // the object stores' schemes where feature `object` is on (in a workspace build, zv-cli
    // turns it on)
    let object = ["abfs", "abfss", "az", "gs", "http", "https", "s3"];
    let mut expected: Vec<&str> = [
        cfg!(feature = "fs").then_some("file"),
        cfg!(feature = "mem").then_some("memory"),
    ]
    .into_iter()
    .flatten()
    .chain(object.into_iter().filter(|_| cfg!(feature = "object")))
    .collect();
    expected.sort_unstable();
    assert_eq!(schemes, expected);
    assert!(store_plugins().all(|p| !p.description.is_empty()));
}
