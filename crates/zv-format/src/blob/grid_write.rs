//! Writing ZV 0.9 chunk-grid arrays (`docs/format-decisions.md`, "Writing ZV 0.9"): the
//! writer's per-chunk blobs (`<array>/<chunk key>`) become the cells of one rank-D
//! `variable_length_bytes` array per logical array, over the occupied chunks' bounding grid
//! (`chunk_grid_origin` its lowest corner). Unsharded, each cell is its own stored chunk
//! (inner chunk shape `[1, …, 1]`), so a cell is written atomically like a 0.7 blob; sharded
//! ([`super::grid_shards`]), a shard of cells is one stored object written once, whole. The
//! array's `zarr.json` (with `nonempty_chunks`) comes after all its cells, when the writer
//! writes the array's document.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::{DataType, FillValue};
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};
use zv_core::node::NodePath;
use zv_core::store::Store;

use super::grid::{CHUNK_GRID_ORIGIN, NONEMPTY_CHUNKS};
use super::grid_shards::{FullShard, ShardBuffer, ShardPlan};
use super::zarr_error;
use crate::error::{Error, Result};
use crate::metadata::{ChunkKey, JsonObject};

/// The codec chain of a `variable_length_bytes` array from a blob chain of `uint8` arrays:
/// `vlen-bytes` in place of the array-to-bytes codec, the bytes-to-bytes codecs kept.
pub fn vlen_codecs(blob_codecs: &[ExtensionMetadata]) -> Vec<ExtensionMetadata> {
    let mut out = vec![ExtensionMetadata::new("vlen-bytes")];
    out.extend(
        blob_codecs
            .iter()
            .filter(|c| c.name != "bytes" && c.name != "transpose")
            .cloned(),
    );
    out
}

/// Spare capacity that lets a buffer given to [`Blobs::write_vec`](super::Blobs::write_vec)
/// be framed in place as a grid cell (the `vlen-bytes` framing of one element: its count and
/// its length, 4 bytes each).
pub const CELL_HEADROOM: usize = 8;

