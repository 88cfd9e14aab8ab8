//! The sharding codec bound to a shard representation: whole-shard encode and decode.

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;
use zv_core::codec::{
    assemble, ArrayBytes, ChunkRepresentation, CodecChain, CodecError, PieceSink,
};
use zv_core::data_type::{DataType, FillValue};
use zv_core::grid::{Region, RegularGrid};

use super::index::{IndexLimits, ShardIndex};
use super::{IndexLocation, ShardingConfig, NAME};

/// `sharding_indexed` bound to a shard representation (see the [module docs](super)).
#[derive(Debug, Clone)]
pub struct ShardingCodec {
    config: ShardingConfig,
    /// The inner chunk grid over one shard.
    grid: RegularGrid,
    /// Inner chunks per dimension.
    grid_shape: Vec<u64>,
    /// The number of inner chunks.
    count: usize,
    pub(super) inner: Arc<CodecChain>,
    index: CodecChain,
    index_size: usize,
}

impl ShardingCodec {
    /// Binds `config` to shards of `repr`: the inner chunk shape must divide the shard shape
    /// and the index codecs must give the index a fixed size.
    pub fn new(config: ShardingConfig, repr: &ChunkRepresentation) -> Result<Self, CodecError> {
        let shard = repr.shape();
        let inner_shape = &config.chunk_shape;
        if inner_shape.len() != shard.len() {
            return Err(CodecError::config(
                NAME,
                format!(
                    "chunk_shape {inner_shape:?} has {} dimensions, the shard {shard:?} has {}",
                    inner_shape.len(),
                    shard.len()
                ),
            ));
        }
        if inner_shape.contains(&0) || shard.iter().zip(inner_shape).any(|(s, i)| s % i != 0) {
            return Err(CodecError::config(
                NAME,
                format!("chunk_shape {inner_shape:?} does not divide the shard shape {shard:?}"),
            ));
        }
        let grid_shape: Vec<u64> = shard.iter().zip(inner_shape).map(|(s, i)| s / i).collect();
        let inner_repr = repr.with_shape(inner_shape.clone())?;
        let inner = CodecChain::from_metadata(&config.codecs, &inner_repr)?;
        let mut index_shape = grid_shape.clone();
        index_shape.push(2);
        let index_repr = ChunkRepresentation::new(
            index_shape,
            DataType::UInt64,
            FillValue::zero(DataType::UInt64),
        )?;
        let count = usize::try_from(index_repr.num_elements() / 2)
            .map_err(|_| CodecError::Overflow(format!("shard shape {shard:?}")))?;
        let index = CodecChain::from_metadata(&config.index_codecs, &index_repr)?;
        let index_size = index.encoded_size().ok_or_else(|| {
            CodecError::config(
                NAME,
                "index_codecs must give the index a fixed size (`bytes`, optionally `crc32c`)",
            )
        })?;
        Ok(Self {
            grid: RegularGrid::new(shard.to_vec(), inner_shape.clone()),
            grid_shape,
            count,
            config,
            inner: Arc::new(inner),
            index,
            index_size,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ShardingConfig {
        &self.config
    }

    /// The inner chunk shape.
    pub fn inner_chunk_shape(&self) -> &[u64] {
        &self.config.chunk_shape
    }

    /// The encoded size of the index in bytes.
    pub fn index_size(&self) -> usize {
        self.index_size
    }

    /// Where the index lies in a shard of `shard_len` bytes.
    pub(super) fn index_range(&self, shard_len: u64) -> Option<std::ops::Range<u64>> {
        let size = self.index_size as u64;
        match self.config.index_location {
            IndexLocation::Start => (size <= shard_len).then_some(0..size),
            IndexLocation::End => shard_len.checked_sub(size).map(|s| s..shard_len),
        }
    }

    /// Decodes and checks an encoded index.
    pub(super) fn decode_index(
        &self,
        encoded: &[u8],
        limits: &IndexLimits,
    ) -> Result<ShardIndex, CodecError> {
        let decoded = self.index.decode(Cow::Borrowed(encoded))?;
        let ArrayBytes::Fixed(raw) = decoded else {
            return Err(CodecError::corrupt(
                NAME,
                "the index is not fixed-size data",
            ));
        };
        ShardIndex::from_decoded(&raw, self.count, &limits_with_inner(limits, &self.inner))
    }

    /// The position of inner chunk `coords` in the index (C order).
    pub(super) fn linear(&self, coords: &[u64]) -> usize {
        let mut i = 0u64;
        for (c, n) in coords.iter().zip(&self.grid_shape) {
            i = i * n + c;
        }
        i as usize
    }

    /// The inner chunk grid over one shard.
    pub(super) fn grid(&self) -> &RegularGrid {
        &self.grid
    }

    /// Encodes a whole shard: inner chunks in parallel, those holding only the fill value
    /// left out.
    pub(super) fn encode_shard(
        &self,
        input: &ArrayBytes<'_>,
        repr: &ChunkRepresentation,
    ) -> Result<Vec<u8>, CodecError> {
        input.validate(repr)?;
        let shard = Region::whole(repr.shape());
        let inner_repr = self.inner.decoded_representation();
        let coords: Vec<Vec<u64>> = self.grid.chunks_in(&shard).collect();
        let encoded: Vec<Option<Vec<u8>>> = coords
            .par_iter()
            .map(|c| {
                let Some(b) = self.grid.chunk_box(c) else {
                    return Err(CodecError::Overflow(format!("inner chunk {c:?}")));
                };
                let part = assemble(&b, repr, &[(&shard, input)])?;
                if part.is_fill(inner_repr) {
                    return Ok(None);
                }
                self.inner.encode(part).map(|e| Some(e.into_owned()))
            })
            .collect::<Result<_, _>>()?;
        let payload: usize = encoded.iter().flatten().map(Vec::len).sum();
        let mut out = zv_core::codec::try_vec(payload.saturating_add(self.index_size))?;
        let start = self.config.index_location == IndexLocation::Start;
        if start {
            out.resize(self.index_size, 0);
        }
        let mut entries = vec![None; self.count];
        for (c, e) in coords.iter().zip(&encoded) {
            if let Some(bytes) = e {
                entries[self.linear(c)] = Some((out.len() as u64, bytes.len() as u64));
                out.extend_from_slice(bytes);
            }
        }
        let raw = ShardIndex::new(entries).to_decoded();
        let index = self.index.encode(ArrayBytes::Fixed(Cow::Owned(raw)))?;
        if index.len() != self.index_size {
            return Err(CodecError::SizeMismatch {
                codec: NAME.into(),
                expected: self.index_size as u64,
                actual: index.len() as u64,
            });
        }
        if start {
            out[..self.index_size].copy_from_slice(&index);
        } else {
            out.extend_from_slice(&index);
        }
        Ok(out)
    }

    /// Decodes a whole shard: the index is checked against the shard's size first, then the
    /// inner chunks are decoded in parallel.
    pub(super) fn decode_shard<'a>(
        &self,
        input: &[u8],
        repr: &ChunkRepresentation,
    ) -> Result<ArrayBytes<'a>, CodecError> {
        let pieces = self.shard_pieces(input)?;
        let refs: Vec<(&Region, &ArrayBytes<'_>)> = pieces.iter().map(|(b, d)| (b, d)).collect();
        assemble(&Region::whole(repr.shape()), repr, &refs)
    }

    /// Decodes a whole shard, giving `sink` one piece per inner chunk as it is decoded
    /// (inner chunks in parallel; borrowed from `input` where the inner codecs leave the bytes
    /// as stored), missing inner chunks as the fill value.
    pub(super) fn visit_pieces(
        &self,
        input: &[u8],
        sink: &PieceSink<'_>,
    ) -> Result<(), CodecError> {
        let index = self.shard_index(input)?;
        let fill = if (0..self.count).any(|i| index.entry(i).is_none()) {
            Some(ArrayBytes::fill(self.inner.decoded_representation())?)
        } else {
            None
        };
        let shard = Region::whole(self.grid.array_shape());
        let coords: Vec<Vec<u64>> = self.grid.chunks_in(&shard).collect();
        coords
            .par_iter()
            .try_for_each(|c| match (index.entry(self.linear(c)), &fill) {
                (Some((offset, nbytes)), _) => {
                    let (b, data) = self.decode_inner(input, c, offset, nbytes)?;
                    sink(&b, &data)
                }
                (None, Some(fill)) => {
                    let b = self
                        .grid
                        .chunk_box(c)
                        .ok_or_else(|| CodecError::Overflow(format!("inner chunk {c:?}")))?;
                    sink(&b, fill)
                }
                (None, None) => Err(CodecError::corrupt(NAME, "the index changed")),
            })
    }

    /// The index of a whole shard, checked against the shard's size.
    fn shard_index(&self, input: &[u8]) -> Result<ShardIndex, CodecError> {
        let len = input.len() as u64;
        let range = self.index_range(len).ok_or_else(|| {
            CodecError::corrupt(
                NAME,
                format!(
                    "a shard of {len} bytes is shorter than its {}-byte index (truncated)",
                    self.index_size
                ),
            )
        })?;
        let encoded_index = &input[range.start as usize..range.end as usize];
        let limits = IndexLimits {
            shard_len: Some(len),
            index_range: Some(range),
            inner_size: None,
        };
        self.decode_index(encoded_index, &limits)
    }

    /// The stored inner chunks of a whole shard, decoded in parallel (borrowed from the shard
    /// where the inner codecs leave the bytes as stored), each with its box; the index is
    /// checked against the shard's size first.
    fn shard_pieces<'s>(
        &self,
        input: &'s [u8],
    ) -> Result<Vec<(Region, ArrayBytes<'s>)>, CodecError> {
        let index = self.shard_index(input)?;
        let shard = Region::whole(self.grid.array_shape());
        let coords: Vec<Vec<u64>> = self.grid.chunks_in(&shard).collect();
        coords
            .par_iter()
            .filter_map(|c| {
                let (offset, nbytes) = index.entry(self.linear(c))?;
                Some(self.decode_inner(input, c, offset, nbytes))
            })
            .collect()
    }
}

impl ShardingCodec {
    /// Decodes inner chunk `coords`, stored at `offset` (`nbytes` bytes) of `shard` (borrowed
    /// from it where the inner codecs leave the bytes as stored).
    fn decode_inner<'s>(
        &self,
        shard: &'s [u8],
        coords: &[u64],
        offset: u64,
        nbytes: u64,
    ) -> Result<(Region, ArrayBytes<'s>), CodecError> {
        let b = self
            .grid
            .chunk_box(coords)
            .ok_or_else(|| CodecError::Overflow(format!("inner chunk {coords:?}")))?;
        let bytes = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(offset.saturating_add(nbytes)).ok())
            .and_then(|(s, e)| shard.get(s..e))
            .ok_or_else(|| {
                CodecError::corrupt(NAME, format!("inner chunk {coords:?} lies past the shard"))
            })?;
        let data = self.inner.decode(Cow::Borrowed(bytes))?;
        Ok((b, data))
    }
}

/// `limits` with the inner chunks' fixed encoded size, if the inner codecs fix it.
fn limits_with_inner(limits: &IndexLimits, inner: &CodecChain) -> IndexLimits {
    IndexLimits {
        inner_size: inner.encoded_size().map(|s| s as u64),
        ..limits.clone()
    }
}
