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

use std::borrow::Cow;
use std::io::Write;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    parse_configuration, BytesToBytesCodec, ChunkRepresentation, Codec, CodecError, CodecKind,
    CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};
use zv_core::plugin::CodecPlugin;

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
}

impl CodecTraits for GzipCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        let mut m = JsonObject::new();
        m.insert("level".into(), self.level.into());
        Some(m)
    }
}

impl BytesToBytesCodec for GzipCodec {
    fn encode<'a>(&self, input: Cow<'a, [u8]>) -> Result<Cow<'a, [u8]>, CodecError> {
        let fail = |e: std::io::Error| CodecError::Other {
            codec: NAME.into(),
            message: e.to_string(),
        };
        let mut enc = flate2::write::GzEncoder::new(
            Vec::with_capacity(input.len() / 2 + 64),
            flate2::Compression::new(self.level),
        );
        enc.write_all(&input).map_err(fail)?;
        enc.finish().map(Cow::Owned).map_err(fail)
    }

    fn decode<'a>(
        &self,
        input: Cow<'a, [u8]>,
        expected: Option<usize>,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        let decoder = flate2::read::MultiGzDecoder::new(&input[..]);
        let out = crate::read_decoded(decoder, expected, NAME)?;
        Ok(Cow::Owned(out))
    }

    fn encoded_size(&self, _decoded_size: usize) -> Option<usize> {
        None
    }
}

fn create(meta: &ExtensionMetadata, _repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: GzipConfig = parse_configuration(meta)?;
    Ok(Codec::BytesToBytes(Arc::new(GzipCodec::new(&config)?)))
}

inventory::submit! {
    CodecPlugin::new(NAME, CodecKind::BytesToBytes, create)
}
