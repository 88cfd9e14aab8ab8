//! The `bytes` codec (array→bytes): elements in a fixed byte order.
//!
//! Zarr v3 core specification, codec `bytes`. Registered name: `bytes`. The `endian`
//! configuration (`"little"` or `"big"`) is required for data types whose scalars are wider
//! than one byte and optional otherwise.
//!
//! ```
//! let config = serde_json::json!({"name": "bytes", "configuration": {"endian": "big"}});
//! let meta: zv_core::metadata::ExtensionMetadata = serde_json::from_value(config).unwrap();
//! let parsed: zv_codecs::bytes::BytesConfig = zv_core::codec::parse_configuration(&meta)?;
//! assert_eq!(parsed.endian, Some(zv_codecs::bytes::Endian::Big));
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    configuration_object, parse_configuration, ArrayBytes, ArrayToBytesCodec, ChunkRepresentation,
    Codec, CodecError, CodecKind, CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};
use zv_core::plugin::CodecPlugin;

/// The registered name.
pub const NAME: &str = "bytes";

/// A byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Endian {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

impl Endian {
    /// The byte order of this machine.
    pub const NATIVE: Endian = if cfg!(target_endian = "big") {
        Endian::Big
    } else {
        Endian::Little
    };
}

/// The JSON configuration of `bytes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BytesConfig {
    /// The byte order of the encoded elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endian: Option<Endian>,
}

/// The `bytes` codec bound to a data type.
#[derive(Debug, Clone)]
pub struct BytesCodec {
    endian: Option<Endian>,
    /// Size of a scalar component to swap, or 1 when nothing needs swapping.
    swap: usize,
}

impl BytesCodec {
    /// Builds the codec for elements of `repr`; `endian` is required for multi-byte types.
    pub fn new(endian: Option<Endian>, repr: &ChunkRepresentation) -> Result<Self, CodecError> {
        let Some(component) = repr.data_type().component_size() else {
            return Err(CodecError::Unsupported {
                codec: NAME.into(),
                what: format!(
                    "data type {} (use `vlen-bytes` for variable-length data)",
                    repr.data_type()
                ),
            });
        };
        let swap = match endian {
            None if component > 1 => {
                return Err(CodecError::config(
                    NAME,
                    format!("`endian` is required for {}", repr.data_type()),
                ))
            }
            Some(e) if e != Endian::NATIVE && component > 1 => component,
            _ => 1,
        };
        Ok(Self { endian, swap })
    }

    /// The chunk's bytes in the other byte order (encoded ↔ native), after checking that
    /// they are the chunk's size; unchanged when no swap is needed.
    fn reorder<'a>(
        &self,
        bytes: Cow<'a, [u8]>,
        repr: &ChunkRepresentation,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        let expected = repr.fixed_size().unwrap_or(0);
        if bytes.len() != expected {
            return Err(CodecError::SizeMismatch {
                codec: NAME.into(),
                expected: expected as u64,
                actual: bytes.len() as u64,
            });
        }
        if self.swap > 1 {
            let mut owned = bytes.into_owned();
            swap_in_place(&mut owned, self.swap);
            Ok(Cow::Owned(owned))
        } else {
            Ok(bytes)
        }
    }
}

/// Reverses the byte order of every `width`-byte component of `bytes` in place (a trailing
/// partial component is left as is). Used by the `bytes` codec and by readers of stores whose
/// elements are in a non-native byte order.
pub fn swap_in_place(bytes: &mut [u8], width: usize) {
    for c in bytes.chunks_exact_mut(width) {
        c.reverse();
    }
}

impl CodecTraits for BytesCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        self.endian
            .and_then(|e| configuration_object(&BytesConfig { endian: Some(e) }))
    }
}

impl ArrayToBytesCodec for BytesCodec {
    fn encode<'a>(
        &self,
        input: ArrayBytes<'a>,
        repr: &ChunkRepresentation,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        let ArrayBytes::Fixed(bytes) = input else {
            return Err(CodecError::Unsupported {
                codec: NAME.into(),
                what: "variable-length elements".into(),
            });
        };
        self.reorder(bytes, repr)
    }

    fn decode<'a>(
        &self,
        input: Cow<'a, [u8]>,
        repr: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        self.reorder(input, repr).map(ArrayBytes::Fixed)
    }

    fn encoded_size(&self, repr: &ChunkRepresentation) -> Option<usize> {
        repr.fixed_size()
    }
}

fn create(meta: &ExtensionMetadata, repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: BytesConfig = parse_configuration(meta)?;
    Ok(Codec::ArrayToBytes(Arc::new(BytesCodec::new(
        config.endian,
        repr,
    )?)))
}

inventory::submit! {
    CodecPlugin::new(NAME, CodecKind::ArrayToBytes, create)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zv_core::data_type::{DataType, FillValue};

    fn repr(dt: DataType, n: u64) -> ChunkRepresentation {
        ChunkRepresentation::new(vec![n], dt, FillValue::zero(dt)).unwrap()
    }

    #[test]
    fn big_endian_swaps_components() {
        let r = repr(DataType::Complex64, 1);
        let c = BytesCodec::new(Some(Endian::Big), &r).unwrap();
        let mut data = Vec::new();
        data.extend_from_slice(&1.0f32.to_ne_bytes());
        data.extend_from_slice(&2.0f32.to_ne_bytes());
        let enc = c
            .encode(ArrayBytes::Fixed(Cow::Borrowed(&data)), &r)
            .unwrap();
        assert_eq!(&enc[..4], &1.0f32.to_be_bytes());
        assert_eq!(&enc[4..], &2.0f32.to_be_bytes());
        let dec = c.decode(enc, &r).unwrap();
        assert_eq!(dec, ArrayBytes::Fixed(Cow::Borrowed(&data[..])));
    }

    #[test]
    fn endian_required_for_wide_types_and_sizes_checked() {
        assert!(BytesCodec::new(None, &repr(DataType::Int16, 2)).is_err());
        assert!(BytesCodec::new(None, &repr(DataType::UInt8, 2)).is_ok());
        assert!(BytesCodec::new(None, &repr(DataType::VariableLengthBytes, 2)).is_err());
        let r = repr(DataType::Int32, 2);
        let c = BytesCodec::new(Some(Endian::Little), &r).unwrap();
        assert!(matches!(
            c.decode(Cow::Borrowed(&[0u8; 7][..]), &r),
            Err(CodecError::SizeMismatch {
                expected: 8,
                actual: 7,
                ..
            })
        ));
    }
}
