//! ZV 0.9 chunk-grid arrays (`docs/format-decisions.md`, "ZV 0.9 stores"): one Zarr v3
//! `variable_length_bytes` array of rank D over a level's chunk grid per logical per-chunk
//! array (`vertices`, `vertex_fragments`, `vertex_attributes/<name>`, …). The spatial chunk
//! with absolute coordinates `c` is the cell `c − chunk_grid_origin` (attribute
//! `chunk_grid_origin`, zero when absent); the cell's bytes are what ZV 0.7 stored as the
//! chunk's blob. An empty cell (the fill value `""`) is an absent chunk.
//!
//! The cells are read through `zv-core`'s [`Array`], so plain and sharded (`sharding_indexed`)
//! arrays read alike: a cell is one element of the stored chunk (or shard) that holds it.
//! Which cells hold data comes from the `nonempty_chunks` attribute when the array has one
//! (0.9.2 writes it on unsharded arrays), else from the stored chunks, each decoded once.

use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;
use serde_json::Value;
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::metadata::ArrayMetadata;
use zv_core::node::NodePath;

use super::grid_cache::{Decoded, ShardCache, State};
use super::zarr_error;
use crate::error::{Error, Result};
use crate::metadata::{ChunkKey, JsonObject};

/// The attribute with the absolute chunk coordinates of cell `[0, …, 0]`.
pub const CHUNK_GRID_ORIGIN: &str = "chunk_grid_origin";
/// The attribute listing the non-empty cells by absolute chunk key (`"1.-2.0"`).
pub const NONEMPTY_CHUNKS: &str = "nonempty_chunks";

/// A chunk-grid array of a ZV 0.9 level.
#[derive(Debug)]
pub struct GridArray {
    pub(super) array: Array,
    origin: Vec<i64>,
    /// `nonempty_chunks` as stored, JSON text kept out of [`GridArray::attributes`]: a grid of
    /// a thousand cells lists a thousand keys, which parsing the document would parse and
    /// every copy of the attributes would copy.
    nonempty_stored: Option<Box<RawValue>>,
    /// `nonempty_chunks`, parsed on first use (most reads never need it): the keys, or why
    /// they are refused.
    nonempty: OnceLock<std::result::Result<Option<Vec<ChunkKey>>, String>>,
    attributes: JsonObject,
    /// Decoded stored chunks of more than one cell, so the cells of one shard cost one read.
    pub(super) decoded: ShardCache,
    /// Whether a stored chunk holds more than one cell (a shard).
    pub(super) shared: bool,
}

impl GridArray {
    /// The grid array of node `path` with metadata `meta`: `variable_length_bytes`, rank ≥ 1,
    /// an origin of that rank; anything else is an error naming the node's `zarr.json`.
    /// `nonempty` is the attribute `nonempty_chunks` when the document was parsed without it
    /// ([`NodeMetadata::from_json_deferring`](zv_core::metadata::NodeMetadata::from_json_deferring));
    /// else it is taken from `meta`'s attributes.
    pub(super) fn open(
        store: Arc<dyn zv_core::store::Store>,
        path: &NodePath,
        mut meta: ArrayMetadata,
        nonempty: Option<Box<RawValue>>,
    ) -> Result<Self> {
        let key = path.metadata_key().to_string();
        if meta.data_type != DataType::VariableLengthBytes {
            return Err(Error::metadata(
                &key,
                format!(
                    "a ZV 0.9 per-chunk array is variable_length_bytes, this one is {}",
                    meta.data_type
                ),
            ));
        }
        let rank = meta.shape.len();
        // the array's own metadata keeps no attributes: the grid holds them, and the list of
        // non-empty cells apart (the other keys keep their order)
        let mut attributes = std::mem::take(&mut meta.attributes);
        let nonempty_stored = match (nonempty, attributes.shift_remove(NONEMPTY_CHUNKS)) {
            (Some(raw), _) => Some(raw),
            (None, Some(v)) => Some(
                serde_json::value::to_raw_value(&v)
                    .map_err(|e| Error::metadata(&key, format!("`{NONEMPTY_CHUNKS}`: {e}")))?,
            ),
            (None, None) => None,
        };
        let origin = parse_origin(attributes.get(CHUNK_GRID_ORIGIN), rank, &key)?;
        if let Some(t) = meta.storage_transformers.iter().find(|t| !t.may_ignore()) {
            return Err(Error::Unsupported {
                key,
                what: format!("storage transformer `{}`", t.name),
            });
        }
        let array = Array::from_metadata(store, path, meta)
            .map_err(|e| zarr_error(e, &path.metadata_key()))?;
        let shared = array.grid().chunk_shape().iter().any(|&n| n > 1);
        Ok(Self {
            array,
            origin,
            nonempty_stored,
            nonempty: OnceLock::new(),
            attributes,
            decoded: ShardCache::default(),
            shared,
        })
    }

