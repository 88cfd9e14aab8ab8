//! # zv-codec-delta — an example third-party codec plugin
//!
//! A complete codec plugin outside `zv-codecs`, to copy from: `example.delta` is an
//! array→array codec that stores the differences between consecutive elements (C order) of an
//! integer chunk, with wrapping arithmetic — sorted ids and smooth counters then compress much
//! better with a following `blosc` or `zstd`.
//!
//! Configuration (`{"name": "example.delta", "configuration": {"order": 1}}`): `order` is how
//! many times the differences are taken (1 or 2; default 1).
//!
//! A plugin needs four things:
//! 1. a serde configuration type with `deny_unknown_fields`;
//! 2. a runtime codec type implementing [`CodecTraits`] (its configuration through
//!    [`configuration_object`], the inverse of [`parse_configuration`]) and one codec kind
//!    trait;
//! 3. a factory `fn(&ExtensionMetadata, &ChunkRepresentation) -> Result<Codec, CodecError>` that
//!    validates the configuration against the chunk's data type;
//! 4. one `inventory::submit!` of a [`CodecPlugin`].
//!
//! Its tests run `zv_testkit::codec::check_codec` (the conformance suite zv's own codecs run).
//!
//! ```
//! zv_codec_delta::link();
//! let plugin = zv_core::plugin::codec_plugin("example.delta")?;
//! assert_eq!(plugin.kind, zv_core::codec::CodecKind::ArrayToArray);
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    configuration_object, parse_configuration, ArrayBytes, ArrayToArrayCodec, ChunkRepresentation,
    Codec, CodecError, CodecKind, CodecTraits,
};
use zv_core::data_type::DataType;
use zv_core::metadata::{ExtensionMetadata, JsonObject};
use zv_core::plugin::CodecPlugin;

/// The registered name.
pub const NAME: &str = "example.delta";

/// The JSON configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeltaConfig {
    /// How many times differences are taken (1 or 2).
    #[serde(default = "one")]
    pub order: u8,
}

fn one() -> u8 {
    1
}

/// The codec, bound to an integer element width.
#[derive(Debug, Clone)]
pub struct DeltaCodec {
    order: u8,
    width: usize,
}

impl DeltaCodec {
    /// Builds the codec for chunks of `data_type` (integer types only).
    pub fn new(config: &DeltaConfig, data_type: DataType) -> Result<Self, CodecError> {
        if !(1..=2).contains(&config.order) {
            return Err(CodecError::config(
                NAME,
                format!("order {} is not 1 or 2", config.order),
            ));
        }
        let width = match data_type {
            DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 => 2,
            DataType::Int32 | DataType::UInt32 => 4,
            DataType::Int64 | DataType::UInt64 => 8,
            other => {
                return Err(CodecError::Unsupported {
                    codec: NAME.into(),
                    what: format!("data type {other} (integers only)"),
                })
            }
        };
        Ok(Self {
            order: config.order,
            width,
        })
    }

    fn get(&self, b: &[u8], i: usize) -> u64 {
        let mut v = [0u8; 8];
        let bytes = &b[i * self.width..(i + 1) * self.width];
        if cfg!(target_endian = "little") {
            v[..self.width].copy_from_slice(bytes);
            u64::from_le_bytes(v)
        } else {
            v[8 - self.width..].copy_from_slice(bytes);
            u64::from_be_bytes(v)
        }
    }

    fn put(&self, b: &mut [u8], i: usize, value: u64) {
        let out = &mut b[i * self.width..(i + 1) * self.width];
        if cfg!(target_endian = "little") {
            out.copy_from_slice(&value.to_le_bytes()[..self.width]);
        } else {
            out.copy_from_slice(&value.to_be_bytes()[8 - self.width..]);
        }
    }

    /// One pass of differences (`forward`) or of prefix sums (inverse), in place.
    fn pass(&self, b: &mut [u8], forward: bool) {
        let n = b.len() / self.width;
        if forward {
            for i in (1..n).rev() {
                let d = self.get(b, i).wrapping_sub(self.get(b, i - 1));
                self.put(b, i, d);
            }
        } else {
            for i in 1..n {
                let s = self.get(b, i).wrapping_add(self.get(b, i - 1));
                self.put(b, i, s);
            }
        }
    }

    fn transform<'a>(
        &self,
        input: ArrayBytes<'a>,
        forward: bool,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let ArrayBytes::Fixed(bytes) = input else {
            return Err(CodecError::Unsupported {
                codec: NAME.into(),
                what: "variable-length elements".into(),
            });
        };
        if bytes.len() % self.width != 0 {
            return Err(CodecError::corrupt(
                NAME,
                "length is not a multiple of the element size",
            ));
        }
        let mut owned = bytes.into_owned();
        for _ in 0..self.order {
            self.pass(&mut owned, forward);
        }
        Ok(ArrayBytes::Fixed(Cow::Owned(owned)))
    }
}

impl CodecTraits for DeltaCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        configuration_object(&DeltaConfig { order: self.order })
    }
}

impl ArrayToArrayCodec for DeltaCodec {
    fn encoded_representation(
        &self,
        decoded: &ChunkRepresentation,
    ) -> Result<ChunkRepresentation, CodecError> {
        Ok(decoded.clone())
    }

    fn encode<'a>(
        &self,
        input: ArrayBytes<'a>,
        decoded: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        input.validate(decoded)?;
        self.transform(input, true)
    }

    fn decode<'a>(
        &self,
        input: ArrayBytes<'a>,
        decoded: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        input.validate(decoded)?;
        self.transform(input, false)
    }
}

fn create(meta: &ExtensionMetadata, repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: DeltaConfig = parse_configuration(meta)?;
    Ok(Codec::ArrayToArray(Arc::new(DeltaCodec::new(
        &config,
        repr.data_type(),
    )?)))
}

inventory::submit! {
    CodecPlugin::new(NAME, CodecKind::ArrayToArray, create)
}

/// Does nothing; calling it makes sure this crate (and its registration) is linked.
#[inline(never)]
pub fn link() {}
