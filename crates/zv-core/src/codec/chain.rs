//! The codec pipeline of an array.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{
    assemble, ArrayBytes, ArrayToArrayCodec, ArrayToBytesCodec, BytesToBytesCodec, ChunkReader,
    ChunkRepresentation, Codec, CodecError, PieceSink,
};
use crate::grid::Region;
use crate::metadata::ExtensionMetadata;
use crate::plugin;
use crate::store::ByteRange;

/// The bytes a compressor may add to its input, beyond an eighth of it, in the read cap of
/// [`CodecChain::encoded_size_bound`] (64 KiB).
pub const COMPRESSOR_SLACK: u64 = 64 << 10;

/// The read cap of a chunk whose decoded size is not known from the metadata
/// (variable-length elements): 1 GiB.
pub const MAX_VARIABLE_CHUNK_BYTES: u64 = 1 << 30;

/// `n` bytes through a compressor, at most.
fn generous(n: u64) -> u64 {
    n.saturating_add(n / 8).saturating_add(COMPRESSOR_SLACK)
}

/// A validated codec pipeline bound to one chunk representation: array→array codecs, one
/// array→bytes codec, bytes→bytes codecs.
///
/// ```
/// # use zv_core::codec::{ArrayBytes, ChunkRepresentation, CodecChain};
/// # use zv_core::data_type::{DataType, FillValue};
/// # use zv_core::metadata::ExtensionMetadata;
/// // zv-core alone registers no codecs; zv-codecs registers `bytes`, `blosc`, …
/// let repr = ChunkRepresentation::new(vec![4], DataType::UInt8, FillValue::zero(DataType::UInt8))?;
/// let err = CodecChain::from_metadata(&[ExtensionMetadata::new("no-such-codec")], &repr).unwrap_err();
/// assert!(err.to_string().contains("unknown codec `no-such-codec`"));
/// # Ok::<(), zv_core::codec::CodecError>(())
/// ```
#[derive(Debug, Clone)]
pub struct CodecChain {
    array_to_array: Vec<(Arc<dyn ArrayToArrayCodec>, ChunkRepresentation)>,
    array_to_bytes: Arc<dyn ArrayToBytesCodec>,
    array_to_bytes_repr: ChunkRepresentation,
    bytes_to_bytes: Vec<Arc<dyn BytesToBytesCodec>>,
    /// `sizes[i]`: the exact decoded size of the input of `bytes_to_bytes[i]`, where known.
    sizes: Vec<Option<usize>>,
    decoded: ChunkRepresentation,
}

impl CodecChain {
    /// Builds a pipeline from codecs already constructed for `decoded` (the representation
    /// of the array's chunks), checking their order.
    pub fn new(codecs: Vec<Codec>, decoded: ChunkRepresentation) -> Result<Self, CodecError> {
        let mut array_to_array = Vec::new();
        let mut array_to_bytes: Option<(Arc<dyn ArrayToBytesCodec>, ChunkRepresentation)> = None;
        let mut bytes_to_bytes = Vec::new();
        let mut repr = decoded.clone();
        for codec in codecs {
            match codec {
                Codec::ArrayToArray(c) => {
                    if let Some((a2b, _)) = &array_to_bytes {
                        return Err(CodecError::Pipeline(format!(
                            "array→array codec `{}` comes after the array→bytes codec `{}`",
                            c.name(),
                            a2b.name()
                        )));
                    }
                    let next = c.encoded_representation(&repr)?;
                    array_to_array.push((c, std::mem::replace(&mut repr, next)));
                }
                Codec::ArrayToBytes(c) => {
                    if let Some((a2b, _)) = &array_to_bytes {
                        return Err(CodecError::Pipeline(format!(
                            "two array→bytes codecs: `{}` and `{}`",
                            a2b.name(),
                            c.name()
                        )));
                    }
                    array_to_bytes = Some((c, repr.clone()));
                }
                Codec::BytesToBytes(c) => {
                    if array_to_bytes.is_none() {
                        return Err(CodecError::Pipeline(format!(
                            "bytes→bytes codec `{}` comes before any array→bytes codec",
                            c.name()
                        )));
                    }
                    bytes_to_bytes.push(c);
                }
            }
        }
        let Some((array_to_bytes, array_to_bytes_repr)) = array_to_bytes else {
            return Err(CodecError::Pipeline(
                "no array→bytes codec (e.g. `bytes`)".to_owned(),
            ));
        };
        let mut sizes = Vec::with_capacity(bytes_to_bytes.len());
        let mut size = array_to_bytes.encoded_size(&array_to_bytes_repr);
        for c in &bytes_to_bytes {
            sizes.push(size);
            size = size.and_then(|s| c.encoded_size(s));
        }
        Ok(Self {
            array_to_array,
            array_to_bytes,
            array_to_bytes_repr,
            bytes_to_bytes,
            sizes,
            decoded,
        })
    }

