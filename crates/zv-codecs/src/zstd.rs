//! The `zstd` codec (bytes→bytes): Zstandard frames.
//!
//! Zarr v3 codec `zstd` (zarr-specs `codecs/zstd`). Registered name: `zstd`. Configuration:
//! `level` (integer, default 0 = the library default) and `checksum` (bool, default false;
//! when true every frame carries a content checksum that decoding verifies).
//!
//! Decoding compares the decoded size that the first frame declares with the expected size
//! before allocating; otherwise frames are decoded as a stream, never past the expected size.
//!
//! ```
//! let meta: zv_core::metadata::ExtensionMetadata = serde_json::from_value(serde_json::json!(
//!     {"name": "zstd", "configuration": {"level": 3, "checksum": true}})).unwrap();
//! let parsed: zv_codecs::zstd::ZstdConfig = zv_core::codec::parse_configuration(&meta)?;
//! assert_eq!((parsed.level, parsed.checksum), (3, true));
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::cell::RefCell;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    configuration_object, parse_configuration, ChunkRepresentation, Codec, CodecError, CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};

/// The registered name.
pub const NAME: &str = "zstd";

/// The JSON configuration of `zstd`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZstdConfig {
    /// The compression level (negative levels are fast modes; 0 is the library default).
    #[serde(default)]
    pub level: i32,
    /// Whether frames carry a checksum.
    #[serde(default)]
    pub checksum: bool,
}

/// The `zstd` codec with a validated configuration.
#[derive(Debug, Clone)]
pub struct ZstdCodec {
    level: i32,
    checksum: bool,
}

impl ZstdCodec {
    /// Builds the codec.
    pub fn new(config: &ZstdConfig) -> Result<Self, CodecError> {
        let range = zstd::compression_level_range();
        if config.level != 0 && !range.contains(&config.level) {
            return Err(CodecError::config(
                NAME,
                format!("level {} is outside {range:?}", config.level),
            ));
        }
        Ok(Self {
            level: config.level,
            checksum: config.checksum,
        })
    }

    /// Compresses `input` into one frame (with its content size, and a checksum if
    /// configured).
    pub fn compress(&self, input: &[u8]) -> Result<Vec<u8>, CodecError> {
        bulk_compress(self.level, self.checksum, input).map_err(|e| crate::io_failure(NAME, e))
    }

    /// Decompresses one or more frames; with `expected`, the output must be exactly that many
    /// bytes and a declared size that differs is refused before allocating.
    pub fn decompress(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>, CodecError> {
        let corrupt = |e: std::io::Error| CodecError::corrupt(NAME, e.to_string());
        // The size declared by the first frame (a stream may hold several frames).
        let declared = zstd::zstd_safe::get_frame_content_size(input)
            .ok()
            .flatten();
        if let (Some(n), Some(d)) = (expected, declared) {
            if d > n as u64 {
                return Err(CodecError::SizeMismatch {
                    codec: NAME.into(),
                    expected: n as u64,
                    actual: d,
                });
            }
            if d == n as u64 {
                // One frame of exactly the expected size: decode in one call.
                let out = bulk_decompress(input, n).map_err(corrupt)?;
                if out.len() != n {
                    return Err(CodecError::SizeMismatch {
                        codec: NAME.into(),
                        expected: n as u64,
                        actual: out.len() as u64,
                    });
                }
                return Ok(out);
            }
        }
        // No declared size (or nothing expected): stream, and never read past the expected
        // size plus one byte.
        stream_decompress(input, expected)
    }
}

thread_local! {
    /// This thread's streaming decompression context, kept between chunks (each use resets
    /// its session): a ZV 0.9 cell (`vlen-bytes` then `zstd`) has no expected size and is
    /// decoded as a stream, and a new context per cell was 19% of a graph pyramid's time.
    static STREAM_DECOMPRESSOR: RefCell<Option<zstd::zstd_safe::DCtx<'static>>> =
        const { RefCell::new(None) };
}

/// The frames of `input` decoded as a stream (at most `expected` + 1 bytes read when a size
/// is expected) with this thread's streaming context (dropped after an error).
fn stream_decompress(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>, CodecError> {
    let corrupt = |e: std::io::Error| CodecError::corrupt(NAME, e.to_string());
    let fresh = || -> Result<Vec<u8>, CodecError> {
        let decoder = zstd::stream::read::Decoder::with_buffer(input).map_err(corrupt)?;
        crate::read_decoded(decoder, expected, NAME)
    };
    STREAM_DECOMPRESSOR.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return fresh();
        };
        let Some(mut context) = slot.take().or_else(zstd::zstd_safe::DCtx::try_create) else {
            return fresh();
        };
        let decoder = zstd::stream::read::Decoder::with_context(input, &mut context);
        let out = crate::read_decoded(decoder, expected, NAME)?;
        *slot = Some(context);
        Ok(out)
    })
}

