//! The codec traits of Zarr v3 and the codec pipeline.
//!
//! A codec is one of three kinds:
//!
//! - [`ArrayToArrayCodec`]: transforms decoded chunk elements (e.g. `transpose`);
//! - [`ArrayToBytesCodec`]: serialises elements to bytes (e.g. `bytes`, `vlen-bytes`);
//! - [`BytesToBytesCodec`]: transforms bytes (e.g. `blosc`, `zstd`, `gzip`, `crc32c`).
//!
//! A [`CodecChain`] (the pipeline of an array) is zero or more array→array codecs, exactly one
//! array→bytes codec and zero or more bytes→bytes codecs, in that order; the order is checked
//! when the chain is built. Codecs are built from their `zarr.json` entry *and* the chunk
//! representation they will see (shape, data type, fill value), so data-type checks (blosc
//! `typesize`, `bytes` endianness) happen once, when the array is opened.
//!
//! Decoders are told the expected decoded size where it is known and must refuse input that
//! disagrees **before** allocating for it.
//!
//! Codecs register through [`crate::plugin::CodecPlugin`]; [`CodecChain::from_metadata`]
//! resolves names through that registry.

use std::borrow::Cow;
use std::fmt::Debug;
use std::sync::Arc;

use crate::data_type::{DataType, FillValue};
use crate::metadata::{ExtensionMetadata, JsonObject};

mod chain;
mod partial;

pub use chain::{CodecChain, COMPRESSOR_SLACK, MAX_VARIABLE_CHUNK_BYTES};
pub use partial::{assemble, BytesChunkReader, ChunkReader, StoreChunkReader, SubReader};

/// Errors of codecs and of building a pipeline.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// No codec of this name is registered.
    #[error("unknown codec `{name}` (registered: {})", registered.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names that are registered.
        registered: Vec<String>,
    },
    /// The codec exists but was disabled at compile time.
    #[error("codec `{name}` is disabled at compile time: enable feature `{feature}` of `{krate}`")]
    Disabled {
        /// The codec name.
        name: String,
        /// The Cargo feature that enables it.
        feature: &'static str,
        /// The crate that has the feature.
        krate: &'static str,
    },
    /// A configuration value is invalid.
    #[error("codec `{codec}`: invalid configuration: {reason}")]
    InvalidConfiguration {
        /// The codec name.
        codec: String,
        /// Why.
        reason: String,
    },
    /// The codec cannot handle this data type or shape.
    #[error("codec `{codec}` does not support {what}")]
    Unsupported {
        /// The codec name.
        codec: String,
        /// What is not supported.
        what: String,
    },
    /// The codecs are not in the order array→array*, array→bytes, bytes→bytes*.
    #[error("invalid codec pipeline: {0}")]
    Pipeline(String),
    /// Input or output size does not match what the chunk representation requires.
    #[error("codec `{codec}`: expected {expected} bytes, got {actual}")]
    SizeMismatch {
        /// The codec name.
        codec: String,
        /// The expected size.
        expected: u64,
        /// The actual size.
        actual: u64,
    },
    /// The encoded data is invalid (truncated, corrupt, not a frame of this codec).
    #[error("codec `{codec}`: corrupt data: {reason}")]
    Corrupt {
        /// The codec name.
        codec: String,
        /// What is wrong.
        reason: String,
    },
    /// A stored checksum does not match the data.
    #[error(
        "codec `{codec}`: checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
    )]
    ChecksumMismatch {
        /// The codec name.
        codec: String,
        /// The checksum stored with the data.
        stored: u32,
        /// The checksum of the data.
        computed: u32,
    },
    /// A size computation overflowed.
    #[error("size overflow: {0}")]
    Overflow(String),
    /// A store error while a codec read part of a chunk ([`ChunkReader`]).
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    /// An error from a third-party codec.
    #[error("codec `{codec}`: {message}")]
    Other {
        /// The codec name.
        codec: String,
        /// What happened.
        message: String,
    },
}

