//! ZV blobs through the Zarr layer of `zv-core` (`docs/format-decisions.md`, "Zarr v3 layer":
//! per-chunk blobs, codecs, `__shard_*` packing).
//!
//! Every ZV blob is a 1-D Zarr v3 array node (`<level>/<array>/<key>/zarr.json` plus its chunk
//! files). Nothing here decodes or encodes bytes itself: a blob is read and written as a
//! `zv_core` [`Array`], so there is one codec path and one place that checks sizes (the codec
//! chain checks every decoded chunk against the chunk shape).
//!
//! - **Reading** opens the node's `zarr.json` ([`read_node_metadata`], one store read), builds
//!   the array handle without further I/O ([`Array::from_metadata`]) and reads its chunk
//!   ([`Array::retrieve_chunk_if_exists`], one store read). The usual blob has one chunk
//!   covering it, and its decoded chunk *is* the blob: it is returned without a copy. Arrays
//!   of several chunks (the reference's `object_index/manifests`, `variable_length_bytes` in
//!   16384-element chunks) are assembled from the chunks that one listing finds
//!   ([`Array::stored_chunks`]); missing chunks hold the fill value, so a large sparse shape
//!   costs one listing rather than a read per chunk, and the output is reserved fallibly from
//!   the shape before anything is read. Blobs are decoded with whatever codecs their own
//!   `zarr.json` lists, so stores with mixed codecs read fine. A blob of shape `[0]` is empty
//!   and reads no chunk.
//! - **Writing** builds the array handle from new metadata ([`Array::from_metadata`]), stores
//!   its single chunk ([`Array::store_chunk`]) and then its `zarr.json`
//!   ([`Array::store_metadata`]), so a reader never sees metadata without its data. An empty
//!   blob has shape `[0]`, chunk shape `[1]` and no chunk file. The documents are the
//!   pretty-printed `zv_core` documents, byte for byte what [`Array::create`] writes. A blob
//!   the caller gives up ([`Blobs::write_vec`]: the writer's chunk blobs) is stored without a
//!   copy when no codec changes it, a ZV 0.9 grid cell framed in place
//!   ([`Array::store_serialized_chunk`]) — the same bytes a borrowed blob is stored as.
//! - **`__shard_*` packs**: when a blob's node is missing but its array group holds the
//!   reference's `__shard_*` packs, the blob is sliced out of the pack named by the pack's
//!   `shard_index` attribute (see [`shard`]).
//!
//! Paths are given as `/`-separated text (`"0/vertices/0.0.0"`, `""` for the root) and turned
//! into `zv_core` [`NodePath`]s at once (with [`NodePath::new_lenient`], since the reference's
//! packs are named `__shard_*`, a name Zarr reserves); store keys come from the node paths.
//! Errors name the real store key: the node's `zarr.json`, or the chunk that failed.

mod arrays;
mod early;
pub mod grid;
mod grid_cache;
mod grid_open;
mod grid_prefetch;
pub mod grid_shards;
mod grid_stage;
mod grid_write;
mod primed;
mod read;
mod shard;
mod stream;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use zv_core::array::{parse_node_metadata, read_node_metadata, Array};
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata, GroupMetadata, NodeMetadata};
use zv_core::node::{NodePath, METADATA_NAME};
use zv_core::store::Store;

use crate::error::{Error, Result};
use crate::metadata::{ChunkKey, JsonObject, Layout};
use crate::names::SHARD_PREFIX;
use crate::serial::SerialMap;

pub(crate) use early::read_ahead;
pub use grid::GridArray;
pub use grid_write::{bounding_grid, vlen_codecs, CELL_HEADROOM};
pub(crate) use primed::Read;
pub use read::{BlobData, MAX_FILL_BYTES};
pub use stream::BlobStream;
pub(crate) use stream::RECORD_CHUNK_BYTES;

/// The chunk-grid arrays opened so far (`None`: no grid array at that path).
/// What takes a blob's pieces ([`Blobs::read_bytes_pieces`]): the bytes of a stored chunk,
/// the blob's size and the chunk's store key.
pub(crate) type PieceVisitor<'a> = dyn FnMut(&[u8], u64, &str) -> Result<()> + 'a;