    /// Builds a pipeline from the `codecs` entries of a `zarr.json`, resolving names through
    /// the codec registry. Unknown codecs with `"must_understand": false` are skipped.
    pub fn from_metadata(
        codecs: &[ExtensionMetadata],
        decoded: &ChunkRepresentation,
    ) -> Result<Self, CodecError> {
        let mut built = Vec::with_capacity(codecs.len());
        let mut repr = decoded.clone();
        let mut array_repr = decoded.clone();
        for meta in codecs {
            let codec = match plugin::create_codec(meta, &array_repr) {
                Ok(c) => c,
                Err(CodecError::Unknown { .. }) if meta.may_ignore() => continue,
                Err(e) => return Err(e),
            };
            if let Codec::ArrayToArray(c) = &codec {
                repr = c.encoded_representation(&repr)?;
                array_repr = repr.clone();
            }
            built.push(codec);
        }
        Self::new(built, decoded.clone())
    }

    /// The largest stored size a chunk may have, read before the chunk is (so a read is
    /// capped by what the metadata allows): the exact encoded size where every codec knows it
    /// (`bytes`, `crc32c`, …); through a compressor (whose output depends on the data) its
    /// input size plus an eighth plus [`COMPRESSOR_SLACK`] bytes, more than any supported
    /// compressor's worst case (incompressible data gains at most a header and a few bytes
    /// per block); [`MAX_VARIABLE_CHUNK_BYTES`] when the decoded size is not known
    /// (variable-length elements).
    pub fn encoded_size_bound(&self) -> u64 {
        let first = self
            .array_to_bytes
            .encoded_size(&self.array_to_bytes_repr)
            .map(|n| n as u64)
            .or_else(|| {
                self.array_to_bytes_repr
                    .fixed_size()
                    .map(|n| generous(n as u64))
            });
        let Some(mut size) = first else {
            return MAX_VARIABLE_CHUNK_BYTES;
        };
        for c in &self.bytes_to_bytes {
            size = match usize::try_from(size).ok().and_then(|s| c.encoded_size(s)) {
                Some(n) => n as u64,
                None => generous(size),
            };
        }
        size
    }

    /// The representation of the decoded chunks.
    pub fn decoded_representation(&self) -> &ChunkRepresentation {
        &self.decoded
    }

    /// The `zarr.json` entries of the pipeline, in encode order.
    pub fn metadata(&self) -> Vec<ExtensionMetadata> {
        let mut out: Vec<ExtensionMetadata> = self
            .array_to_array
            .iter()
            .map(|(c, _)| c.metadata())
            .collect();
        out.push(self.array_to_bytes.metadata());
        out.extend(self.bytes_to_bytes.iter().map(|c| c.metadata()));
        out
    }