impl CodecError {
    /// A [`CodecError::Corrupt`] for `codec`.
    pub fn corrupt(codec: &str, reason: impl Into<String>) -> Self {
        CodecError::Corrupt {
            codec: codec.to_owned(),
            reason: reason.into(),
        }
    }

    /// A [`CodecError::InvalidConfiguration`] for `codec`.
    pub fn config(codec: &str, reason: impl Into<String>) -> Self {
        CodecError::InvalidConfiguration {
            codec: codec.to_owned(),
            reason: reason.into(),
        }
    }
}

/// The shape, data type and fill value of a chunk, as seen by a codec.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkRepresentation {
    shape: Vec<u64>,
    data_type: DataType,
    fill_value: FillValue,
    num_elements: u64,
}

impl ChunkRepresentation {
    /// A chunk representation; the fill value must have the element size of the data type and
    /// the element count must fit in memory sizes.
    pub fn new(
        shape: Vec<u64>,
        data_type: DataType,
        fill_value: FillValue,
    ) -> Result<Self, CodecError> {
        let num_elements = shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| CodecError::Overflow(format!("chunk shape {shape:?}")))?;
        if let Some(size) = data_type.size() {
            if fill_value.as_bytes().len() != size {
                return Err(CodecError::Overflow(format!(
                    "fill value of {} bytes for {data_type}",
                    fill_value.as_bytes().len()
                )));
            }
            num_elements
                .checked_mul(size as u64)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| CodecError::Overflow(format!("chunk shape {shape:?}")))?;
        }
        Ok(Self {
            shape,
            data_type,
            fill_value,
            num_elements,
        })
    }

    /// The chunk shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// The element data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// The fill value.
    pub fn fill_value(&self) -> &FillValue {
        &self.fill_value
    }

    /// The number of elements.
    pub fn num_elements(&self) -> u64 {
        self.num_elements
    }

    /// The number of elements as a `usize` (checked on construction for fixed-size types).
    pub fn num_elements_usize(&self) -> usize {
        usize::try_from(self.num_elements).unwrap_or(usize::MAX)
    }

    /// The decoded size in bytes for fixed-size types (`None` for variable-length types).
    pub fn fixed_size(&self) -> Option<usize> {
        self.data_type
            .size()
            .map(|s| self.num_elements_usize().saturating_mul(s))
    }

    /// The same representation with another shape (for array→array codecs).
    pub fn with_shape(&self, shape: Vec<u64>) -> Result<Self, CodecError> {
        Self::new(shape, self.data_type, self.fill_value.clone())
    }
}

/// Decoded chunk elements: fixed-size elements as one buffer, or variable-length elements as
/// a data buffer and `n + 1` offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArrayBytes<'a> {
    /// Fixed-size elements, native byte order, C order.
    Fixed(Cow<'a, [u8]>),
    /// Variable-length elements: element `i` is `data[offsets[i]..offsets[i + 1]]`.
    Variable {
        /// Concatenated element bytes.
        data: Cow<'a, [u8]>,
        /// `n + 1` non-decreasing offsets into `data`, starting at 0 and ending at its length.
        offsets: Cow<'a, [usize]>,
    },
}

