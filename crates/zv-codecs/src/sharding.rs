//! The `sharding_indexed` codec (array→bytes): many inner chunks in one stored value, with an
//! index.
//!
//! Zarr v3 sharding codec (zarr-specs `codecs/sharding-indexed/v1.0`). Registered name:
//! `sharding_indexed`. A shard (the array's chunk) is split into inner chunks of
//! `chunk_shape`, which must divide the shard shape; each inner chunk is encoded with `codecs`,
//! and the encoded inner chunks are concatenated (C order here; readers take any order) with
//! an index of `(offset, nbytes)` pairs, encoded with `index_codecs` (`bytes`, optionally
//! followed by `crc32c`: the index must have a fixed size), at the `start` or the `end`
//! (default) of the shard. An inner chunk that holds only the fill value is not written; its
//! index entry is 2^64 − 1 twice. Inner `codecs` may themselves shard (nested sharding).
//!
//! Encoding and decoding handle the inner chunks in parallel (rayon). Regions that cover part
//! of a shard are read through [`zv_core::codec::ChunkReader`]: the index with one ranged read
//! (a suffix range when it is at the end), then each inner chunk the region needs with one
//! ranged read. Every index is checked before anything is read or allocated for the inner
//! chunks it names ([`index`]).
//!
//! ```
//! let config = serde_json::json!({"name": "sharding_indexed", "configuration": {
//!     "chunk_shape": [32, 32],
//!     "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
//!     "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
//!     "index_location": "end"}});
//! let meta: zv_core::metadata::ExtensionMetadata = serde_json::from_value(config).unwrap();
//! let parsed: zv_codecs::sharding::ShardingConfig = zv_core::codec::parse_configuration(&meta)?;
//! assert_eq!(parsed.chunk_shape, vec![32, 32]);
//! assert_eq!(parsed.index_location, zv_codecs::sharding::IndexLocation::End);
//! # Ok::<(), zv_core::codec::CodecError>(())
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zv_core::codec::{
    configuration_object, parse_configuration, ArrayBytes, ArrayToBytesCodec, ChunkReader,
    ChunkRepresentation, Codec, CodecError, CodecKind, CodecTraits, PieceSink,
};
use zv_core::grid::Region;
use zv_core::metadata::{ExtensionMetadata, JsonObject};
use zv_core::plugin::CodecPlugin;

mod codec;
pub mod index;
mod partial;

pub use codec::ShardingCodec;

/// The registered name.
pub const NAME: &str = "sharding_indexed";

/// Where the index is stored in a shard.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexLocation {
    /// The first bytes of the shard.
    Start,
    /// The last bytes of the shard (the default).
    #[default]
    End,
}

/// The JSON configuration of `sharding_indexed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardingConfig {
    /// The shape of the inner chunks; divides the shard (chunk) shape.
    pub chunk_shape: Vec<u64>,
    /// The codecs of the inner chunks.
    pub codecs: Vec<ExtensionMetadata>,
    /// The codecs of the index (`bytes`, optionally followed by `crc32c`).
    pub index_codecs: Vec<ExtensionMetadata>,
    /// Where the index is stored.
    #[serde(default)]
    pub index_location: IndexLocation,
}

impl CodecTraits for ShardingCodec {
    fn name(&self) -> &str {
        NAME
    }

    fn configuration(&self) -> Option<JsonObject> {
        configuration_object(self.config())
    }
}

impl ArrayToBytesCodec for ShardingCodec {
    fn encode<'a>(
        &self,
        input: ArrayBytes<'a>,
        repr: &ChunkRepresentation,
    ) -> Result<Cow<'a, [u8]>, CodecError> {
        self.encode_shard(&input, repr).map(Cow::Owned)
    }

    fn decode<'a>(
        &self,
        input: Cow<'a, [u8]>,
        repr: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        self.decode_shard(&input, repr)
    }

    fn encoded_size(&self, _repr: &ChunkRepresentation) -> Option<usize> {
        None
    }

    fn supports_partial_decode(&self) -> bool {
        true
    }

    fn first_partial_read(&self) -> Option<zv_core::store::ByteRange> {
        Some(self.index_read().0)
    }

    fn partial_decode(
        &self,
        reader: &dyn ChunkReader,
        region: &Region,
        repr: &ChunkRepresentation,
    ) -> Result<Option<ArrayBytes<'static>>, CodecError> {
        self.decode_region(reader, region, repr)
    }

    fn decode_pieces(
        &self,
        input: &[u8],
        _repr: &ChunkRepresentation,
        sink: &PieceSink<'_>,
    ) -> Result<bool, CodecError> {
        self.visit_pieces(input, sink).map(|()| true)
    }
}

fn create(meta: &ExtensionMetadata, repr: &ChunkRepresentation) -> Result<Codec, CodecError> {
    let config: ShardingConfig = parse_configuration(meta)?;
    Ok(Codec::ArrayToBytes(Arc::new(ShardingCodec::new(
        config, repr,
    )?)))
}

inventory::submit! {
    CodecPlugin::new(NAME, CodecKind::ArrayToBytes, create)
}