type GridCache = Mutex<HashMap<NodePath, Option<Arc<GridArray>>>>;

/// Blob access for one store, with a cache of `__shard_*` indices and of ZV 0.9 grid arrays.
#[derive(Debug)]
pub struct Blobs {
    store: Arc<dyn Store>,
    layout: Layout,
    /// Each group's `__shard_*` index, listed once however many threads miss in it at once.
    shards: SerialMap<NodePath, Arc<shard::ShardIndex>>,
    grids: GridCache,
    /// Writing a ZV 0.9 level: the chunk grid its per-chunk blobs go into as cells.
    sink: OnceLock<grid_write::GridSink>,
    /// A part of a distributed ZV 0.9 write: the prefix its cells are staged under.
    staging: OnceLock<String>,
    /// Documents read ahead of their first read (module `early`).
    early: early::EarlyDocuments,
    /// Byte ranges read ahead of their first read (module `primed`).
    primed: Arc<primed::PrimedRanges>,
}

/// Joins path parts with `/`, skipping empty parts.
pub fn join(parts: &[&str]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/")
}

/// The node path of `path` (`""` is the root); names reserved by Zarr (`__shard_*`) are
/// accepted, anything that could leave the store is refused.
fn node_path(path: &str) -> Result<NodePath> {
    NodePath::new_lenient(path).map_err(|e| Error::InvalidInput(e.to_string()))
}

/// The last name of a listed prefix (`"a/b/"` → `"b"`).
fn last_name(prefix: &StorePrefix) -> Option<&str> {
    prefix.as_str().trim_end_matches('/').rsplit('/').next()
}

/// The ZV error for a Zarr-layer error of the blob at `meta_key`, keeping the key the failure
/// concerns: the document for metadata and pipeline errors, the chunk for codec errors.
/// The grid array and chunk of a per-chunk blob path `<array>/<chunk key>` (`None` when the
/// last name is not a chunk key).
fn cell_of(path: &NodePath) -> Result<Option<(NodePath, ChunkKey)>> {
    let Some((parent, last)) = path.as_str().rsplit_once('/') else {
        return Ok(None);
    };
    let Ok(key) = last.parse::<ChunkKey>() else {
        return Ok(None);
    };
    Ok(Some((node_path(parent)?, key)))
}

fn zarr_error(e: zv_core::Error, meta_key: &StoreKey) -> Error {
    match e {
        zv_core::Error::Store(source) => Error::Store(source),
        zv_core::Error::Key(source) => Error::InvalidInput(source.to_string()),
        zv_core::Error::Metadata { key, source } => Error::metadata(key, source.to_string()),
        zv_core::Error::Pipeline { source, .. } => Error::Codec {
            key: meta_key.to_string(),
            source,
        },
        zv_core::Error::Chunk { key, source } => Error::Codec { key, source },
        other => Error::Zarr(other),
    }
}