    /// The array's own attributes, without `nonempty_chunks` (read through
    /// [`GridArray::listed`]).
    pub fn attributes(&self) -> &JsonObject {
        &self.attributes
    }

    /// The absolute chunk coordinates of cell `[0, …, 0]`.
    pub fn origin(&self) -> &[i64] {
        &self.origin
    }

    /// The grid's shape (cells per dimension).
    pub fn shape(&self) -> &[u64] {
        self.array.shape()
    }

    /// The shard shape (cells per stored object) when the cells are packed in shards
    /// (`sharding_indexed`), `None` when each cell is its own stored chunk.
    pub fn shard_shape(&self) -> Option<Vec<u64>> {
        let sharded = self
            .array
            .metadata()
            .codecs
            .first()
            .is_some_and(|c| c.name == "sharding_indexed");
        sharded.then(|| self.array.grid().chunk_shape().to_vec())
    }

    /// The keys `nonempty_chunks` lists (sorted, deduplicated), `None` without the attribute;
    /// an error naming the array's `zarr.json` when the attribute is not a list of chunk keys
    /// of the grid's rank.
    pub fn listed(&self) -> Result<Option<&[ChunkKey]>> {
        let parsed = self.nonempty.get_or_init(|| {
            let Some(raw) = &self.nonempty_stored else {
                return Ok(None);
            };
            match serde_json::from_str::<Value>(raw.get()) {
                Ok(Value::Null) => Ok(None),
                Ok(v) => parse_nonempty(&v, self.origin.len()).map(Some),
                Err(e) => Err(e.to_string()),
            }
        });
        match parsed {
            Ok(keys) => Ok(keys.as_deref()),
            Err(why) => Err(Error::metadata(
                self.array.path().metadata_key().as_str(),
                format!("`{NONEMPTY_CHUNKS}`: {why}"),
            )),
        }
    }

    /// Whether chunk `key` has a cell in the grid (`key − origin` inside the shape).
    pub fn contains(&self, key: &ChunkKey) -> bool {
        self.index_of(key).is_some()
    }

    /// The store key of the stored chunk holding the cell of `key` (for errors), or the
    /// array's `zarr.json` when the key is outside the grid.
    pub fn cell_store_key(&self, key: &ChunkKey) -> String {
        self.locate(key)
            .and_then(|(chunk, _)| self.array.chunk_key(&chunk).ok())
            .map_or_else(
                || self.array.path().metadata_key().to_string(),
                |k| k.to_string(),
            )
    }

    /// The grid index of chunk `key` (`key − origin`), if inside the array's shape.
    pub(super) fn index_of(&self, key: &ChunkKey) -> Option<Vec<u64>> {
        let shape = self.array.shape();
        if key.arity() != shape.len() {
            return None;
        }
        key.coords()
            .iter()
            .zip(&self.origin)
            .zip(shape)
            .map(|((&c, &o), &n)| {
                let i = u64::try_from(c.checked_sub(o)?).ok()?;
                (i < n).then_some(i)
            })
            .collect()
    }

    /// The stored chunk holding chunk `key`'s cell and the cell's element index in it.
    pub(super) fn locate(&self, key: &ChunkKey) -> Option<(Vec<u64>, usize)> {
        let index = self.index_of(key)?;
        let inner = self.array.grid().chunk_shape();
        let mut chunk = Vec::with_capacity(index.len());
        let mut element = 0u64;
        for (&i, &n) in index.iter().zip(inner) {
            let n = n.max(1);
            chunk.push(i / n);
            element = element.checked_mul(n)?.checked_add(i % n)?;
        }
        Some((chunk, usize::try_from(element).ok()?))
    }

    /// The bytes of chunk `key`'s cell; `None` when the key is outside the grid or the cell
    /// is empty.
    pub fn cell(&self, key: &ChunkKey) -> Result<Option<Vec<u8>>> {
        // a cell read ahead ([`GridArray::prefetch`])
        if let Some(bytes) = self.index_of(key).and_then(|i| self.decoded.cell(&i)) {
            return Ok((!bytes.is_empty()).then_some(bytes));
        }
        let Some((chunk, element)) = self.locate(key) else {
            return Ok(None);
        };
        let elements = if self.shared {
            let (state, read_here) = self
                .decoded
                .get_or_read(&chunk, || self.read_encoded(&chunk))?;
            match state {
                State::Unread | State::Absent => return Ok(None),
                State::Decoded(d) => d,
                State::Read(bytes) if read_here => self.decode_and_keep(&chunk, bytes)?,
                // another thread read the shard and is decoding it: this cell alone
                State::Read(bytes) => return self.decode_cell(&chunk, &bytes, key),
            }
        } else {
            match self.fetch_chunk(&chunk)? {
                Some(d) => d,
                None => return Ok(None),
            }
        };
        let count = elements.len();
        let bytes = match Arc::try_unwrap(elements) {
            // decoded here for this cell alone (no cache holds it): its bytes are moved out
            Ok(mut cells) => cells.get_mut(element).map(std::mem::take),
            Err(shared) => shared.get(element).cloned(),
        };
        let bytes = bytes.ok_or_else(|| {
            Error::inconsistent(
                self.cell_store_key(key),
                format!("the chunk has {count} cells, cell {element} was asked"),
            )
        })?;
        Ok((!bytes.is_empty()).then_some(bytes))
    }