thread_local! {
    /// This thread's decompression context, kept between chunks: creating one allocates and
    /// initialises its tables, a cost comparable to decoding a small chunk.
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// A compression context of `level`, with a checksum when `checksum`.
fn compressor(level: i32, checksum: bool) -> std::io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(level)?;
    if checksum {
        c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
    }
    Ok(c)
}

thread_local! {
    /// This thread's compression context and its (level, checksum), kept between chunks:
    /// creating one allocates its tables and asks the CPU for its features (`cpuid`, which
    /// traps to the hypervisor on a virtual machine: 8% of a pyramid test's time). A frame
    /// compressed with a reused context is the frame a new one makes (each call starts a new
    /// session with the same parameters; no dictionary).
    static COMPRESSOR: RefCell<Option<(i32, bool, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
}

/// One frame of `input`, compressed with this thread's context (made anew when the level or
/// the checksum differ; dropped after an error).
fn bulk_compress(level: i32, checksum: bool, input: &[u8]) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return compressor(level, checksum)?.compress(input);
        };
        let mut context = match slot.take() {
            Some((l, c, context)) if (l, c) == (level, checksum) => context,
            _ => compressor(level, checksum)?,
        };
        let out = context.compress(input)?;
        *slot = Some((level, checksum, context));
        Ok(out)
    })
}

thread_local! {
    /// This thread's context for [`compress_at_level_into`] (c-blosc's zstd streams), kept
    /// between streams: `ZSTD_compress` makes one for every stream.
    #[cfg(feature = "blosc")]
    static LEVEL_COMPRESSOR: RefCell<Option<zstd::zstd_safe::CCtx<'static>>> =
        const { RefCell::new(None) };
}

/// `input` compressed into `out` as `ZSTD_compress` compresses it at `level` (one frame, the
/// level's parameters and nothing else), with this thread's context: the frame's size, or an
/// error when the frame does not fit in `out` (the context is dropped after an error).
#[cfg(feature = "blosc")]
pub(crate) fn compress_at_level_into(
    input: &[u8],
    level: i32,
    out: &mut [u8],
) -> std::io::Result<usize> {
    let failed = |code: usize| {
        std::io::Error::other(format!("zstd: {}", zstd::zstd_safe::get_error_name(code)))
    };
    LEVEL_COMPRESSOR.with(|cell| {
        let fresh = || {
            zstd::zstd_safe::CCtx::try_create()
                .ok_or_else(|| std::io::Error::other("zstd: no compression context"))
        };
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return fresh()?.compress(out, input, level).map_err(failed);
        };
        let mut context = match slot.take() {
            Some(c) => c,
            None => fresh()?,
        };
        let n = context.compress(out, input, level).map_err(failed)?;
        *slot = Some(context);
        Ok(n)
    })
}

/// The frames of `input` decoded into `out`, which they must fill exactly (fewer or more
/// bytes are an error), with this thread's context (dropped after an error). For c-blosc
/// frames whose streams are zstd frames (`blosc::zstd_frames`).
#[cfg(feature = "blosc")]
pub(crate) fn decompress_exactly_into(input: &[u8], out: &mut [u8]) -> std::io::Result<()> {
    let n = with_decompressor(|d| d.decompress_to_buffer(input, &mut *out))?;
    if n != out.len() {
        return Err(std::io::Error::other(format!(
            "a stream decodes to {n} bytes, its block holds {}",
            out.len()
        )));
    }
    Ok(())
}

/// One frame of `n` decoded bytes, decoded with this thread's context.
fn bulk_decompress(input: &[u8], n: usize) -> std::io::Result<Vec<u8>> {
    with_decompressor(|d| d.decompress(input, n))
}

/// `f` run with this thread's bulk decompression context (a new one when the thread's is in
/// use); the context is dropped after an error, so that a failed frame leaves no state
/// behind.
fn with_decompressor<T>(
    f: impl FnOnce(&mut zstd::bulk::Decompressor<'static>) -> std::io::Result<T>,
) -> std::io::Result<T> {
    DECOMPRESSOR.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return f(&mut zstd::bulk::Decompressor::new()?);
        };
        let mut context = match slot.take() {
            Some(c) => c,
            None => zstd::bulk::Decompressor::new()?,
        };
        let out = f(&mut context)?;
        *slot = Some(context);
        Ok(out)
    })
}

