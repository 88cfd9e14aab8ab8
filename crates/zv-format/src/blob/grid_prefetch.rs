//! Reading ahead the few cells of a sharded ZV 0.9 grid array that a query needs.
//!
//! A whole-level read wants every cell of a shard, and one read of the whole shard is best
//! ([`ShardCache`](super::grid_cache)). A box query wants a few cells of each shard it
//! touches; reading whole shards would move far more bytes than the box holds. For each shard
//! the wanted cells fall in, [`GridArray::prefetch`] reads the box of cells spanning them
//! through the `sharding_indexed` codec's partial decoding (the shard index, then the inner
//! chunks, by byte ranges) when that box is under half the shard, else the whole shard; the
//! shards are read in parallel. The cells are then served from the cache by
//! [`GridArray::cell`].
//!
//! An unsharded array's cells are each a stored chunk, a request of its own. On a store that
//! wants many requests in flight (an object store), they are read ahead too, every wanted cell
//! at once: a box query then reads the cells of all its arrays (vertices, attributes, fragment
//! index) together, in one round trip, where the chunks' readers would read each chunk's
//! vertices and then its attributes, two round trips one after the other. On other stores the
//! cells are read where they are used, as before (no copy through the cache).

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;
use zv_core::grid::Region;
use zv_core::store::ByteRange;

use super::grid::GridArray;
use super::zarr_error;
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

/// A box of cells: the grid index of its first cell and its extent.
type CellBox = (Vec<u64>, Vec<u64>);

impl GridArray {
    /// Reads ahead the cells of chunks `keys` (keys outside the grid are ignored): by byte
    /// ranges for shards of which they span under half, else whole shards. An unsharded
    /// array's cells are read ahead, all at once, only on a store that wants more than one
    /// request in flight (module doc).
    pub fn prefetch(&self, keys: &[ChunkKey]) -> Result<()> {
        if !self.shared {
            if self.array.store().concurrency() > 1 {
                self.prefetch_unsharded(keys)?;
            }
            return Ok(());
        }
        let shape = self.array.shape().to_vec();
        self.shard_reads(keys)
            .into_par_iter()
            .try_for_each(|(chunk, part)| {
                if self.decoded.has_chunk(&chunk) {
                    return Ok(());
                }
                let Some((lo, extent)) = part else {
                    return self.decoded_chunk(&chunk).map(drop);
                };
                let cells = self.read_box(&lo, &extent, &shape)?;
                if !self.decoded.keep_cells(cells) {
                    // past the bound: the cells are read through their shard when asked
                    self.decoded_chunk(&chunk)?;
                }
                Ok(())
            })
    }

    /// How [`GridArray::prefetch`] reads the stored chunks (shards) that chunks `keys` fall
    /// in: each shard's grid coordinates with, when it is read by byte ranges, the box of
    /// cells spanning the wanted ones (grid index of its first cell, extent); `None` when
    /// it is read whole (the box is half the shard or more).
    fn shard_reads(&self, keys: &[ChunkKey]) -> Vec<(Vec<u64>, Option<CellBox>)> {
        let inner = self.array.grid().chunk_shape().to_vec();
        // per stored chunk, the box (grid indices, inclusive) spanning the wanted cells
        let mut spans: BTreeMap<Vec<u64>, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
        for key in keys {
            let Some(index) = self.index_of(key) else {
                continue;
            };
            let chunk: Vec<u64> = index
                .iter()
                .zip(&inner)
                .map(|(i, n)| i / n.max(&1))
                .collect();
            let span = spans
                .entry(chunk)
                .or_insert_with(|| (index.clone(), index.clone()));
            for (d, &i) in index.iter().enumerate() {
                span.0[d] = span.0[d].min(i);
                span.1[d] = span.1[d].max(i);
            }
        }
        let cells_per: u64 = inner.iter().product();
        spans
            .into_iter()
            .map(|(chunk, (lo, hi))| {
                let extent: Vec<u64> = lo.iter().zip(&hi).map(|(a, b)| b - a + 1).collect();
                let volume: u64 = extent.iter().product();
                let part = (volume.saturating_mul(2) < cells_per).then_some((lo, extent));
                (chunk, part)
            })
            .collect()
    }