    /// The elements of stored chunk `chunk`; `None` if it is not stored. A shard is read once
    /// and kept decoded ([`ShardCache`]); a stored chunk of one cell is read per use.
    pub(super) fn decoded_chunk(&self, chunk: &[u64]) -> Result<Option<Decoded>> {
        if !self.shared {
            return self.fetch_chunk(chunk);
        }
        let (state, _) = self
            .decoded
            .get_or_read(chunk, || self.read_encoded(chunk))?;
        match state {
            State::Unread | State::Absent => Ok(None),
            State::Decoded(d) => Ok(Some(d)),
            State::Read(bytes) => self.decode_and_keep(chunk, bytes).map(Some),
        }
    }

    /// The stored bytes of chunk `chunk` (a store read and nothing else); `None` if absent.
    pub(super) fn read_encoded(&self, chunk: &[u64]) -> Result<Option<bytes::Bytes>> {
        self.array
            .retrieve_encoded_chunk(chunk)
            .map_err(|e| zarr_error(e, &self.array.path().metadata_key()))
    }

    /// Decodes the stored bytes of shard `chunk` and keeps the result.
    fn decode_and_keep(&self, chunk: &[u64], bytes: bytes::Bytes) -> Result<Decoded> {
        let meta_key = self.array.path().metadata_key();
        let decoded = self
            .array
            .decode_encoded_chunk(chunk, bytes)
            .map_err(|e| zarr_error(e, &meta_key))?;
        let elements = self.elements(decoded)?;
        self.decoded.keep(chunk, elements.clone());
        Ok(elements)
    }

    /// Chunk `key`'s cell alone, decoded from `bytes`, the stored bytes of its shard `chunk`
    /// (the shard's index and the cell's inner chunk).
    fn decode_cell(
        &self,
        chunk: &[u64],
        bytes: &bytes::Bytes,
        key: &ChunkKey,
    ) -> Result<Option<Vec<u8>>> {
        let meta_key = self.array.path().metadata_key();
        let inner = self.array.grid().chunk_shape();
        let Some(index) = self.index_of(key) else {
            return Ok(None);
        };
        let local: Vec<u64> = index
            .iter()
            .zip(inner)
            .map(|(i, n)| i % n.max(&1))
            .collect();
        let region = zv_core::grid::Region::new(local, vec![1; inner.len()])
            .map_err(|e| Error::InvalidInput(e.to_string()))?;
        let decoded = self
            .array
            .decode_encoded_part(chunk, bytes, &region)
            .map_err(|e| zarr_error(e, &meta_key))?;
        let elements = self.elements(decoded)?;
        Ok(elements.first().filter(|b| !b.is_empty()).cloned())
    }

    /// Reads and decodes stored chunk `chunk`; `None` if it is not stored.
    pub(super) fn fetch_chunk(&self, chunk: &[u64]) -> Result<Option<Decoded>> {
        let meta_key = self.array.path().metadata_key();
        let Some(bytes) = self
            .array
            .retrieve_chunk_if_exists(chunk)
            .map_err(|e| zarr_error(e, &meta_key))?
        else {
            return Ok(None);
        };
        self.elements(bytes).map(Some)
    }

    /// The cells of a decoded chunk (or part of one).
    pub(super) fn elements(&self, bytes: ArrayBytes<'_>) -> Result<Decoded> {
        let ArrayBytes::Variable { data, offsets } = bytes else {
            return Err(Error::metadata(
                self.array.path().metadata_key().as_str(),
                "a variable_length_bytes array decoded to fixed-size elements",
            ));
        };
        // one cell filling the data (a chunk of one cell): its bytes moved, not copied
        if let [0, end] = offsets[..] {
            if end == data.len() {
                return Ok(Arc::new(vec![data.into_owned()]));
            }
        }
        let elements: Vec<Vec<u8>> = offsets
            .windows(2)
            .map(|w| data.get(w[0]..w[1]).map(<[u8]>::to_vec).unwrap_or_default())
            .collect();
        Ok(Arc::new(elements))
    }