impl CodecTraits for ZstdCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        configuration_object(&ZstdConfig {
            level: self.level,
            checksum: self.checksum,
        })
    }
}

fn create(meta: &ExtensionMetadata, _repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: ZstdConfig = parse_configuration(meta)?;
    Ok(Codec::BytesToBytes(Arc::new(ZstdCodec::new(&config)?)))
}

crate::compressor_codec!(ZstdCodec, create);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_frames_detect_corruption() {
        let c = ZstdCodec::new(&ZstdConfig {
            level: 3,
            checksum: true,
        })
        .unwrap();
        let data: Vec<u8> = (0..5000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        let mut enc = c.compress(&data).unwrap();
        assert_eq!(ZstdCodec::decompress(&enc, Some(data.len())).unwrap(), data);
        let last = enc.len() - 1;
        enc[last] ^= 0xff;
        assert!(ZstdCodec::decompress(&enc, Some(data.len())).is_err());
        // the thread's context decodes the next frame after a failed one
        enc[last] ^= 0xff;
        assert_eq!(ZstdCodec::decompress(&enc, Some(data.len())).unwrap(), data);
        let other: Vec<u8> = (0..3000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        let enc2 = c.compress(&other).unwrap();
        assert_eq!(
            ZstdCodec::decompress(&enc2, Some(other.len())).unwrap(),
            other
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 64, failure_persistence: None, ..Default::default() })]
        /// Frames made with this thread's reused context, whatever the levels and checksums
        /// asked before, are the frames a new context makes, and decode to their input.
        #[test]
        fn a_reused_context_makes_the_frames_of_a_new_one(
            calls in proptest::collection::vec((-3i32..8, proptest::bool::ANY, proptest::collection::vec(0u8..4, 0..3000)), 1..8),
        ) {
            for (level, checksum, data) in calls {
                let c = ZstdCodec::new(&ZstdConfig { level, checksum }).unwrap();
                let reused = c.compress(&data).unwrap();
                let fresh = compressor(level, checksum).unwrap().compress(&data).unwrap();
                proptest::prop_assert_eq!(&reused, &fresh);
                proptest::prop_assert_eq!(ZstdCodec::decompress(&reused, Some(data.len())).unwrap(), data);
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 64, failure_persistence: None, ..Default::default() })]
        /// Streams decoded with this thread's reused context (frames without a declared size,
        /// several frames, damaged frames between them) decode as with a new context, and a
        /// damaged stream is an error either way.
        #[test]
        fn a_reused_stream_context_decodes_as_a_new_one(
            calls in proptest::collection::vec((proptest::collection::vec(0u8..4, 0..3000), 1usize..3, proptest::option::of(0usize..64), proptest::bool::ANY), 1..8),
        ) {
            for (data, frames, cut, expect) in calls {
                let mut input = Vec::new();
                for _ in 0..frames {
                    // a frame without its content size: only the stream path decodes it
                    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
                    e.include_contentsize(false).unwrap();
                    std::io::Write::write_all(&mut e, &data).unwrap();
                    input.extend(e.finish().unwrap());
                }
                if let Some(cut) = cut {
                    input.truncate(input.len().saturating_sub(cut + 1));
                }
                let expected = expect.then_some(data.len() * frames);
                let reused = stream_decompress(&input, expected);
                let fresh = crate::read_decoded(
                    zstd::stream::read::Decoder::with_buffer(&input[..]).unwrap(),
                    expected,
                    NAME,
                );
                proptest::prop_assert_eq!(reused.as_ref().ok(), fresh.as_ref().ok());
                proptest::prop_assert_eq!(reused.is_err(), fresh.is_err());
                if cut.is_none() {
                    proptest::prop_assert_eq!(reused.unwrap(), data.repeat(frames));
                }
            }
        }
    }

    #[test]
    fn declared_size_mismatch_is_refused() {
        let c = ZstdCodec::new(&ZstdConfig::default()).unwrap();
        let enc = c.compress(&[7u8; 100]).unwrap();
        assert!(matches!(
            ZstdCodec::decompress(&enc, Some(50)),
            Err(CodecError::SizeMismatch {
                expected: 50,
                actual: 100,
                ..
            })
        ));
        assert!(ZstdCodec::decompress(&enc[..enc.len() - 3], Some(100)).is_err());
        assert!(ZstdCodec::decompress(&enc[..enc.len() - 3], None).is_err());
    }

    #[test]
    fn levels_are_checked() {
        assert!(ZstdCodec::new(&ZstdConfig {
            level: 23,
            checksum: false
        })
        .is_err());
        assert!(ZstdCodec::new(&ZstdConfig {
            level: -5,
            checksum: false
        })
        .is_ok());
    }
}