impl Blobs {
    /// Blob access over `store`, laid out as ZV 0.7 (per-chunk nodes).
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self::with_layout(store, Layout::PerChunkNodes)
    }

    /// Blob access over `store` with `layout`. With [`Layout::ChunkGrid`] (ZV 0.9) the blob
    /// of chunk `k` in a per-chunk array `a` (path `a/k`) is the cell of the grid array at
    /// `a` ([`GridArray`]), [`Blobs::blob_names`] of `a` lists its non-empty cells, and
    /// [`Blobs::group_attributes`] of an array node gives the array's own attributes (0.9
    /// keeps what 0.7 put on array groups there).
    pub fn with_layout(store: Arc<dyn Store>, layout: Layout) -> Self {
        Self {
            store,
            layout,
            shards: SerialMap::default(),
            grids: Mutex::new(HashMap::new()),
            staging: OnceLock::new(),
            sink: OnceLock::new(),
            early: Default::default(),
            primed: Default::default(),
        }
    }

    /// The store's layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The parsed `zarr.json` at `path` (`""` for the root), or `None`.
    pub fn node(&self, path: &str) -> Result<Option<NodeMetadata>> {
        self.node_at(&node_path(path)?)
    }

    fn node_at(&self, path: &NodePath) -> Result<Option<NodeMetadata>> {
        let found = match self.take_early(path) {
            Some(early) => early
                .map(|bytes| parse_node_metadata(&path.metadata_key(), &bytes))
                .transpose(),
            None => read_node_metadata(self.store.as_ref(), path),
        };
        found.map_err(|e| zarr_error(e, &path.metadata_key()))
    }

    /// The attributes of the group at `path`; `None` if it has no `zarr.json`. An array there
    /// is an error, except in a ZV 0.9 store, where an array's own attributes are given
    /// (without `nonempty_chunks`: [`GridArray::listed`]).
    pub fn group_attributes(&self, path: &str) -> Result<Option<JsonObject>> {
        let path = node_path(path)?;
        if self.layout == Layout::ChunkGrid {
            if let Some(Some(grid)) = self.grids.lock().ok().and_then(|m| m.get(&path).cloned()) {
                return Ok(Some(grid.attributes().clone()));
            }
        }
        let found = if self.layout == Layout::ChunkGrid {
            self.grid_node_at(&path)?
        } else {
            self.node_at(&path)?.map(|m| (m, None))
        };
        match found {
            None => Ok(None),
            Some((NodeMetadata::Group(g), _)) => Ok(Some(g.attributes)),
            Some((NodeMetadata::Array(a), nonempty)) if self.layout == Layout::ChunkGrid => {
                // as the grid array gives them: without the list of non-empty cells
                let attributes = a.attributes.clone();
                // the grid array is opened from this document now, so that reading its cells
                // does not read it again (on an object store, a request on the way to every
                // query); a document it refuses is reported when its cells are read
                if let Ok(grid) = GridArray::open(self.store.clone(), &path, a, nonempty) {
                    if let Ok(mut m) = self.grids.lock() {
                        m.entry(path).or_insert_with(|| Some(Arc::new(grid)));
                    }
                }
                Ok(Some(attributes))
            }
            Some((NodeMetadata::Array(_), _)) => Err(Error::metadata(
                path.metadata_key().as_str(),
                "expected a group, found an array",
            )),
        }
    }

    /// The names of the child prefixes of `path` (directories, with or without `zarr.json`).
    pub fn children(&self, path: &str) -> Result<Vec<String>> {
        self.children_at(&node_path(path)?)
    }

    fn children_at(&self, path: &NodePath) -> Result<Vec<String>> {
        let listing = self.store.list_dir(&path.prefix())?;
        Ok(listing
            .prefixes
            .iter()
            .filter_map(|p| last_name(p).map(str::to_owned))
            .collect())
    }

    /// Whether anything exists below `path`.
    pub fn exists(&self, path: &str) -> Result<bool> {
        let listing = self.store.list_dir(&node_path(path)?.prefix())?;
        Ok(!listing.keys.is_empty() || !listing.prefixes.is_empty())
    }

    /// Reads the array node at `path`, or `None` if there is no node there (and no pack entry).
    pub fn read(&self, path: &str) -> Result<Option<BlobData>> {
        self.read_at(&node_path(path)?)
    }

    /// The elements of the `variable_length_bytes` blob at `path` when it is one stored
    /// chunk, flat (their bytes back to back, and `n + 1` offsets), without a copy per
    /// element; `None` otherwise (no node, another kind of array, several chunks: read it
    /// with [`Blobs::read`], which names any fault).
    pub(crate) fn read_flat_elements(&self, path: &str) -> Result<Option<(Vec<u8>, Vec<usize>)>> {
        let path = node_path(path)?;
        match self.node_at(&path)? {
            Some(NodeMetadata::Array(meta)) => {
                read::read_flat_elements(&self.open_array(&path, meta)?)
            }
            _ => Ok(None),
        }
    }

    fn read_at(&self, path: &NodePath) -> Result<Option<BlobData>> {
        // a cell of a ZV 0.9 grid array is read from the grid straight away: probing a node
        // `<array>/<chunk>/zarr.json` first would cost a request per cell on an object store
        // (none exists under an array); anything else, errors included, takes the path below
        if self.layout == Layout::ChunkGrid {
            if let Ok(Some((parent, key))) = cell_of(path) {
                if let Ok(Some(grid)) = self.grid_at(&parent) {
                    return Ok(grid.cell(&key)?.map(BlobData::Bytes));
                }
            }
        }
        match self.node_at(path)? {
            Some(NodeMetadata::Array(meta)) => {
                read::read_whole(&self.open_array(path, meta)?).map(Some)
            }
            Some(NodeMetadata::Group(_)) => Err(Error::metadata(
                path.metadata_key().as_str(),
                "expected a blob array, found a group",
            )),
            None if self.layout == Layout::ChunkGrid => self.grid_cell(path),
            None => self.read_from_shard(path),
        }
    }

    /// The blob array at `path` from its metadata (no I/O): a 1-D array with no storage
    /// transformer it must understand, and a codec chain that builds.
    fn open_array(&self, path: &NodePath, meta: ArrayMetadata) -> Result<Array> {
        // keys are only built for errors
        if meta.shape.len() != 1 {
            return Err(Error::metadata(
                path.metadata_key().as_str(),
                format!(
                    "a blob must be a 1-D array, this one has shape {:?}",
                    meta.shape
                ),
            ));
        }
        if let Some(t) = meta.storage_transformers.iter().find(|t| !t.may_ignore()) {
            return Err(Error::Unsupported {
                key: path.metadata_key().to_string(),
                what: format!("storage transformer `{}`", t.name),
            });
        }
        Array::from_metadata(self.store.clone(), path, meta)
            .map_err(|e| zarr_error(e, &path.metadata_key()))
    }

    /// Reads the byte blob at `path`; `None` if absent.
    pub fn read_bytes(&self, path: &str) -> Result<Option<Vec<u8>>> {
        let path = node_path(path)?;
        match self.read_at(&path)? {
            None => Ok(None),
            Some(data) => data.into_bytes(&path.metadata_key()).map(Some),
        }
    }

    /// Reads the byte blob at `path` a stored chunk at a time, handing `each` the bytes of
    /// each chunk in order, the blob's size and the store key of the chunk (to name in
    /// errors about its bytes); `false` if absent. A blob of several chunks is never held
    /// whole; any other (one chunk, a ZV 0.9 grid cell, a shard entry) is read whole and
    /// handed over at once, named by its first chunk (or the key that holds its cell).
    pub(crate) fn read_bytes_pieces(
        &self,
        path: &str,
        each: &mut PieceVisitor<'_>,
    ) -> Result<bool> {
        let node = node_path(path)?;
        if self.layout != Layout::ChunkGrid {
            if let Some(NodeMetadata::Array(meta)) = self.node_at(&node)? {
                read::read_pieces(&self.open_array(&node, meta)?, each)?;
                return Ok(true);
            }
        }
        match self.read_bytes(path)? {
            Some(bytes) => {
                each(&bytes, bytes.len() as u64, &self.missing_key(path))?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Reads the byte blob at `path`; a missing blob is an error naming `what`.
    pub fn require_bytes(&self, path: &str, what: &str) -> Result<Vec<u8>> {
        self.read_bytes(path)?.ok_or_else(|| Error::Missing {
            key: self.missing_key(path),
            what: what.to_owned(),
        })
    }

    /// The store key to name when the blob at `path` is missing: its `zarr.json`, or, in a
    /// ZV 0.9 store, the stored chunk of the grid array that would hold its cell.
    pub fn missing_key(&self, path: &str) -> String {
        let node = join(&[path, METADATA_NAME]);
        if self.layout != Layout::ChunkGrid {
            return node;
        }
        let Some((parent, last)) = path.rsplit_once('/') else {
            return node;
        };
        let (Ok(key), Ok(parent)) = (last.parse::<ChunkKey>(), node_path(parent)) else {
            return node;
        };
        match self.grid_at(&parent) {
            Ok(Some(grid)) => grid.cell_store_key(&key),
            _ => node,
        }
    }

    /// Writes a byte blob at `path` as a 1-D `uint8` array node with one chunk holding
    /// everything, encoded with `codecs` (an empty blob: shape `[0]`, chunk shape `[1]`, no
    /// chunk file). `zarr.json` is written after the chunk, so a reader never sees metadata
    /// without its data.
    pub fn write_bytes(
        &self,
        path: &str,
        bytes: &[u8],
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        self.write_blob(path, Cow::Borrowed(bytes), codecs)
    }

    /// [`Blobs::write_bytes`] of a buffer the caller gives up: uncompressed, it is stored
    /// as it is, without the copy a borrowed blob takes (a grid cell is framed in place, in
    /// [`CELL_HEADROOM`] bytes of spare capacity when the buffer has them).
    pub fn write_vec(
        &self,
        path: &str,
        bytes: Vec<u8>,
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        self.write_blob(path, Cow::Owned(bytes), codecs)
    }

    /// [`Blobs::write_bytes`] and [`Blobs::write_vec`].
    fn write_blob(
        &self,
        path: &str,
        bytes: Cow<'_, [u8]>,
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        let path = node_path(path)?;
        if let Some(prefix) = self.staging.get() {
            if let Some((array, key)) = cell_of(&path)? {
                if bytes.is_empty() {
                    return Ok(());
                }
                return grid_stage::stage_cell(&self.store, prefix, (&array, &key), &bytes, codecs);
            }
        }
        if let Some((sink, array, key)) = self.grid_cell_target(&path)? {
            return sink.write_cell(&array, &key, bytes, codecs);
        }
        let meta_key = path.metadata_key();
        let n = bytes.len() as u64;
        let meta = ArrayMetadata::new(vec![n], vec![n.max(1)], DataType::UInt8, codecs.to_vec())
            .map_err(|e| Error::metadata(meta_key.as_str(), e.to_string()))?;
        let array = Array::from_metadata(self.store.clone(), &path, meta)
            .map_err(|e| zarr_error(e, &meta_key))?;
        if n == 0 {
            let chunk_key = array
                .chunk_key(&[0])
                .map_err(|e| zarr_error(e, &meta_key))?;
            self.store.delete(&chunk_key)?;
        } else {
            array
                .store_chunk(&[0], ArrayBytes::Fixed(bytes))
                .map_err(|e| zarr_error(e, &meta_key))?;
        }
        array.store_metadata().map_err(|e| zarr_error(e, &meta_key))
    }

    /// Lays the per-chunk blobs written from now on out as ZV 0.9 chunk-grid cells: a blob
    /// `<array>/<chunk key>` becomes the cell of that chunk in the grid array `<array>`, whose
    /// grid has its lowest chunk at `origin` and `shape` chunks per dimension; with `shard`,
    /// its cells are packed in shards of that many cells per dimension (`occupied`: the
    /// level's chunks, which tell when a shard is complete). Its document is written by
    /// [`Blobs::write_chunk_array_document`], after its cells.
    pub fn begin_grid(
        &self,
        origin: Vec<i64>,
        shape: Vec<u64>,
        shard: Option<Vec<u64>>,
        occupied: &[ChunkKey],
    ) -> Result<()> {
        let sink = grid_write::GridSink::new(self.store.clone(), origin, shape, shard, occupied)?;
        self.sink
            .set(sink)
            .map_err(|_| Error::InvalidInput("the chunk grid is already set".into()))
    }

    /// Stages the per-chunk blobs written from now on as the cells of a part of a distributed
    /// ZV 0.9 write, under `prefix` ([`grid_stage`]); [`Blobs::adopt_staged_cell`] places
    /// them at the commit.
    pub fn begin_staging(&self, prefix: &str) -> Result<()> {
        self.staging
            .set(prefix.to_owned())
            .map_err(|_| Error::InvalidInput("the cells are already staged".into()))
    }

    /// Moves the cell a part staged under `prefix` for blob `path` (`<array>/<chunk key>`)
    /// into the chunk grid set by [`Blobs::begin_grid`]; an error naming the staged key when
    /// it is missing.
    pub fn adopt_staged_cell(
        &self,
        prefix: &str,
        path: &str,
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        let path = node_path(path)?;
        let (Some(sink), Some((array, key))) = (self.sink.get(), cell_of(&path)?) else {
            return Err(Error::InvalidInput(format!(
                "`{path}` is not a cell of a chunk grid being written"
            )));
        };
        let staged = grid_stage::staged_key(prefix, &array, &key)?;
        let encoded = self.store.get(&staged)?.ok_or_else(|| Error::Missing {
            key: staged.to_string(),
            what: "a cell a part wrote".into(),
        })?;
        sink.adopt_cell(&array, &key, encoded, codecs)
    }

    /// When writing chunk-grid cells, the grid array and chunk of blob `path`.
    fn grid_cell_target(
        &self,
        path: &NodePath,
    ) -> Result<Option<(&grid_write::GridSink, NodePath, ChunkKey)>> {
        let Some(sink) = self.sink.get() else {
            return Ok(None);
        };
        Ok(cell_of(path)?.map(|(array, key)| (sink, array, key)))
    }

    /// After [`Blobs::begin_grid`], checks that every grid array given cells has its document
    /// (so its cells and shards are all stored); the writer checks it before the level's
    /// document and the root. Nothing to check otherwise.
    pub fn check_grid_complete(&self) -> Result<()> {
        self.sink
            .get()
            .map_or(Ok(()), grid_write::GridSink::check_complete)
    }

    /// The document of the per-chunk array at `path`: a group with `attributes` (ZV 0.7), or,
    /// after [`Blobs::begin_grid`], the grid array's `zarr.json` with `attributes` beside
    /// `nonempty_chunks` and `chunk_grid_origin` (`codecs`: the blob codecs, used when no cell
    /// was written).
    pub fn write_chunk_array_document(
        &self,
        path: &str,
        attributes: JsonObject,
        codecs: &[ExtensionMetadata],
    ) -> Result<()> {
        match self.sink.get() {
            Some(sink) => sink.write_document(&node_path(path)?, attributes, codecs),
            None => self.write_group(path, attributes),
        }
    }

    /// Writes a group `zarr.json` with `attributes` at `path` (`""` for the root).
    pub fn write_group(&self, path: &str, attributes: JsonObject) -> Result<()> {
        let doc = GroupMetadata::new(attributes);
        self.store.set(
            &node_path(path)?.metadata_key(),
            bytes::Bytes::from(doc.to_json_pretty()),
        )?;
        Ok(())
    }

    /// Writes a group `zarr.json` with `attributes` at `path` only if none is there
    /// ([`Store::set_new`]): the commit of a new store.
    pub fn create_group(&self, path: &str, attributes: JsonObject) -> Result<()> {
        let doc = GroupMetadata::new(attributes);
        self.store.set_new(
            &node_path(path)?.metadata_key(),
            bytes::Bytes::from(doc.to_json_pretty()),
        )?;
        Ok(())
    }

    /// The blob names of an array group: child nodes plus the keys packed in `__shard_*`.
    pub fn blob_names(&self, group: &str) -> Result<Vec<String>> {
        if let Some(grid) = self.grid(group)? {
            return Ok(grid.keys()?.iter().map(ChunkKey::to_string).collect());
        }
        let group = node_path(group)?;
        let children = self.children_at(&group)?;
        let packed = children.iter().any(|c| c.starts_with(SHARD_PREFIX));
        let mut names: Vec<String> = children
            .into_iter()
            .filter(|c| !c.starts_with(SHARD_PREFIX))
            .collect();
        if packed {
            let index = self.shard_index(&group)?;
            for k in index.names() {
                if !names.iter().any(|n| n == k) {
                    names.push(k.to_owned());
                }
            }
        }
        names.sort();
        Ok(names)
    }
}
