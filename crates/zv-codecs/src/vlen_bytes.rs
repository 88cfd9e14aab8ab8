//! The `vlen-bytes` codec (array→bytes): variable-length byte strings.
//!
//! zarr-python's `vlen-bytes` codec (numcodecs `VLenBytes` framing) for the
//! `variable_length_bytes` data type. Registered name: `vlen-bytes`. Configuration: `{}`.
//!
//! ```text
//! u32 LE  item count (= the number of elements of the chunk)
//! repeat: u32 LE length, then that many bytes
//! ```
//!
//! Decoding checks the count against the chunk and every length against the remaining bytes
//! before copying anything; trailing bytes are an error. A chunk the codec is handed whole
//! (the store's own buffer) is decoded in place: the items are moved over the length fields,
//! so a large chunk (a ZV 0.9 object index of tens of megabytes) is not held twice.
//!
//! ```
//! let meta: zv_core::metadata::ExtensionMetadata = serde_json::from_value(serde_json::json!(
//!     {"name": "vlen-bytes", "configuration": {}})).unwrap();
//! let _: zv_codecs::vlen_bytes::VlenBytesConfig = zv_core::codec::parse_configuration(&meta)?;
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    parse_configuration, ArrayBytes, ArrayToBytesCodec, ChunkRepresentation, Codec, CodecError,
    CodecKind, CodecTraits,
};
use zv_core::metadata::{ExtensionMetadata, JsonObject};
use zv_core::plugin::CodecPlugin;

/// The registered name.
pub const NAME: &str = "vlen-bytes";

/// The (empty) JSON configuration of `vlen-bytes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlenBytesConfig {}

/// The `vlen-bytes` codec.
#[derive(Debug, Clone, Copy, Default)]
pub struct VlenBytesCodec;

fn read_u32(input: &[u8], at: usize) -> Option<usize> {
    let b = input.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
}

/// Checks the framing of `count` elements and returns where each item starts in the data
/// once the framing is removed (`count + 1` offsets, the first 0); [`items`] says where each
/// lies in `input`. Nothing is copied.
fn frame(input: &[u8], count: usize) -> Result<Vec<usize>, CodecError> {
    let stored = read_u32(input, 0).ok_or_else(|| {
        CodecError::corrupt(
            NAME,
            format!("{} bytes cannot hold the item count", input.len()),
        )
    })?;
    if stored != count {
        return Err(CodecError::SizeMismatch {
            codec: NAME.into(),
            expected: count as u64,
            actual: stored as u64,
        });
    }
    // Every item takes at least 4 bytes: check before allocating the offsets.
    if count.saturating_mul(4) > input.len() - 4 {
        return Err(CodecError::corrupt(
            NAME,
            format!("{} bytes cannot hold {count} items", input.len()),
        ));
    }
    let mut offsets = Vec::with_capacity(count + 1);
    offsets.push(0);
    let (mut pos, mut end) = (4usize, 0usize);
    for i in 0..count {
        let len = read_u32(input, pos)
            .ok_or_else(|| CodecError::corrupt(NAME, format!("item {i}: truncated length")))?;
        pos += 4;
        pos = pos
            .checked_add(len)
            .filter(|&e| e <= input.len())
            .ok_or_else(|| {
                CodecError::corrupt(NAME, format!("item {i}: {len} bytes run past the end"))
            })?;
        end += len;
        offsets.push(end);
    }
    if pos != input.len() {
        return Err(CodecError::corrupt(
            NAME,
            format!("{} trailing bytes", input.len() - pos),
        ));
    }
    Ok(offsets)
}

/// Where each item of a framing checked by [`frame`] lies in the input, and where it starts
/// in the data, from its `offsets`.
fn items(offsets: &[usize]) -> impl Iterator<Item = (std::ops::Range<usize>, usize)> + '_ {
    offsets.windows(2).enumerate().map(|(i, w)| {
        let at = 4 * (i + 2) + w[0];
        (at..at + (w[1] - w[0]), w[0])
    })
}

/// Parses the framing into (data, offsets) for `count` elements.
pub fn decode_framing(input: &[u8], count: usize) -> Result<(Vec<u8>, Vec<usize>), CodecError> {
    let offsets = frame(input, count)?;
    let mut data = Vec::with_capacity(offsets[count]);
    for (src, _) in items(&offsets) {
        data.extend_from_slice(&input[src]);
    }
    Ok((data, offsets))
}

/// [`decode_framing`] of a buffer the caller owns: the items are moved to the front of
/// `input` (each left by the length fields before it), which becomes the data, so a large
/// chunk is not held twice.
pub fn decode_framing_owned(
    mut input: Vec<u8>,
    count: usize,
) -> Result<(Vec<u8>, Vec<usize>), CodecError> {
    let offsets = frame(&input, count)?;
    for (src, to) in items(&offsets) {
        input.copy_within(src, to);
    }
    input.truncate(offsets[count]);
    Ok((input, offsets))
}

impl CodecTraits for VlenBytesCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        Some(JsonObject::new())
    }
}

