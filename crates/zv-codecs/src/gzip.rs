//! The `gzip` codec (bytes→bytes): gzip members (RFC 1952), through `flate2`.
//!
//! Zarr v3 codec `gzip` (zarr-specs `codecs/gzip`). Registered name: `gzip`. Configuration:
//! `level`, 0–9 (required).
//!
//! ```
//! let meta: zv_core::metadata::ExtensionMetadata = serde_json::from_value(serde_json::json!(
//!     {"name": "gzip", "configuration": {"level": 6}})).unwrap();
//! let parsed: zv_codecs::gzip::GzipConfig = zv_core::codec::parse_configuration(&meta)?;
//! assert_eq!(parsed.level, 6);
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::io::Write;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    configuration_object, parse_configuration, ChunkRepresentation, Codec, CodecError, CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};

/// The registered name.
pub const NAME: &str = "gzip";

/// The JSON configuration of `gzip`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GzipConfig {
    /// The compression level, 0–9.
    pub level: u32,
}

/// The `gzip` codec with a validated level.
#[derive(Debug, Clone)]
pub struct GzipCodec {
    level: u32,
}

impl GzipCodec {
    /// Builds the codec.
    pub fn new(config: &GzipConfig) -> Result<Self, CodecError> {
        if config.level > 9 {
            return Err(CodecError::config(
                NAME,
                format!("level {} is outside 0..=9", config.level),
            ));
        }
        Ok(Self {
            level: config.level,
        })
    }

    /// Compresses `input` into one gzip member.
    pub fn compress(&self, input: &[u8]) -> Result<Vec<u8>, CodecError> {
        let fail = |e| crate::io_failure(NAME, e);
        let mut enc = flate2::write::GzEncoder::new(
            Vec::with_capacity(input.len() / 2 + 64),
            flate2::Compression::new(self.level),
        );
        enc.write_all(input).map_err(fail)?;
        enc.finish().map_err(fail)
    }

    /// Decompresses one or more gzip members; with `expected`, the output must be exactly
    /// that many bytes, and decoding stops one byte past it.
    pub fn decompress(input: &[u8], expected: Option<usize>) -> Result<Vec<u8>, CodecError> {
        crate::read_decoded(flate2::read::MultiGzDecoder::new(input), expected, NAME)
    }
}

impl CodecTraits for GzipCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        configuration_object(&GzipConfig { level: self.level })
    }
}

fn create(meta: &ExtensionMetadata, _repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: GzipConfig = parse_configuration(meta)?;
    Ok(Codec::BytesToBytes(Arc::new(GzipCodec::new(&config)?)))
}

crate::compressor_codec!(GzipCodec, create);