impl<'a> ArrayBytes<'a> {
    /// The chunk filled with the fill value of `repr`. Allocation failure (a chunk shape too
    /// large for this machine) is an error, not an abort.
    pub fn fill(repr: &ChunkRepresentation) -> Result<ArrayBytes<'static>, CodecError> {
        let n = repr.num_elements_usize();
        let fill = repr.fill_value().as_bytes();
        if repr.data_type().is_variable() {
            let mut offsets = try_vec::<usize>(n.saturating_add(1))?;
            let mut data = try_vec::<u8>(n.saturating_mul(fill.len()))?;
            offsets.push(0);
            for _ in 0..n {
                data.extend_from_slice(fill);
                offsets.push(data.len());
            }
            Ok(ArrayBytes::Variable {
                data: Cow::Owned(data),
                offsets: Cow::Owned(offsets),
            })
        } else {
            let total = n.saturating_mul(fill.len());
            if fill.iter().all(|&b| b == 0) {
                let data = crate::zeroed::try_zeroed_bytes(total).ok_or_else(|| {
                    CodecError::Overflow(format!("cannot allocate {total} bytes"))
                })?;
                return Ok(ArrayBytes::Fixed(Cow::Owned(data)));
            }
            let mut data = try_vec::<u8>(total)?;
            for _ in 0..n {
                data.extend_from_slice(fill);
            }
            Ok(ArrayBytes::Fixed(Cow::Owned(data)))
        }
    }

    /// Variable-length elements from a list of byte strings.
    pub fn from_elements<I, B>(elements: I) -> ArrayBytes<'static>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let mut data = Vec::new();
        let mut offsets = vec![0];
        for e in elements {
            data.extend_from_slice(e.as_ref());
            offsets.push(data.len());
        }
        ArrayBytes::Variable {
            data: Cow::Owned(data),
            offsets: Cow::Owned(offsets),
        }
    }

    /// Checks that these bytes hold exactly the elements of `repr`.
    pub fn validate(&self, repr: &ChunkRepresentation) -> Result<(), CodecError> {
        match (self, repr.data_type().size()) {
            (ArrayBytes::Fixed(b), Some(_)) => {
                let expected = repr.fixed_size().unwrap_or(0);
                if b.len() != expected {
                    return Err(CodecError::SizeMismatch {
                        codec: "array".into(),
                        expected: expected as u64,
                        actual: b.len() as u64,
                    });
                }
                Ok(())
            }
            (ArrayBytes::Variable { data, offsets }, None) => {
                let n = repr.num_elements_usize();
                if offsets.len() != n.saturating_add(1) {
                    return Err(CodecError::SizeMismatch {
                        codec: "array".into(),
                        expected: n as u64 + 1,
                        actual: offsets.len() as u64,
                    });
                }
                let ok = offsets.first() == Some(&0)
                    && offsets.last() == Some(&data.len())
                    && offsets.windows(2).all(|w| w[0] <= w[1]);
                if ok {
                    Ok(())
                } else {
                    Err(CodecError::corrupt(
                        "array",
                        "invalid variable-length offsets",
                    ))
                }
            }
            (ArrayBytes::Fixed(_), None) => Err(CodecError::Unsupported {
                codec: "array".into(),
                what: format!("fixed-size bytes for {}", repr.data_type()),
            }),
            (ArrayBytes::Variable { .. }, Some(_)) => Err(CodecError::Unsupported {
                codec: "array".into(),
                what: format!("variable-length bytes for {}", repr.data_type()),
            }),
        }
    }

    /// Converts borrowed data into owned data.
    pub fn into_owned(self) -> ArrayBytes<'static> {
        match self {
            ArrayBytes::Fixed(b) => ArrayBytes::Fixed(Cow::Owned(b.into_owned())),
            ArrayBytes::Variable { data, offsets } => ArrayBytes::Variable {
                data: Cow::Owned(data.into_owned()),
                offsets: Cow::Owned(offsets.into_owned()),
            },
        }
    }

    /// Element `i` of variable-length bytes (`None` for fixed-size bytes or out of range).
    pub fn element(&self, i: usize) -> Option<&[u8]> {
        match self {
            ArrayBytes::Fixed(_) => None,
            ArrayBytes::Variable { data, offsets } => {
                let (a, b) = (*offsets.get(i)?, *offsets.get(i + 1)?);
                data.get(a..b)
            }
        }
    }

    /// Whether every element equals the fill value of `repr`.
    pub fn is_fill(&self, repr: &ChunkRepresentation) -> bool {
        let fill = repr.fill_value().as_bytes();
        match self {
            ArrayBytes::Fixed(b) => {
                if fill.is_empty() {
                    return b.is_empty();
                }
                b.chunks(fill.len()).all(|c| c == fill)
            }
            ArrayBytes::Variable { data, offsets } => offsets
                .windows(2)
                .all(|w| data.get(w[0]..w[1]) == Some(fill)),
        }
    }
}

/// An empty vector with room for `n` items, or an error if that much memory cannot be had.
pub fn try_vec<T>(n: usize) -> Result<Vec<T>, CodecError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| CodecError::Overflow(format!("cannot allocate {n} items")))?;
    Ok(v)
}