impl ArrayToBytesCodec for VlenBytesCodec {
    fn encode<'a>(
        &self,
        input: ArrayBytes<'a>,
        repr: &ChunkRepresentation,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        input.validate(repr)?;
        let ArrayBytes::Variable { data, offsets } = &input else {
            return Err(CodecError::Unsupported {
                codec: NAME.into(),
                what: "fixed-size elements".into(),
            });
        };
        let count = offsets.len() - 1;
        let too_big = |what: usize| CodecError::Unsupported {
            codec: NAME.into(),
            what: format!("{what} (more than u32::MAX)"),
        };
        let mut out = Vec::with_capacity(4 + 4 * count + data.len());
        out.extend_from_slice(
            &u32::try_from(count)
                .map_err(|_| too_big(count))?
                .to_le_bytes(),
        );
        for w in offsets.windows(2) {
            let item = &data[w[0]..w[1]];
            let len = u32::try_from(item.len()).map_err(|_| too_big(item.len()))?;
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(item);
        }
        Ok(Cow::Owned(out))
    }

    fn decode<'a>(
        &self,
        input: Cow<'a, [u8]>,
        repr: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        if !repr.data_type().is_variable() {
            return Err(CodecError::Unsupported {
                codec: NAME.into(),
                what: format!("data type {}", repr.data_type()),
            });
        }
        let count = repr.num_elements_usize();
        let (data, offsets) = match input {
            Cow::Owned(v) => decode_framing_owned(v, count)?,
            Cow::Borrowed(b) => decode_framing(b, count)?,
        };
        Ok(ArrayBytes::Variable {
            data: Cow::Owned(data),
            offsets: Cow::Owned(offsets),
        })
    }

    fn encoded_size(&self, _repr: &ChunkRepresentation) -> Option<usize> {
        None
    }
}

fn create(meta: &ExtensionMetadata, repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let _config: VlenBytesConfig = parse_configuration(meta)?;
    if !repr.data_type().is_variable() {
        return Err(CodecError::Unsupported {
            codec: NAME.into(),
            what: format!("data type {} (use `bytes`)", repr.data_type()),
        });
    }
    Ok(Codec::ArrayToBytes(Arc::new(VlenBytesCodec)))
}

inventory::submit! {
    CodecPlugin::new(NAME, CodecKind::ArrayToBytes, create)
}

#[cfg(test)]
mod tests {
    use super::*;
    use zv_core::data_type::{DataType, FillValue};

    #[test]
    fn framing_round_trip_and_errors() {
        let repr =
            ChunkRepresentation::new(vec![3], DataType::VariableLengthBytes, FillValue::default())
                .unwrap();
        let input = ArrayBytes::from_elements([&b"ab"[..], b"", b"xyz"]);
        let enc = VlenBytesCodec.encode(input.clone(), &repr).unwrap();
        assert_eq!(&enc[..8], &[3, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(VlenBytesCodec.decode(enc.clone(), &repr).unwrap(), input);
        let mut extended = enc.to_vec();
        extended.push(0);
        assert!(VlenBytesCodec.decode(Cow::Owned(extended), &repr).is_err());
        assert!(VlenBytesCodec
            .decode(Cow::Borrowed(&enc[..enc.len() - 1]), &repr)
            .is_err());
        // a huge declared count with few bytes is refused before allocating
        let bomb = [0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0];
        assert!(decode_framing(&bomb, 0x0fff_ffff).is_err());
        assert!(decode_framing_owned(bomb.to_vec(), 0x0fff_ffff).is_err());
    }

    /// The framing of `items`, as numcodecs writes it.
    fn framed(items: &[Vec<u8>]) -> Vec<u8> {
        let mut out = (items.len() as u32).to_le_bytes().to_vec();
        for item in items {
            out.extend_from_slice(&(item.len() as u32).to_le_bytes());
            out.extend_from_slice(item);
        }
        out
    }

    proptest::proptest! {
        /// Decoding in place gives what decoding a borrowed buffer gives, for valid framings
        /// and for any corruption of them (the same error, or the same items).
        #[test]
        fn owned_decoding_is_borrowed_decoding(
            items in proptest::collection::vec(proptest::collection::vec(proptest::num::u8::ANY, 0..40), 0..20),
            cut in 0usize..400,
            flip in proptest::option::of((0usize..400, proptest::num::u8::ANY)),
        ) {
            let good = framed(&items);
            let (data, offsets) = decode_framing_owned(good.clone(), items.len()).unwrap();
            let expect: Vec<u8> = items.concat();
            proptest::prop_assert_eq!(&data, &expect);
            for (i, item) in items.iter().enumerate() {
                proptest::prop_assert_eq!(&data[offsets[i]..offsets[i + 1]], &item[..]);
            }
            let mut bad = good;
            bad.truncate(bad.len().saturating_sub(cut % 5));
            if let Some((at, b)) = flip {
                if !bad.is_empty() {
                    let at = at % bad.len();
                    bad[at] = b;
                }
            }
            let borrowed = decode_framing(&bad, items.len()).map_err(|e| e.to_string());
            let owned = decode_framing_owned(bad, items.len()).map_err(|e| e.to_string());
            proptest::prop_assert_eq!(owned, borrowed);
        }
    }
}