/// A cell's bytes as its one variable-length element.
fn one_cell(bytes: Cow<'_, [u8]>) -> ArrayBytes<'_> {
    let n = bytes.len();
    ArrayBytes::Variable {
        data: bytes,
        offsets: Cow::Owned(vec![0, n]),
    }
}

/// `cell` framed in place as the one element of a `vlen-bytes` chunk (the count 1, the
/// length, the bytes: what the codec makes of it), in its own allocation (grown if it lacks
/// [`CELL_HEADROOM`]); `Err(cell)` if it is too long for the framing, to be refused by the
/// codec with its own error.
fn frame_cell(mut cell: Vec<u8>) -> std::result::Result<Vec<u8>, Vec<u8>> {
    let Ok(len) = u32::try_from(cell.len()) else {
        return Err(cell);
    };
    let n = cell.len();
    cell.resize(n + CELL_HEADROOM, 0);
    cell.copy_within(0..n, CELL_HEADROOM);
    cell[..4].copy_from_slice(&1u32.to_le_bytes());
    cell[4..8].copy_from_slice(&len.to_le_bytes());
    Ok(cell)
}

/// The bounding grid of chunk `keys` (their first `ndim` coordinates): the lowest chunk and
/// the extent per dimension (all zero-origin and one chunk wide without keys).
pub fn bounding_grid(keys: &[ChunkKey], ndim: usize) -> (Vec<i64>, Vec<u64>) {
    let mut lo = vec![0i64; ndim];
    let mut hi = vec![0i64; ndim];
    for (i, k) in keys.iter().enumerate() {
        for (d, &c) in k.coords().iter().enumerate().take(ndim) {
            if i == 0 || c < lo[d] {
                lo[d] = c;
            }
            if i == 0 || c > hi[d] {
                hi[d] = c;
            }
        }
    }
    let shape = lo
        .iter()
        .zip(&hi)
        .map(|(&a, &b)| (i128::from(b) - i128::from(a) + 1) as u64)
        .collect();
    (lo, shape)
}

/// One grid array being written: its handle, the cells written so far and, sharded, the
/// shards not stored yet.
#[derive(Debug)]
struct Pending {
    array: Array,
    keys: Vec<ChunkKey>,
    shards: ShardBuffer,
}

/// The chunk grid of the level being written and the grid arrays written into it.
#[derive(Debug)]
pub(super) struct GridSink {
    store: Arc<dyn Store>,
    origin: Vec<i64>,
    shape: Vec<u64>,
    shards: Option<ShardPlan>,
    arrays: Mutex<HashMap<NodePath, Pending>>,
}

impl GridSink {
    /// The grid with lowest chunk `origin` and `shape` chunks per dimension, its cells packed
    /// in shards of `shard` cells when given (`occupied`: the level's chunks).
    pub(super) fn new(
        store: Arc<dyn Store>,
        origin: Vec<i64>,
        shape: Vec<u64>,
        shard: Option<Vec<u64>>,
        occupied: &[ChunkKey],
    ) -> Result<Self> {
        let mut sink = Self {
            store,
            origin,
            shape,
            shards: None,
            arrays: Mutex::new(HashMap::new()),
        };
        if let Some(shard) = shard {
            if shard.len() != sink.shape.len() {
                return Err(Error::InvalidInput(format!(
                    "shard shape {shard:?} has {} values, the chunk grid {} dimensions",
                    shard.len(),
                    sink.shape.len()
                )));
            }
            let root = NodePath::root();
            let cells = occupied
                .iter()
                .map(|k| sink.index(&root, k))
                .collect::<Result<Vec<_>>>()?;
            sink.shards = Some(ShardPlan::new(shard, cells.into_iter())?);
        }
        Ok(sink)
    }

    /// The metadata of the grid array at `path` with the blob codecs `codecs`.
    fn metadata(&self, path: &NodePath, codecs: &[ExtensionMetadata]) -> Result<ArrayMetadata> {
        let rank = self.shape.len();
        let (chunk_shape, codecs) = match &self.shards {
            None => (vec![1; rank], vlen_codecs(codecs)),
            Some(plan) => (plan.shape().to_vec(), plan.codecs(vlen_codecs(codecs))),
        };
        let mut meta = ArrayMetadata::new(
            self.shape.clone(),
            chunk_shape,
            DataType::VariableLengthBytes,
            codecs,
        )
        .map_err(|e| Error::metadata(path.metadata_key().as_str(), e.to_string()))?;
        meta.fill_value = FillValue::new(Vec::new());
        Ok(meta)
    }

    /// The grid index of chunk `key`, or an error naming `path` when it is outside the grid.
    fn index(&self, path: &NodePath, key: &ChunkKey) -> Result<Vec<u64>> {
        let inside = key.arity() == self.shape.len();
        let index: Option<Vec<u64>> = inside
            .then(|| {
                key.coords()
                    .iter()
                    .zip(&self.origin)
                    .zip(&self.shape)
                    .map(|((&c, &o), &n)| {
                        let i = u64::try_from(c.checked_sub(o)?).ok()?;
                        (i < n).then_some(i)
                    })
                    .collect()
            })
            .flatten();
        index.ok_or_else(|| {
            Error::inconsistent(
                path.metadata_key().as_str(),
                format!("chunk {key} is outside the level's chunk grid"),
            )
        })
    }

    /// Runs `f` on the pending state of the grid array at `path` (created with the blob codecs
    /// `codecs` on first use), under the lock.
    fn with_pending<T>(
        &self,
        path: &NodePath,
        codecs: &[ExtensionMetadata],
        f: impl FnOnce(&mut Pending) -> Result<T>,
    ) -> Result<T> {
        let mut arrays = self
            .arrays
            .lock()
            .map_err(|_| Error::InvalidInput("a grid writer thread panicked".into()))?;
        if !arrays.contains_key(path) {
            let meta_key = path.metadata_key();
            let meta = self.metadata(path, codecs)?;
            let array = Array::from_metadata(self.store.clone(), path, meta)
                .map_err(|e| zarr_error(e, &meta_key))?;
            arrays.insert(
                path.clone(),
                Pending {
                    array,
                    keys: Vec::new(),
                    shards: ShardBuffer::default(),
                },
            );
        }
        let pending = arrays
            .get_mut(path)
            .ok_or_else(|| Error::InvalidInput("grid array vanished".into()))?;
        f(pending)
    }

    /// Writes `bytes` as the cell of chunk `key` of the grid array at `path` (an empty blob
    /// writes nothing: an empty cell is an absent chunk).
    pub(super) fn write_cell(
        &self,
        path: &NodePath,
        key: &ChunkKey,
        bytes: Cow<'_, [u8]>,
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        let index = self.index(path, key)?;
        let meta_key = path.metadata_key();
        if let Some(plan) = &self.shards {
            let owned = bytes.into_owned();
            let (array, full) = self.with_pending(path, codecs, |pending| {
                if !owned.is_empty() {
                    pending.keys.push(key.clone());
                }
                let full = pending
                    .shards
                    .give(plan, &index, owned, meta_key.as_str())?;
                Ok((pending.array.clone(), full))
            })?;
            return match full {
                Some(shard) => store_shard(&array, shard, &meta_key),
                None => Ok(()),
            };
        }
        let array = self.with_pending(path, codecs, |pending| {
            if !bytes.is_empty() {
                pending.keys.push(key.clone());
            }
            Ok(pending.array.clone())
        })?;
        if bytes.is_empty() {
            return Ok(());
        }
        // framed here only for the cells' own `vlen-bytes` codec (every grid array has it)
        let vlen = array.metadata().codecs.first().map(|c| c.name.as_str()) == Some("vlen-bytes");
        let stored = match bytes {
            Cow::Owned(v) if vlen => match frame_cell(v) {
                Ok(framed) => array.store_serialized_chunk(&index, framed),
                Err(v) => array.store_chunk(&index, one_cell(Cow::Owned(v))),
            },
            borrowed => array.store_chunk(&index, one_cell(borrowed)),
        };
        stored.map_err(|e| zarr_error(e, &meta_key))
    }

    /// Takes the cell of chunk `key` of the grid array at `path` as a part staged it:
    /// `encoded`, the stored chunk of one unsharded cell ([`super::grid_stage`]). Unsharded,
    /// those bytes are stored as they are, at the cell's key; sharded, the cell is decoded and
    /// given to its shard.
    pub(super) fn adopt_cell(
        &self,
        path: &NodePath,
        key: &ChunkKey,
        encoded: bytes::Bytes,
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        if self.shards.is_some() {
            let cell = super::grid_stage::decode_cell(&self.store, path, key, encoded, codecs)?;
            return self.write_cell(path, key, Cow::Owned(cell), codecs);
        }
        let index = self.index(path, key)?;
        let meta_key = path.metadata_key();
        let array = self.with_pending(path, codecs, |pending| {
            pending.keys.push(key.clone());
            Ok(pending.array.clone())
        })?;
        let chunk = array
            .chunk_key(&index)
            .map_err(|e| zarr_error(e, &meta_key))?;
        self.store.set(&chunk, encoded)?;
        Ok(())
    }

    /// Checks that every grid array given cells has had its document written (which stores
    /// its last shards): an array left without one would lose its cells. An error naming the
    /// array otherwise.
    pub(super) fn check_complete(&self) -> Result<()> {
        let arrays = self
            .arrays
            .lock()
            .map_err(|_| Error::InvalidInput("a grid writer thread panicked".into()))?;
        match arrays.keys().min() {
            None => Ok(()),
            Some(path) => Err(Error::inconsistent(
                path.metadata_key().as_str(),
                "cells were written but not the array's document (they would be lost)",
            )),
        }
    }

    /// Writes the `zarr.json` of the grid array at `path` with `attributes` plus
    /// `nonempty_chunks` and `chunk_grid_origin` (after its cells; `codecs` are the blob
    /// codecs of an array that got no cell).
    pub(super) fn write_document(
        &self,
        path: &NodePath,
        mut attributes: JsonObject,
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        let meta_key = path.metadata_key();
        let pending = self
            .arrays
            .lock()
            .map_err(|_| Error::InvalidInput("a grid writer thread panicked".into()))?
            .remove(path);
        let (mut meta, mut keys) = match pending {
            Some(mut p) => {
                for shard in p.shards.drain() {
                    store_shard(&p.array, shard, &meta_key)?;
                }
                (p.array.metadata().clone(), p.keys)
            }
            None => (self.metadata(path, codecs)?, Vec::new()),
        };
        keys.sort();
        keys.dedup();
        let nonempty: Vec<Value> = keys.iter().map(|k| json!(k.to_string())).collect();
        attributes.insert(NONEMPTY_CHUNKS.into(), Value::Array(nonempty));
        attributes.insert(CHUNK_GRID_ORIGIN.into(), json!(self.origin));
        meta.attributes = attributes;
        let array = Array::from_metadata(self.store.clone(), path, meta)
            .map_err(|e| zarr_error(e, &meta_key))?;
        array.store_metadata().map_err(|e| zarr_error(e, &meta_key))
    }
}

/// Stores `shard` (its coordinates and cells, C order) as one object of the sharded `array`.
fn store_shard(
    array: &Array,
    (coords, cells): FullShard,
    meta_key: &zv_core::key::StoreKey,
) -> Result<()> {
    let mut offsets = Vec::with_capacity(cells.len() + 1);
    offsets.push(0);
    let mut data = Vec::with_capacity(cells.iter().map(Vec::len).sum());
    for c in &cells {
        data.extend_from_slice(c);
        offsets.push(data.len());
    }
    array
        .store_chunk(
            &coords,
            ArrayBytes::Variable {
                data: Cow::Owned(data),
                offsets: Cow::Owned(offsets),
            },
        )
        .map_err(|e| zarr_error(e, meta_key))
}