    /// Encodes one chunk.
    pub fn encode<'a>(&self, input: ArrayBytes<'a>) -> Result<Cow<'a, [u8]>, CodecError> {
        input.validate(&self.decoded)?;
        let mut data = input;
        for (codec, repr) in &self.array_to_array {
            data = codec.encode(data, repr)?;
        }
        let mut bytes = self
            .array_to_bytes
            .encode(data, &self.array_to_bytes_repr)?;
        for codec in &self.bytes_to_bytes {
            bytes = codec.encode(bytes)?;
        }
        Ok(bytes)
    }

    /// Encodes one chunk given as its array→bytes encoding, made by the caller (say a
    /// `vlen-bytes` framing built where its items are made, which saves the codec's copy of
    /// them): only the bytes→bytes codecs run. The caller answers for `serialized` being what
    /// the chain's array→bytes codec gives for the chunk; a chain with array→array codecs is
    /// refused, as the bytes could not say which elements they hold.
    pub fn encode_serialized<'a>(
        &self,
        serialized: Cow<'a, [u8]>,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        if let Some((codec, _)) = self.array_to_array.first() {
            return Err(CodecError::Pipeline(format!(
                "a chunk given encoded by `{}` skips the array→array codec `{}`",
                self.array_to_bytes.name(),
                codec.name()
            )));
        }
        let mut bytes = serialized;
        for codec in &self.bytes_to_bytes {
            bytes = codec.encode(bytes)?;
        }
        Ok(bytes)
    }

    /// Decodes one chunk; the result always holds exactly the elements of the decoded
    /// representation.
    pub fn decode<'a>(&self, input: Cow<'a, [u8]>) -> Result<ArrayBytes<'a>, CodecError> {
        let mut bytes = input;
        for (codec, expected) in self.bytes_to_bytes.iter().zip(&self.sizes).rev() {
            bytes = codec.decode(bytes, *expected)?;
            if let Some(n) = expected {
                if bytes.len() != *n {
                    return Err(CodecError::SizeMismatch {
                        codec: codec.name().to_owned(),
                        expected: *n as u64,
                        actual: bytes.len() as u64,
                    });
                }
            }
        }
        let mut data = self
            .array_to_bytes
            .decode(bytes, &self.array_to_bytes_repr)?;
        data.validate(&self.array_to_bytes_repr)?;
        for (codec, repr) in self.array_to_array.iter().rev() {
            data = codec.decode(data, repr)?;
        }
        data.validate(&self.decoded)?;
        Ok(data)
    }

    /// One chunk decoded to pieces, each given to `sink` as it is decoded, possibly on several
    /// threads ([`ArrayToBytesCodec::decode_pieces`]): `Ok(false)` (`sink` never called)
    /// unless the array→bytes codec stands alone and decodes to pieces. Each piece is checked
    /// to lie in the chunk and to hold the elements of its box before `sink` sees it, and
    /// together they must cover the chunk (else an error, after `sink` saw some pieces).
    pub fn decode_pieces(&self, input: &[u8], sink: &PieceSink<'_>) -> Result<bool, CodecError> {
        if !(self.array_to_array.is_empty() && self.bytes_to_bytes.is_empty()) {
            return Ok(false);
        }
        let name = self.array_to_bytes.name();
        let total = AtomicU64::new(0);
        let checked = |b: &Region, d: &ArrayBytes<'_>| {
            b.check_within(self.decoded.shape())
                .map_err(|e| CodecError::corrupt(name, e.to_string()))?;
            d.validate(&self.decoded.with_shape(b.shape().to_vec())?)?;
            let n = b.num_elements().unwrap_or(u64::MAX);
            // saturating: a count past the chunk's is an error below either way
            let _ = total.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |t| {
                Some(t.saturating_add(n))
            });
            sink(b, d)
        };
        if !self
            .array_to_bytes
            .decode_pieces(input, &self.decoded, &checked)?
        {
            return Ok(false);
        }
        let total = total.into_inner();
        if total != self.decoded.num_elements() {
            return Err(CodecError::corrupt(
                name,
                format!(
                    "decoded pieces hold {total} elements, the chunk {}",
                    self.decoded.num_elements()
                ),
            ));
        }
        Ok(true)
    }

    /// The exact encoded size of a chunk, if it is known without the data (e.g. `bytes`,
    /// optionally followed by `crc32c`).
    pub fn encoded_size(&self) -> Option<usize> {
        let mut size = self.array_to_bytes.encoded_size(&self.array_to_bytes_repr);
        for c in &self.bytes_to_bytes {
            size = size.and_then(|s| c.encoded_size(s));
        }
        size
    }

    /// Whether [`CodecChain::partial_decode`] reads less than the whole chunk: the array→bytes
    /// codec decodes partially and no other codec stands around it.
    pub fn supports_partial_decode(&self) -> bool {
        self.array_to_array.is_empty()
            && self.bytes_to_bytes.is_empty()
            && self.array_to_bytes.supports_partial_decode()
    }

    /// The byte range [`CodecChain::partial_decode`] reads first from every stored chunk
    /// whatever the region (a shard's index), when it decodes partially and that range is
    /// fixed ([`ArrayToBytesCodec::first_partial_read`]).
    pub fn first_partial_read(&self) -> Option<ByteRange> {
        if !self.supports_partial_decode() {
            return None;
        }
        self.array_to_bytes.first_partial_read()
    }

    /// The elements of `region` (chunk coordinates, within the chunk shape) of the chunk
    /// `reader` reads, in C order; `None` if the chunk is not stored. Reads only what the
    /// region needs when [`CodecChain::supports_partial_decode`], else the whole chunk.
    pub fn partial_decode(
        &self,
        reader: &dyn ChunkReader,
        region: &Region,
    ) -> Result<Option<ArrayBytes<'static>>, CodecError> {
        region
            .check_within(self.decoded.shape())
            .map_err(|e| CodecError::Unsupported {
                codec: self.array_to_bytes.name().to_owned(),
                what: e.to_string(),
            })?;
        if self.supports_partial_decode() {
            let data = self
                .array_to_bytes
                .partial_decode(reader, region, &self.decoded)?;
            if let Some(d) = &data {
                d.validate(&self.decoded.with_shape(region.shape().to_vec())?)?;
            }
            return Ok(data);
        }
        let whole = ByteRange::FromStart {
            offset: 0,
            length: None,
        };
        let Some(bytes) = reader.read(whole)? else {
            return Ok(None);
        };
        let data = self.decode(Cow::Owned(bytes.into()))?;
        let whole = Region::whole(self.decoded.shape());
        assemble(region, &self.decoded, &[(&whole, &data)]).map(Some)
    }
}