/// What every codec can say about itself.
pub trait CodecTraits: Send + Sync + Debug {
    /// The registered name, as written in `zarr.json`.
    fn name(&self) -> &str;

    /// The configuration as written in `zarr.json` (`None` for none).
    fn configuration(&self) -> Option<JsonObject>;

    /// The `zarr.json` entry of this codec.
    fn metadata(&self) -> ExtensionMetadata {
        ExtensionMetadata {
            name: self.name().to_owned(),
            configuration: self.configuration(),
            must_understand: None,
        }
    }
}

/// A codec that transforms decoded elements.
pub trait ArrayToArrayCodec: CodecTraits {
    /// The representation of the encoded output, given the decoded input's.
    fn encoded_representation(
        &self,
        decoded: &ChunkRepresentation,
    ) -> Result<ChunkRepresentation, CodecError>;

    /// Encodes elements of representation `decoded`.
    fn encode<'a>(
        &self,
        input: ArrayBytes<'a>,
        decoded: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError>;

    /// Decodes elements back to representation `decoded`.
    fn decode<'a>(
        &self,
        input: ArrayBytes<'a>,
        decoded: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError>;
}

/// A codec that serialises elements to bytes.
pub trait ArrayToBytesCodec: CodecTraits {
    /// Serialises elements of representation `repr`.
    fn encode<'a>(
        &self,
        input: ArrayBytes<'a>,
        repr: &ChunkRepresentation,
    ) -> Result<Cow<'a, [u8]>, CodecError>;

    /// Deserialises bytes into elements of representation `repr`. Must check that the input
    /// holds exactly the elements of `repr` before allocating for them.
    fn decode<'a>(
        &self,
        input: Cow<'a, [u8]>,
        repr: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError>;

    /// The exact encoded size for `repr`, if it is known without the data.
    fn encoded_size(&self, repr: &ChunkRepresentation) -> Option<usize>;

    /// Whether [`ArrayToBytesCodec::partial_decode`] reads less than the whole chunk (the
    /// array layer then uses it for regions that cover part of a chunk).
    fn supports_partial_decode(&self) -> bool {
        false
    }

    /// The byte range that [`ArrayToBytesCodec::partial_decode`] reads first whatever the
    /// region (a shard's index), if there is one. A reader that knows arrays laid out alike
    /// can read it ahead for all of them at once; `None` (this default) where the first read
    /// depends on the region or there is no partial decoding.
    fn first_partial_read(&self) -> Option<crate::store::ByteRange> {
        None
    }

    /// The elements of `region` (in chunk coordinates, within `repr`'s shape; C order) of
    /// the chunk that `reader` reads, or `None` if the chunk is not stored. The default reads
    /// the whole chunk and decodes it.
    fn partial_decode(
        &self,
        reader: &dyn ChunkReader,
        region: &crate::grid::Region,
        repr: &ChunkRepresentation,
    ) -> Result<Option<ArrayBytes<'static>>, CodecError> {
        let Some(bytes) = reader.read(crate::store::ByteRange::FromStart {
            offset: 0,
            length: None,
        })?
        else {
            return Ok(None);
        };
        let data = self.decode(Cow::Owned(bytes.into()), repr)?;
        data.validate(repr)?;
        let whole = crate::grid::Region::whole(repr.shape());
        assemble(region, repr, &[(&whole, &data)]).map(Some)
    }

    /// Decodes the chunk as pieces, giving each to `sink` as it is decoded (possibly on
    /// several threads at once): boxes (chunk coordinates) with their elements (C order),
    /// together covering the chunk without overlap. `Ok(false)` (the default, `sink` never
    /// called) where the codec decodes only whole. Lets the array layer copy each piece
    /// straight into a larger region while it is fresh in the cache, instead of assembling the
    /// chunk first (`sharding_indexed`: one piece per inner chunk).
    fn decode_pieces(
        &self,
        _input: &[u8],
        _repr: &ChunkRepresentation,
        _sink: &PieceSink<'_>,
    ) -> Result<bool, CodecError> {
        Ok(false)
    }
}

