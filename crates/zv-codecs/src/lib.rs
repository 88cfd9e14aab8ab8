//! # zv-codecs — Zarr v3 codec plugins for zv
//!
//! Each module implements one codec of the Zarr v3 ecosystem and registers it with
//! [`zv_core::plugin::CodecPlugin`] through `inventory`:
//!
//! | name | kind | module | Cargo feature |
//! |---|---|---|---|
//! | `bytes` | array→bytes | [`bytes`] | always on |
//! | `transpose` | array→array | [`transpose`] | always on |
//! | `vlen-bytes` | array→bytes | [`vlen_bytes`] | always on |
//! | `blosc` | bytes→bytes | `blosc` | `blosc` (C, via `blosc-src`) |
//! | `zstd` | bytes→bytes | `zstd` | `zstd` (C, via `zstd-sys`) |
//! | `gzip` | bytes→bytes | `gzip` | `gzip` (pure Rust `flate2`) |
//! | `crc32c` | bytes→bytes | `crc32c` | `crc32c` |
//! | `sharding_indexed` | array→bytes | `sharding` | `sharding` (uses `rayon`) |
//!
//! A codec whose feature is off still registers its name as *disabled*, so that opening an
//! array that needs it fails with "codec `blosc` is disabled at compile time: enable feature
//! `blosc` of `zv-codecs`" rather than "unknown codec".
//!
//! `inventory` only sees linked crates: a crate that needs these codecs must reference this
//! crate (`use zv_codecs as _;`), or call [`link`].
//!
//! ```
//! zv_codecs::link();
//! assert!(zv_core::plugin::codec_plugin("bytes").is_ok());
//! ```

pub mod bytes;
pub mod transpose;
pub mod vlen_bytes;

#[cfg(feature = "blosc")]
pub mod blosc;
#[cfg(feature = "crc32c")]
pub mod crc32c;
#[cfg(feature = "gzip")]
pub mod gzip;
#[cfg(feature = "sharding")]
pub mod sharding;
#[cfg(feature = "zstd")]
pub mod zstd;

/// The codec names this crate registers (available or disabled), for tests and listings.
pub const CODEC_NAMES: [&str; 8] = [
    "blosc",
    "bytes",
    "crc32c",
    "gzip",
    "sharding_indexed",
    "transpose",
    "vlen-bytes",
    "zstd",
];

/// Reads a decoder to its end, but never past `expected + 1` bytes when a size is expected;
/// the output must then be exactly `expected` bytes.
#[cfg(any(feature = "gzip", feature = "zstd"))]
pub(crate) fn read_decoded(
    mut reader: impl std::io::Read,
    expected: Option<usize>,
    codec: &str,
) -> Result<Vec<u8>, zv_core::codec::CodecError> {
    use std::io::Read;
    let corrupt = |e: std::io::Error| zv_core::codec::CodecError::corrupt(codec, e.to_string());
    let mut out = Vec::new();
    match expected {
        Some(n) => {
            (&mut reader)
                .take(n as u64 + 1)
                .read_to_end(&mut out)
                .map_err(corrupt)?;
            if out.len() != n {
                return Err(zv_core::codec::CodecError::SizeMismatch {
                    codec: codec.into(),
                    expected: n as u64,
                    actual: out.len() as u64,
                });
            }
        }
        None => {
            reader.read_to_end(&mut out).map_err(corrupt)?;
        }
    }
    Ok(out)
}

/// The error of a compressor's failing I/O (not corrupt input: an encoder that cannot write).
#[cfg(any(feature = "gzip", feature = "zstd"))]
pub(crate) fn io_failure(codec: &str, e: std::io::Error) -> zv_core::codec::CodecError {
    zv_core::codec::CodecError::Other {
        codec: codec.into(),
        message: e.to_string(),
    }
}

/// Implements [`zv_core::codec::BytesToBytesCodec`] for the compressor `$codec` through its
/// inherent `compress(&self, &[u8])` and `decompress(&[u8], Option<usize>)` (the encoded size
/// is not known in advance), and registers it under the module's `NAME` with the factory
/// `$create`.
#[cfg(any(feature = "blosc", feature = "gzip", feature = "zstd"))]
macro_rules! compressor_codec {
    ($codec:ty, $create:path) => {
        impl zv_core::codec::BytesToBytesCodec for $codec {
            fn encode<'a>(
                &self,
                input: std::borrow::Cow<'a, [u8]>,
            ) -> Result<std::borrow::Cow<'a, [u8]>, zv_core::codec::CodecError> {
                self.compress(&input).map(std::borrow::Cow::Owned)
            }

            fn decode<'a>(
                &self,
                input: std::borrow::Cow<'a, [u8]>,
                expected: Option<usize>,
            ) -> Result<std::borrow::Cow<'a, [u8]>, zv_core::codec::CodecError> {
                Self::decompress(&input, expected).map(std::borrow::Cow::Owned)
            }

            fn encoded_size(&self, _decoded_size: usize) -> Option<usize> {
                None
            }
        }

        inventory::submit! {
            zv_core::plugin::CodecPlugin::new(NAME, zv_core::codec::CodecKind::BytesToBytes, $create)
        }
    };
}
#[cfg(any(feature = "blosc", feature = "gzip", feature = "zstd"))]
pub(crate) use compressor_codec;

/// Does nothing; calling it makes sure this crate (and so its registrations) is linked.
#[inline(never)]
pub fn link() {}

/// Registrations of the codecs whose feature is off, so that asking for them names the
/// feature.
#[allow(dead_code, unused_imports)]
mod disabled {
    use zv_core::codec::CodecKind;
    use zv_core::plugin::CodecPlugin;

    const KRATE: &str = "zv-codecs";

    #[cfg(not(feature = "blosc"))]
    inventory::submit! { CodecPlugin::disabled("blosc", CodecKind::BytesToBytes, "blosc", KRATE) }
    #[cfg(not(feature = "zstd"))]
    inventory::submit! { CodecPlugin::disabled("zstd", CodecKind::BytesToBytes, "zstd", KRATE) }
    #[cfg(not(feature = "gzip"))]
    inventory::submit! { CodecPlugin::disabled("gzip", CodecKind::BytesToBytes, "gzip", KRATE) }
    #[cfg(not(feature = "crc32c"))]
    inventory::submit! { CodecPlugin::disabled("crc32c", CodecKind::BytesToBytes, "crc32c", KRATE) }
    #[cfg(not(feature = "sharding"))]
    inventory::submit! { CodecPlugin::disabled("sharding_indexed", CodecKind::ArrayToBytes, "sharding", KRATE) }
}
