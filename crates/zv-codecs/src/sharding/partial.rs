//! Partial reads of a shard: the index with one ranged read, then only the inner chunks a
//! region needs, one ranged read each, decoded in parallel (an inner chunk that is itself a
//! shard is read partially in turn).

use std::borrow::Cow;

use rayon::prelude::*;
use zv_core::codec::{
    assemble, ArrayBytes, ChunkReader, ChunkRepresentation, CodecError, SubReader,
};
use zv_core::grid::Region;
use zv_core::store::ByteRange;

use super::index::IndexLimits;
use super::{IndexLocation, ShardingCodec, NAME};

impl ShardingCodec {
    /// The elements of `region` (shard coordinates) of the shard `reader` reads, or `None` if
    /// the shard is not stored.
    pub(super) fn decode_region(
        &self,
        reader: &dyn ChunkReader,
        region: &Region,
        repr: &ChunkRepresentation,
    ) -> Result<Option<ArrayBytes<'static>>, CodecError> {
        let size = self.index_size() as u64;
        let (range, index_range) = match self.config().index_location {
            IndexLocation::Start => (
                ByteRange::FromStart {
                    offset: 0,
                    length: Some(size),
                },
                Some(0..size),
            ),
            IndexLocation::End => (ByteRange::Suffix(size), None),
        };
        let Some(encoded_index) = reader.read(range)? else {
            return Ok(None);
        };
        if encoded_index.len() as u64 != size {
            return Err(CodecError::corrupt(
                NAME,
                format!(
                    "read {} bytes of the {size}-byte index (truncated shard)",
                    encoded_index.len()
                ),
            ));
        }
        let limits = IndexLimits {
            shard_len: None,
            index_range,
            inner_size: None,
        };
        let index = self.decode_index(&encoded_index, &limits)?;
        let coords: Vec<Vec<u64>> = self.grid().chunks_in(region).collect();
        let mut pieces: Vec<(Region, ArrayBytes<'static>)> = coords
            .par_iter()
            .filter_map(|c| {
                let (offset, nbytes) = index.entry(self.linear(c))?;
                Some(self.read_inner(reader, c, offset, nbytes, region))
            })
            .collect::<Result<_, _>>()?;
        if let [(b, _)] = pieces.as_slice() {
            if b == region {
                // One inner chunk (or part of one) is exactly the region: no assembly.
                return Ok(pieces.pop().map(|(_, d)| d));
            }
        }
        let refs: Vec<(&Region, &ArrayBytes<'_>)> = pieces.iter().map(|(b, d)| (b, d)).collect();
        assemble(region, repr, &refs).map(Some)
    }

    /// The part of inner chunk `coords` (stored at `offset`, `nbytes` bytes) that `region`
    /// needs, with the box (shard coordinates) it covers.
    fn read_inner(
        &self,
        reader: &dyn ChunkReader,
        coords: &[u64],
        offset: u64,
        nbytes: u64,
        region: &Region,
    ) -> Result<(Region, ArrayBytes<'static>), CodecError> {
        let vanished = || CodecError::corrupt(NAME, "the shard vanished while it was read");
        let chunk_box = self
            .grid()
            .chunk_box(coords)
            .ok_or_else(|| CodecError::Overflow(format!("inner chunk {coords:?}")))?;
        let sub = SubReader::new(reader, offset, nbytes);
        let part = chunk_box
            .intersect(region)
            .unwrap_or_else(|| chunk_box.clone());
        if self.inner.supports_partial_decode() && part != chunk_box {
            let local: Vec<u64> = part
                .start()
                .iter()
                .zip(chunk_box.start())
                .map(|(p, c)| p - c)
                .collect();
            let local = Region::new(local, part.shape().to_vec())
                .map_err(|e| CodecError::corrupt(NAME, e.to_string()))?;
            let data = self
                .inner
                .partial_decode(&sub, &local)?
                .ok_or_else(vanished)?;
            return Ok((part, data));
        }
        let whole = ByteRange::FromStart {
            offset: 0,
            length: None,
        };
        let bytes = sub.read(whole)?.ok_or_else(vanished)?;
        let data = self.inner.decode(Cow::Owned(bytes.into()))?;
        Ok((chunk_box, data.into_owned()))
    }
}