    /// The absolute keys of the non-empty cells, sorted: `nonempty_chunks` when present, else
    /// [`GridArray::stored_keys`].
    pub fn keys(&self) -> Result<Vec<ChunkKey>> {
        match self.listed()? {
            Some(keys) => Ok(keys.to_vec()),
            None => self.stored_keys(),
        }
    }

    /// The absolute keys of the cells the store holds, sorted, whatever `nonempty_chunks`
    /// says: with one cell per stored chunk (inner chunk shape `[1, …, 1]`), every stored
    /// chunk (listed, not read); otherwise every non-empty element of every stored chunk
    /// (each decoded).
    pub fn stored_keys(&self) -> Result<Vec<ChunkKey>> {
        let meta_key = self.array.path().metadata_key();
        let stored = self
            .array
            .stored_chunks()
            .map_err(|e| zarr_error(e, &meta_key))?;
        let inner: Vec<u64> = self.array.grid().chunk_shape().to_vec();
        let shape = self.array.shape().to_vec();
        let mut out = Vec::new();
        if inner.iter().all(|&n| n == 1) {
            out.extend(
                stored
                    .iter()
                    .filter_map(|c| self.key_of(c, 0, &inner, &shape)),
            );
            out.sort();
            return Ok(out);
        }
        for chunk in stored {
            let Some(elements) = self.decoded_chunk(&chunk)? else {
                continue;
            };
            for (e, bytes) in elements.iter().enumerate() {
                if bytes.is_empty() {
                    continue;
                }
                if let Some(key) = self.key_of(&chunk, e as u64, &inner, &shape) {
                    out.push(key);
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The absolute key of element `e` of stored chunk `chunk` (`None` in the edge padding).
    fn key_of(&self, chunk: &[u64], mut e: u64, inner: &[u64], shape: &[u64]) -> Option<ChunkKey> {
        let mut coords = vec![0i64; inner.len()];
        for d in (0..inner.len()).rev() {
            let n = inner[d].max(1);
            let i = chunk[d].checked_mul(n)?.checked_add(e % n)?;
            e /= n;
            if i >= shape[d] {
                return None;
            }
            coords[d] = i64::try_from(i).ok()?.checked_add(self.origin[d])?;
        }
        Some(ChunkKey(coords))
    }
}

/// `chunk_grid_origin`: `rank` integers, zeros when absent.
fn parse_origin(v: Option<&Value>, rank: usize, key: &str) -> Result<Vec<i64>> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(vec![0; rank]);
    };
    let origin: Option<Vec<i64>> = v
        .as_array()
        .map(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
        .unwrap_or(None);
    match origin {
        Some(o) if o.len() == rank => Ok(o),
        _ => Err(Error::metadata(
            key,
            format!("`{CHUNK_GRID_ORIGIN}` is {v}, not {rank} integers (the array's rank)"),
        )),
    }
}

/// `nonempty_chunks`: chunk keys of arity `rank`, returned sorted and deduplicated; else why
/// not.
fn parse_nonempty(v: &Value, rank: usize) -> std::result::Result<Vec<ChunkKey>, String> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("{v} is not a list of chunk keys"))?;
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let text = item
            .as_str()
            .ok_or_else(|| format!("{item} is not a chunk key"))?;
        let k: ChunkKey = text.parse()?;
        if k.arity() != rank {
            return Err(format!("`{text}` does not have {rank} components"));
        }
        out.push(k);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn origin_defaults_to_zero_and_must_match_the_rank() {
        assert_eq!(parse_origin(None, 3, "k").unwrap(), vec![0, 0, 0]);
        assert_eq!(
            parse_origin(Some(&json!([-2, 0, 5])), 3, "k").unwrap(),
            vec![-2, 0, 5]
        );
        for bad in [json!([1, 2]), json!("x"), json!([1.5, 0, 0])] {
            let e = parse_origin(Some(&bad), 3, "0/vertices/zarr.json").unwrap_err();
            assert!(e.to_string().contains("0/vertices/zarr.json"), "{e}");
        }
    }

    #[test]
    fn nonempty_chunks_are_keys_of_the_rank() {
        let keys = parse_nonempty(&json!(["1.-2.0", "-1.0.0", "1.-2.0"]), 3).unwrap();
        assert_eq!(
            keys,
            vec![ChunkKey(vec![-1, 0, 0]), ChunkKey(vec![1, -2, 0])]
        );
        for bad in [json!(["1.2"]), json!([3]), json!("1.2.3"), json!(["a.b.c"])] {
            assert!(parse_nonempty(&bad, 3).is_err(), "{bad}");
        }
    }
}
