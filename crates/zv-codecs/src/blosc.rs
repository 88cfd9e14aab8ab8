//! The `blosc` codec (bytes→bytes), through c-blosc 1.x (`blosc-src`); zstd frames made and
//! decoded in Rust.
//!
//! Zarr v3 codec `blosc` (zarr-specs `codecs/blosc`). Registered name: `blosc`. Configuration:
//!
//! | field | values | default |
//! |---|---|---|
//! | `cname` | `blosclz`, `lz4`, `lz4hc`, `zlib`, `zstd` | required |
//! | `clevel` | 0–9 | required |
//! | `shuffle` | `noshuffle`, `shuffle`, `bitshuffle` (or 0, 1, 2) | required |
//! | `typesize` | 1–255 | the element size of the array |
//! | `blocksize` | bytes, 0 = automatic | 0 |
//!
//! Decoding checks the 16-byte frame header in safe code before any call into C: format
//! version, flags, sizes (`cbytes` must equal the stored length, `nbytes` the expected decoded
//! size), the block-start table and the compressor; only then is the output allocated. Frames
//! whose compressor is zstd are then decoded in Rust (module `zstd_frames`, with the zstd
//! feature), the others by c-blosc. With the zstd feature, frames whose compressor is zstd are
//! made in Rust too, byte for byte as c-blosc makes them (module `zstd_encode`).
//!
//! ```
//! let meta: zv_core::metadata::ExtensionMetadata = serde_json::from_value(serde_json::json!(
//!     {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}
//! )).unwrap();
//! let parsed: zv_codecs::blosc::BloscConfig = zv_core::codec::parse_configuration(&meta)?;
//! assert_eq!(parsed.cname, zv_codecs::blosc::BloscCompressor::Zstd);
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    configuration_object, parse_configuration, ChunkRepresentation, Codec, CodecError, CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};

mod ffi;
mod header;
#[cfg(feature = "zstd")]
mod zstd_encode;
#[cfg(feature = "zstd")]
mod zstd_frames;

pub use header::{BloscHeader, HEADER_SIZE};

/// The registered name.
pub const NAME: &str = "blosc";

/// The largest input c-blosc 1.x accepts.
pub const MAX_BUFFER_SIZE: usize = i32::MAX as usize - HEADER_SIZE;

/// A blosc compressor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BloscCompressor {
    /// BloscLZ.
    Blosclz,
    /// LZ4.
    Lz4,
    /// LZ4 HC.
    Lz4hc,
    /// zlib.
    Zlib,
    /// Zstandard.
    Zstd,
    /// Snappy (not compiled into this build; refused).
    Snappy,
}

impl BloscCompressor {
    /// The name c-blosc knows.
    pub fn c_name(self) -> &'static str {
        match self {
            BloscCompressor::Blosclz => "blosclz",
            BloscCompressor::Lz4 => "lz4",
            BloscCompressor::Lz4hc => "lz4hc",
            BloscCompressor::Zlib => "zlib",
            BloscCompressor::Zstd => "zstd",
            BloscCompressor::Snappy => "snappy",
        }
    }
}

/// A blosc shuffle mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BloscShuffle {
    /// No shuffle.
    Noshuffle,
    /// Byte shuffle.
    Shuffle,
    /// Bit shuffle.
    Bitshuffle,
}

impl<'de> Deserialize<'de> for BloscShuffle {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) => match s.as_str() {
                "noshuffle" => Ok(BloscShuffle::Noshuffle),
                "shuffle" => Ok(BloscShuffle::Shuffle),
                "bitshuffle" => Ok(BloscShuffle::Bitshuffle),
                _ => Err(D::Error::custom(format!(
                    "unknown shuffle `{s}` (expected noshuffle, shuffle, bitshuffle)"
                ))),
            },
            serde_json::Value::Number(n) => match n.as_u64() {
                Some(0) => Ok(BloscShuffle::Noshuffle),
                Some(1) => Ok(BloscShuffle::Shuffle),
                Some(2) => Ok(BloscShuffle::Bitshuffle),
                _ => Err(D::Error::custom(format!("unknown shuffle {n}"))),
            },
            other => Err(D::Error::custom(format!("invalid shuffle {other}"))),
        }
    }
}

impl BloscShuffle {
    fn code(self) -> i32 {
        match self {
            BloscShuffle::Noshuffle => 0,
            BloscShuffle::Shuffle => 1,
            BloscShuffle::Bitshuffle => 2,
        }
    }
}

/// The JSON configuration of `blosc`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BloscConfig {
    /// The compressor.
    pub cname: BloscCompressor,
    /// The compression level, 0–9.
    pub clevel: u8,
    /// The shuffle mode.
    pub shuffle: BloscShuffle,
    /// The element size used by the shuffle (defaults to the array's element size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typesize: Option<u32>,
    /// The block size in bytes (0 = automatic).
    #[serde(default)]
    pub blocksize: u32,
}

/// The `blosc` codec with a validated configuration.
#[derive(Debug, Clone)]
pub struct BloscCodec {
    cname: BloscCompressor,
    clevel: u8,
    shuffle: BloscShuffle,
    typesize: u8,
    blocksize: u32,
}

