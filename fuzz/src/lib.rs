//! Helpers shared by zv's fuzz targets: splitting a fuzz input into small parameters and a
//! payload, and decoding bytes through the codec registry exactly as a chunk read does.
//!
//! The targets call the library's own decoders; nothing here decodes a stored format itself.

use std::borrow::Cow;

use zv_core::codec::{ArrayBytes, ChunkRepresentation, CodecChain};
use zv_core::data_type::{DataType, FillValue};
use zv_core::metadata::ExtensionMetadata;

/// Reads small parameters from the front of a fuzz input; the rest is the payload.
/// Missing bytes read as zero, so every input is usable.
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Wraps a fuzz input.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// The next byte (0 past the end).
    pub fn u8(&mut self) -> u8 {
        let (first, rest) = self
            .data
            .split_first()
            .map_or((0, &[][..]), |(b, r)| (*b, r));
        self.data = rest;
        first
    }

    /// The next little-endian `u16`.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// The next little-endian `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// The next `n` bytes (fewer at the end).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.data.split_at(n.min(self.data.len()));
        self.data = tail;
        head
    }

    /// A `u16`-length-prefixed slice.
    pub fn prefixed(&mut self) -> &'a [u8] {
        let n = self.u16() as usize;
        self.bytes(n)
    }

    /// Whatever is left.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }
}

/// The fixed-size data types the codec targets choose from (index modulo the length).
pub const DATA_TYPES: [DataType; 8] = [
    DataType::UInt8,
    DataType::UInt16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt64,
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
];

/// Decodes `encoded` as one chunk of `shape` and `data_type` through the codec pipeline that
/// `codecs` (the `codecs` list of a `zarr.json`) names, resolved through the codec registry.
/// Returns the decoded chunk, or `None` if the pipeline or the bytes are refused.
pub fn decode_chunk(
    codecs: serde_json::Value,
    data_type: DataType,
    shape: Vec<u64>,
    encoded: &[u8],
) -> Option<ArrayBytes<'_>> {
    zv_codecs::link();
    let codecs: Vec<ExtensionMetadata> = serde_json::from_value(codecs).ok()?;
    let repr = ChunkRepresentation::new(shape, data_type, FillValue::zero(data_type)).ok()?;
    let chain = CodecChain::from_metadata(&codecs, &repr).ok()?;
    let decoded = chain.decode(Cow::Borrowed(encoded)).ok()?;
    check_decoded(&decoded, &repr);
    Some(decoded)
}

/// What the codec pipeline promises of a decoded chunk: exactly the chunk's size.
fn check_decoded(decoded: &ArrayBytes<'_>, repr: &ChunkRepresentation) {
    match decoded {
        ArrayBytes::Fixed(bytes) => {
            let want = repr.fixed_size();
            assert_eq!(Some(bytes.len()), want, "decoded chunk of the wrong size");
        }
        ArrayBytes::Variable { data, offsets } => {
            assert_eq!(offsets.len() as u64, repr.num_elements() + 1);
            assert_eq!(offsets.last().copied(), Some(data.len()));
        }
    }
}

/// The `bytes` codec entry (little endian), first in every fixed-size pipeline.
pub fn bytes_codec() -> serde_json::Value {
    serde_json::json!({"name": "bytes", "configuration": {"endian": "little"}})
}

/// Reads the codec-target header (a data type selector and an element count below 65536)
/// and decodes the rest through `bytes` + `codec`.
pub fn fuzz_bytes_to_bytes(data: &[u8], codec: serde_json::Value) {
    let mut input = Input::new(data);
    let data_type = DATA_TYPES[input.u8() as usize % DATA_TYPES.len()];
    let n = input.u16() as u64;
    let _ = decode_chunk(
        serde_json::json!([bytes_codec(), codec]),
        data_type,
        vec![n],
        input.rest(),
    );
}

/// What every decoded list of manifests must allow: checking against a chunk's fragment count
/// without expanding ranges, expanding the references once they are checked, and re-encoding
/// to bytes that decode equal.
pub fn exercise_manifests(manifests: &[zv_format::layout::manifest::Manifest], sid_ndim: usize) {
    use zv_format::layout::manifest::Manifest;
    for m in manifests {
        if m.check_fragments(|_| Some(4096)).is_ok() {
            let refs = m.refs().count();
            assert!(refs <= 4096 * m.blocks.len().max(1));
        }
        let bytes = m
            .encode(sid_ndim)
            .unwrap_or_else(|e| panic!("a decoded manifest does not encode: {e}"));
        assert_eq!(bytes.len(), m.encoded_len(sid_ndim));
        let again = Manifest::decode(&bytes, sid_ndim)
            .unwrap_or_else(|e| panic!("a decoded manifest does not re-decode: {e}"));
        assert_eq!(&again, m);
    }
}
pub mod store_case;
pub mod io_case;
