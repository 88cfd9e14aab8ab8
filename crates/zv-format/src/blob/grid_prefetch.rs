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

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;
use zv_core::grid::Region;

use super::grid::GridArray;
use super::zarr_error;
use crate::error::{Error, Result};
use crate::metadata::ChunkKey;

impl GridArray {
    /// Reads ahead the cells of chunks `keys` (keys outside the grid are ignored): by byte
    /// ranges for shards of which they span under half, else whole shards. Does nothing for
    /// an unsharded array, where every cell is a read of its own anyway.
    pub fn prefetch(&self, keys: &[ChunkKey]) -> Result<()> {
        if !self.shared {
            return Ok(());
        }
        let inner = self.array.grid().chunk_shape().to_vec();
        let shape = self.array.shape().to_vec();
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
        spans.into_par_iter().try_for_each(|(chunk, (lo, hi))| {
            if self.decoded.has_chunk(&chunk) {
                return Ok(());
            }
            let extent: Vec<u64> = lo.iter().zip(&hi).map(|(a, b)| b - a + 1).collect();
            let volume: u64 = extent.iter().product();
            if volume.saturating_mul(2) >= cells_per {
                return self.decoded_chunk(&chunk).map(drop);
            }
            let cells = self.read_box(&lo, &extent, &shape)?;
            if !self.decoded.keep_cells(cells) {
                // past the bound: the cells are read through their shard when asked
                self.decoded_chunk(&chunk)?;
            }
            Ok(())
        })
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