impl BloscCodec {
    /// Builds the codec; `typesize` defaults to `default_typesize`.
    pub fn new(config: &BloscConfig, default_typesize: usize) -> Result<Self, CodecError> {
        if config.clevel > 9 {
            return Err(CodecError::config(
                NAME,
                format!("clevel {} is outside 0..=9", config.clevel),
            ));
        }
        if !ffi::compressor_available(config.cname.c_name()) {
            return Err(CodecError::config(
                NAME,
                format!(
                    "compressor `{}` is not compiled into this build (available: blosclz, lz4, lz4hc, zlib, zstd)",
                    config.cname.c_name()
                ),
            ));
        }
        let typesize = config
            .typesize
            .map_or(Ok(default_typesize.max(1)), |t| Ok(t as usize))
            .and_then(|t: usize| {
                u8::try_from(t).ok().filter(|&t| t >= 1).ok_or_else(|| {
                    CodecError::config(NAME, format!("typesize {t} is outside 1..=255"))
                })
            })?;
        Ok(Self {
            cname: config.cname,
            clevel: config.clevel,
            shuffle: config.shuffle,
            typesize,
            blocksize: config.blocksize,
        })
    }

    /// Compresses `input` into a blosc frame.
    pub fn compress(&self, input: &[u8]) -> Result<Vec<u8>, CodecError> {
        if input.len() > MAX_BUFFER_SIZE {
            return Err(CodecError::Unsupported {
                codec: NAME.into(),
                what: format!("inputs of {} bytes (max {MAX_BUFFER_SIZE})", input.len()),
            });
        }
        #[cfg(feature = "zstd")]
        if self.cname == BloscCompressor::Zstd {
            if let Some(frame) = zstd_encode::encode(
                input,
                i32::from(self.clevel),
                self.shuffle.code(),
                usize::from(self.typesize),
                self.blocksize as usize,
            ) {
                return Ok(frame);
            }
        }
        ffi::compress(
            input,
            i32::from(self.clevel),
            self.shuffle.code(),
            usize::from(self.typesize),
            self.cname.c_name(),
            self.blocksize as usize,
        )
        .map_err(|reason| CodecError::Other {
            codec: NAME.into(),
            message: reason,
        })
    }

    /// Decompresses a blosc frame, checking its header first (and, if `expected` is given,
    /// that it decodes to exactly that many bytes).
    pub fn decompress(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>, CodecError> {
        let header = BloscHeader::parse(input).map_err(|r| CodecError::corrupt(NAME, r))?;
        if let Some(n) = expected {
            if header.nbytes != n {
                return Err(CodecError::SizeMismatch {
                    codec: NAME.into(),
                    expected: n as u64,
                    actual: header.nbytes as u64,
                });
            }
        }
        header
            .validate_frame(input)
            .map_err(|r| CodecError::corrupt(NAME, r))?;
        if header.nbytes == 0 {
            return Ok(Vec::new());
        }
        #[cfg(feature = "zstd")]
        if let Some(decoded) = zstd_frames::decode(input, &header) {
            return decoded.map_err(|r| CodecError::corrupt(NAME, r));
        }
        ffi::decompress(input, &header).map_err(|r| CodecError::corrupt(NAME, r))
    }
}

impl CodecTraits for BloscCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        let config = BloscConfig {
            cname: self.cname,
            clevel: self.clevel,
            shuffle: self.shuffle,
            typesize: Some(u32::from(self.typesize)),
            blocksize: self.blocksize,
        };
        configuration_object(&config)
    }
}

fn create(meta: &ExtensionMetadata, repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: BloscConfig = parse_configuration(meta)?;
    let default_typesize = repr.data_type().size().unwrap_or(1);
    Ok(Codec::BytesToBytes(Arc::new(BloscCodec::new(
        &config,
        default_typesize,
    )?)))
}

crate::compressor_codec!(BloscCodec, create);

#[cfg(test)]
mod tests {
    use super::*;

    fn codec(cname: BloscCompressor, shuffle: BloscShuffle, typesize: u32) -> BloscCodec {
        BloscCodec::new(
            &BloscConfig {
                cname,
                clevel: 5,
                shuffle,
                typesize: Some(typesize),
                blocksize: 0,
            },
            1,
        )
        .unwrap()
    }

    #[test]
    fn every_cname_and_shuffle_round_trips() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i / 7).to_le_bytes()).collect();
        for cname in [
            BloscCompressor::Blosclz,
            BloscCompressor::Lz4,
            BloscCompressor::Lz4hc,
            BloscCompressor::Zlib,
            BloscCompressor::Zstd,
        ] {
            for shuffle in [
                BloscShuffle::Noshuffle,
                BloscShuffle::Shuffle,
                BloscShuffle::Bitshuffle,
            ] {
                let c = codec(cname, shuffle, 4);
                let enc = c.compress(&data).unwrap();
                assert!(enc.len() < data.len(), "{cname:?} {shuffle:?}");
                assert_eq!(
                    BloscCodec::decompress(&enc, Some(data.len())).unwrap(),
                    data
                );
            }
        }
    }

    #[test]
    fn snappy_and_bad_levels_are_refused() {
        let cfg = |cname, clevel, typesize| BloscConfig {
            cname,
            clevel,
            shuffle: BloscShuffle::Shuffle,
            typesize,
            blocksize: 0,
        };
        assert!(BloscCodec::new(&cfg(BloscCompressor::Snappy, 5, None), 4).is_err());
        assert!(BloscCodec::new(&cfg(BloscCompressor::Zstd, 10, None), 4).is_err());
        assert!(BloscCodec::new(&cfg(BloscCompressor::Zstd, 5, Some(0)), 4).is_err());
        assert!(BloscCodec::new(&cfg(BloscCompressor::Zstd, 5, Some(256)), 4).is_err());
    }

    #[test]
    fn wrong_expected_size_is_refused_before_decoding() {
        let c = codec(BloscCompressor::Lz4, BloscShuffle::Shuffle, 4);
        let enc = c.compress(&[1u8; 1000]).unwrap();
        assert!(matches!(
            BloscCodec::decompress(&enc, Some(999)),
            Err(CodecError::SizeMismatch {
                expected: 999,
                actual: 1000,
                ..
            })
        ));
    }
}