    /// The first read [`GridArray::prefetch`] of chunks `keys` makes of each stored chunk,
    /// as the chunk's key below this array's path (`c/1/2/3`) and the range (`None`: the
    /// whole value): of a shard read by byte ranges, its index (the codec chain's
    /// [`first_partial_read`](zv_core::codec::CodecChain::first_partial_read)); of an
    /// unsharded array on a store that wants many requests in flight, each wanted cell,
    /// whole. Nothing for shards read whole, a chain whose first read depends on the region,
    /// or an unsharded array on other stores. An array laid out alike makes the same reads
    /// of the same keys below its own path (module `primed`).
    pub fn first_reads(&self, keys: &[ChunkKey]) -> Vec<(String, Option<ByteRange>)> {
        let encoding = &self.array.metadata().chunk_key_encoding;
        if !self.shared {
            if self.array.store().concurrency() <= 1 {
                return Vec::new();
            }
            let mut chunks: Vec<Vec<u64>> = keys
                .iter()
                .filter_map(|k| self.locate(k).map(|(chunk, _)| chunk))
                .collect();
            chunks.sort_unstable();
            chunks.dedup();
            return chunks
                .into_iter()
                .map(|c| (encoding.encode(&c), None))
                .collect();
        }
        let Some(range) = self.array.codec_chain().first_partial_read() else {
            return Vec::new();
        };
        self.shard_reads(keys)
            .into_iter()
            .filter(|(_, part)| part.is_some())
            .map(|(chunk, _)| (encoding.encode(&chunk), Some(range)))
            .collect()
    }

    /// Reads the cells of chunks `keys` of an unsharded array at once and keeps them (while
    /// they fit the cache's bound; past it, the rest are read when asked). An absent cell is
    /// kept empty, as [`GridArray::cell`] reads it; a stored chunk without the cell asked is
    /// left to [`GridArray::cell`] to report.
    fn prefetch_unsharded(&self, keys: &[ChunkKey]) -> Result<()> {
        let wanted: Vec<(Vec<u64>, Vec<u64>, usize)> = keys
            .iter()
            .filter_map(|key| {
                let index = self.index_of(key)?;
                let (chunk, element) = self.locate(key)?;
                self.decoded
                    .cell(&index)
                    .is_none()
                    .then_some((index, chunk, element))
            })
            .collect();
        let cells = wanted
            .into_par_iter()
            .map(|(index, chunk, element)| {
                Ok(match self.fetch_chunk(&chunk)? {
                    None => Some((index, Vec::new())),
                    Some(elements) => elements.get(element).map(|b| (index, b.clone())),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.decoded
            .keep_cells(cells.into_iter().flatten().collect());
        Ok(())
    }

    /// The cells of the box at grid index `lo` with `extent`, by grid index.
    fn read_box(
        &self,
        lo: &[u64],
        extent: &[u64],
        shape: &[u64],
    ) -> Result<Vec<(Vec<u64>, Vec<u8>)>> {
        let meta_key = self.array.path().metadata_key();
        let region = Region::new(lo.to_vec(), extent.to_vec())
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        region
            .check_within(shape)
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        let bytes = self
            .array
            .retrieve_region(&region)
            .map_err(|e| zarr_error(e, &meta_key))?;
        // the cells come in C order over the box
        let mut out = Vec::new();
        let mut index = lo.to_vec();
        let cells = self.elements(bytes)?;
        // the decoding is this call's alone: its cells are moved, not copied
        let cells = Arc::try_unwrap(cells).unwrap_or_else(|shared| (*shared).clone());
        for cell in cells {
            out.push((index.clone(), cell));
            for d in (0..index.len()).rev() {
                index[d] += 1;
                if index[d] < lo[d] + extent[d] {
                    break;
                }
                index[d] = lo[d];
            }
        }
        Ok(out)
    }
}
