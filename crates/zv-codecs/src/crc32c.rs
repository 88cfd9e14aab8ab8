//! The `crc32c` codec (bytes→bytes): appends a CRC32C (Castagnoli) checksum.
//!
//! Zarr v3 codec `crc32c` (zarr-specs `codecs/crc32c`). Registered name: `crc32c`. No
//! configuration. Encoding appends the checksum of the input as a little-endian `u32`;
//! decoding verifies and strips it (zero-copy), and a mismatch is an error (which the array
//! layer reports with the chunk key).
//!
//! ```
//! use zv_core::codec::BytesToBytesCodec;
//! let codec = zv_codecs::crc32c::Crc32cCodec;
//! let framed = codec.encode(std::borrow::Cow::Borrowed(&b"abc"[..]))?;
//! assert_eq!(framed.len(), 7);
//! assert_eq!(&*codec.decode(framed, Some(3))?, b"abc");
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    parse_configuration, BytesToBytesCodec, ChunkRepresentation, Codec, CodecError, CodecKind,
    CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};
use zv_core::plugin::CodecPlugin;

/// The registered name.
pub const NAME: &str = "crc32c";

/// The (empty) JSON configuration of `crc32c`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Crc32cConfig {}

/// The `crc32c` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct Crc32cCodec;

impl CodecTraits for Crc32cCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        None
    }
}

impl BytesToBytesCodec for Crc32cCodec {
    fn encode<'a>(&self, input: Cow<'a, [u8]>) -> Result<Cow<'a, [u8]>, CodecError> {
        let sum = crc32c::crc32c(&input);
        let mut out = input.into_owned();
        out.extend_from_slice(&sum.to_le_bytes());
        Ok(Cow::Owned(out))
    }

    fn decode<'a>(
        &self,
        input: Cow<'a, [u8]>,
        expected: Option<usize>,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        let Some(n) = input.len().checked_sub(4) else {
            return Err(CodecError::corrupt(
                NAME,
                format!("{} bytes cannot hold a 4-byte checksum", input.len()),
            ));
        };
        if let Some(e) = expected {
            if e != n {
                return Err(CodecError::SizeMismatch {
                    codec: NAME.into(),
                    expected: e as u64 + 4,
                    actual: input.len() as u64,
                });
            }
        }
        let stored = u32::from_le_bytes([input[n], input[n + 1], input[n + 2], input[n + 3]]);
        let computed = crc32c::crc32c(&input[..n]);
        if stored != computed {
            return Err(CodecError::ChecksumMismatch {
                codec: NAME.into(),
                stored,
                computed,
            });
        }
        Ok(match input {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..n]),
            Cow::Owned(mut v) => {
                v.truncate(n);
                Cow::Owned(v)
            }
        })
    }

    fn encoded_size(&self, decoded_size: usize) -> Option<usize> {
        decoded_size.checked_add(4)
    }
}

fn create(meta: &ExtensionMetadata, _repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let _config: Crc32cConfig = parse_configuration(meta)?;
    Ok(Codec::BytesToBytes(Arc::new(Crc32cCodec)))
}

inventory::submit! {
    CodecPlugin::new(NAME, CodecKind::BytesToBytes, create)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatch_is_reported() {
        let mut framed = Crc32cCodec
            .encode(Cow::Borrowed(&b"hello"[..]))
            .unwrap()
            .into_owned();
        framed[0] ^= 1;
        assert!(matches!(
            Crc32cCodec.decode(Cow::Owned(framed), None),
            Err(CodecError::ChecksumMismatch { .. })
        ));
        assert!(Crc32cCodec
            .decode(Cow::Borrowed(&[1, 2, 3][..]), None)
            .is_err());
    }

    #[test]
    fn known_value() {
        // CRC32C("123456789") = 0xE3069283
        let framed = Crc32cCodec
            .encode(Cow::Borrowed(&b"123456789"[..]))
            .unwrap();
        assert_eq!(&framed[9..], &0xE306_9283u32.to_le_bytes());
    }
}