/// Receives the decoded pieces of a chunk (see [`ArrayToBytesCodec::decode_pieces`]): a box
/// (chunk coordinates) and its elements in C order, possibly borrowed from the encoded chunk.
pub type PieceSink<'s> =
    dyn Fn(&crate::grid::Region, &ArrayBytes<'_>) -> Result<(), CodecError> + Sync + 's;

/// A codec that transforms bytes (compressors, checksums).
pub trait BytesToBytesCodec: CodecTraits {
    /// Encodes bytes.
    fn encode<'a>(&self, input: Cow<'a, [u8]>) -> Result<Cow<'a, [u8]>, CodecError>;

    /// Decodes bytes. When `expected` is `Some(n)`, the decoded output must be exactly `n`
    /// bytes, and a frame that declares another size is refused before allocating.
    fn decode<'a>(
        &self,
        input: Cow<'a, [u8]>,
        expected: Option<usize>,
    ) -> Result<Cow<'a, [u8]>, CodecError>;

    /// The exact encoded size of `decoded_size` input bytes, if known without the data
    /// (`Some(n + 4)` for a checksum, `None` for a compressor).
    fn encoded_size(&self, decoded_size: usize) -> Option<usize>;
}

/// A codec of any kind.
#[derive(Debug, Clone)]
pub enum Codec {
    /// An array→array codec.
    ArrayToArray(Arc<dyn ArrayToArrayCodec>),
    /// An array→bytes codec.
    ArrayToBytes(Arc<dyn ArrayToBytesCodec>),
    /// A bytes→bytes codec.
    BytesToBytes(Arc<dyn BytesToBytesCodec>),
}

impl Codec {
    /// The codec's name.
    pub fn name(&self) -> &str {
        match self {
            Codec::ArrayToArray(c) => c.name(),
            Codec::ArrayToBytes(c) => c.name(),
            Codec::BytesToBytes(c) => c.name(),
        }
    }

    /// The codec's `zarr.json` entry.
    pub fn metadata(&self) -> ExtensionMetadata {
        match self {
            Codec::ArrayToArray(c) => c.metadata(),
            Codec::ArrayToBytes(c) => c.metadata(),
            Codec::BytesToBytes(c) => c.metadata(),
        }
    }

    /// The kind of the codec.
    pub fn kind(&self) -> CodecKind {
        match self {
            Codec::ArrayToArray(_) => CodecKind::ArrayToArray,
            Codec::ArrayToBytes(_) => CodecKind::ArrayToBytes,
            Codec::BytesToBytes(_) => CodecKind::BytesToBytes,
        }
    }
}

/// The three kinds of codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecKind {
    /// Array→array.
    ArrayToArray,
    /// Array→bytes.
    ArrayToBytes,
    /// Bytes→bytes.
    BytesToBytes,
}

/// Parses the configuration of a codec entry into its serde configuration type (which should
/// use `#[serde(deny_unknown_fields)]`); a missing configuration parses as `{}`. Errors name
/// the codec.
pub fn parse_configuration<C: serde::de::DeserializeOwned>(
    metadata: &ExtensionMetadata,
) -> Result<C, CodecError> {
    serde_json::from_value(serde_json::Value::Object(metadata.configuration_or_empty()))
        .map_err(|e| CodecError::config(&metadata.name, e.to_string()))
}

/// The configuration object of a codec entry from its serde configuration type: the inverse
/// of [`parse_configuration`], for [`CodecTraits::configuration`]. `None` if `config` does not
/// serialise to a JSON object.
///
/// ```
/// #[derive(serde::Serialize)]
/// struct LevelConfig { level: u32 }
/// let m = zv_core::codec::configuration_object(&LevelConfig { level: 3 });
/// assert_eq!(m.and_then(|m| m.get("level").cloned()), Some(serde_json::json!(3)));
/// ```
pub fn configuration_object<C: serde::Serialize>(config: &C) -> Option<JsonObject> {
    match serde_json::to_value(config) {
        Ok(serde_json::Value::Object(m)) => Some(m),
        _ => None,
    }
}
