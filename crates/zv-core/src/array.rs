//! Zarr v3 arrays: creation, opening, chunk and region I/O.
//!
//! Regions are read and written in C order. Chunks that do not exist read as the fill value;
//! edge chunks are stored whole (padded with the fill value), as Zarr v3 requires. Chunks are
//! independent units: region reads and writes that touch several chunks encode, decode and do
//! I/O for them in parallel (rayon).
//!
//! ```
//! # use std::sync::Arc;
//! # use zv_core::{array::Array, data_type::DataType, grid::Region, metadata::{ArrayMetadata, ExtensionMetadata}, node::NodePath};
//! # fn demo(store: Arc<dyn zv_core::store::Store>) -> zv_core::Result<()> {
//! let meta = ArrayMetadata::new(vec![10, 10], vec![4, 4], DataType::Int32,
//!     vec![ExtensionMetadata::with_configuration("bytes", serde_json::json!({"endian": "little"}))])
//!     .map_err(|e| zv_core::Error::Metadata { key: "zarr.json".into(), source: e })?;
//! let array = Array::create(store, &NodePath::new("/a")?, meta)?;
//! let region = Region::new(vec![2, 3], vec![5, 5]).unwrap();
//! array.store_region_elements(&region, &(0..25).collect::<Vec<i32>>())?;
//! assert_eq!(array.retrieve_region_elements::<i32>(&region)?, (0..25).collect::<Vec<i32>>());
//! # Ok(()) }
//! ```

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;
use rayon::prelude::*;

use crate::codec::{ArrayBytes, ChunkRepresentation, CodecChain, CodecError};
use crate::data_type::{DataType, Element};
use crate::error::{Error, Result};
use crate::grid::{box_runs, Region, RegularGrid};
use crate::key::StoreKey;
use crate::metadata::{
    ArrayMetadata, DeferredAttributes, JsonObject, NodeMetadata, MAX_METADATA_BYTES,
};
use crate::node::NodePath;
use crate::store::Store;

mod read;

/// A Zarr v3 array in a store.
#[derive(Debug, Clone)]
pub struct Array {
    store: Arc<dyn Store>,
    path: NodePath,
    metadata: ArrayMetadata,
    chain: Arc<CodecChain>,
    grid: RegularGrid,
    store_empty_chunks: bool,
    /// The most bytes a stored chunk may hold ([`CodecChain::encoded_size_bound`]).
    chunk_cap: u64,
}

/// Where `part` (the piece of chunk `coords` inside `region`) starts within the chunk and
/// within the region.
fn part_offsets(
    part: &Region,
    coords: &[u64],
    chunk_shape: &[u64],
    region: &Region,
) -> (Vec<u64>, Vec<u64>) {
    let in_chunk = part
        .start()
        .iter()
        .zip(coords)
        .zip(chunk_shape)
        .map(|((s, c), cs)| s - c * cs)
        .collect();
    let in_region = part
        .start()
        .iter()
        .zip(region.start())
        .map(|(s, r)| s - r)
        .collect();
    (in_chunk, in_region)
}

/// Reads and parses the `zarr.json` of the node at `path`; `Ok(None)` if there is none. A
/// document larger than [`MAX_METADATA_BYTES`] is a
/// [`StoreError::TooLarge`](crate::store::StoreError::TooLarge) error naming its key.
pub fn read_node_metadata(store: &dyn Store, path: &NodePath) -> Result<Option<NodeMetadata>> {
    let key = path.metadata_key();
    match store.get_capped(&key, MAX_METADATA_BYTES)? {
        None => Ok(None),
        Some(bytes) => parse_node_metadata(&key, &bytes).map(Some),
    }
}

/// The node metadata in `bytes`, the document read from `key` (a document read ahead of its
/// use is parsed here as [`read_node_metadata`] parses what it reads).
pub fn parse_node_metadata(key: &StoreKey, bytes: &[u8]) -> Result<NodeMetadata> {
    NodeMetadata::from_json(bytes).map_err(|source| Error::Metadata {
        key: key.to_string(),
        source,
    })
}

/// [`read_node_metadata`], leaving the user attributes named in `keys` unparsed
/// ([`NodeMetadata::from_json_deferring`]).
pub fn read_node_metadata_deferring(
    store: &dyn Store,
    path: &NodePath,
    keys: &[&str],
) -> Result<Option<(NodeMetadata, DeferredAttributes)>> {
    let key = path.metadata_key();
    match store.get_capped(&key, MAX_METADATA_BYTES)? {
        None => Ok(None),
        Some(bytes) => parse_node_metadata_deferring(&key, &bytes, keys).map(Some),
    }
}

/// [`parse_node_metadata`], leaving the user attributes named in `keys` unparsed.
pub fn parse_node_metadata_deferring(
    key: &StoreKey,
    bytes: &[u8],
    keys: &[&str],
) -> Result<(NodeMetadata, DeferredAttributes)> {
    NodeMetadata::from_json_deferring(bytes, keys).map_err(|source| Error::Metadata {
        key: key.to_string(),
        source,
    })
}

impl Array {
    /// Builds the array handle from metadata that was already read (no I/O). Builds and checks
    /// the codec pipeline.
    pub fn from_metadata(
        store: Arc<dyn Store>,
        path: &NodePath,
        metadata: ArrayMetadata,
    ) -> Result<Self> {
        let pipeline_err = |source| Error::Pipeline {
            path: path.to_string(),
            source,
        };
        if let Some(t) = metadata
            .storage_transformers
            .iter()
            .find(|t| !t.may_ignore())
        {
            return Err(pipeline_err(CodecError::Unsupported {
                codec: t.name.clone(),
                what: "storage transformers".into(),
            }));
        }
        let repr = ChunkRepresentation::new(
            metadata.chunk_shape().to_vec(),
            metadata.data_type,
            metadata.fill_value.clone(),
        )
        .map_err(pipeline_err)?;
        let chain = CodecChain::from_metadata(&metadata.codecs, &repr).map_err(pipeline_err)?;
        let grid = RegularGrid::new(metadata.shape.clone(), metadata.chunk_shape().to_vec());
        let chunk_cap = chain.encoded_size_bound();
        Ok(Self {
            store,
            path: path.clone(),
            metadata,
            chain: Arc::new(chain),
            grid,
            store_empty_chunks: true,
            chunk_cap,
        })
    }

    /// Creates an array: checks the metadata and its codecs, then writes `zarr.json`
    /// (replacing the document of an array already there; a group there is an error).
    pub fn create(store: Arc<dyn Store>, path: &NodePath, metadata: ArrayMetadata) -> Result<Self> {
        metadata.validate().map_err(|source| Error::Metadata {
            key: path.metadata_key().to_string(),
            source,
        })?;
        if let Some(NodeMetadata::Group(_)) = read_node_metadata(store.as_ref(), path)? {
            return Err(Error::NodeKind {
                path: path.to_string(),
                expected: "array",
                actual: "group",
            });
        }
        let array = Self::from_metadata(store, path, metadata)?;
        array.store_metadata()?;
        Ok(array)
    }

    /// Opens the array at `path`.
    pub fn open(store: Arc<dyn Store>, path: &NodePath) -> Result<Self> {
        match read_node_metadata(store.as_ref(), path)? {
            Some(NodeMetadata::Array(meta)) => Self::from_metadata(store, path, meta),
            Some(NodeMetadata::Group(_)) => Err(Error::NodeKind {
                path: path.to_string(),
                expected: "array",
                actual: "group",
            }),
            None => Err(Error::NodeNotFound {
                path: path.to_string(),
                key: path.metadata_key().to_string(),
            }),
        }
    }

    /// Writes the array's `zarr.json` (pretty-printed, atomically). [`Array::create`] does this
    /// first; a caller that built the handle with [`Array::from_metadata`] can store its
    /// chunks first and the document last, so that no reader sees metadata without data.
    pub fn store_metadata(&self) -> Result<()> {
        let doc = self.metadata.to_json_pretty();
        self.store
            .set(&self.path.metadata_key(), Bytes::from(doc))?;
        Ok(())
    }

    /// The node path.
    pub fn path(&self) -> &NodePath {
        &self.path
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// The metadata.
    pub fn metadata(&self) -> &ArrayMetadata {
        &self.metadata
    }

    /// The array shape.
    pub fn shape(&self) -> &[u64] {
        &self.metadata.shape
    }

    /// The data type.
    pub fn data_type(&self) -> DataType {
        self.metadata.data_type
    }

    /// The chunk grid.
    pub fn grid(&self) -> &RegularGrid {
        &self.grid
    }

    /// The codec pipeline.
    pub fn codec_chain(&self) -> &CodecChain {
        &self.chain
    }

    /// Whether chunks that hold only the fill value are written (`true`, the default) or
    /// deleted (`false`).
    pub fn set_store_empty_chunks(&mut self, store: bool) {
        self.store_empty_chunks = store;
    }

    /// Replaces the user attributes and rewrites `zarr.json` atomically.
    pub fn set_attributes(&mut self, attributes: JsonObject) -> Result<()> {
        self.metadata.attributes = attributes;
        self.store_metadata()
    }

    /// The store key of chunk `coords`.
    pub fn chunk_key(&self, coords: &[u64]) -> Result<StoreKey> {
        Ok(self
            .path
            .key(&self.metadata.chunk_key_encoding.encode(coords))?)
    }

    fn check_coords(&self, coords: &[u64]) -> Result<()> {
        if !self.grid.contains_chunk(coords) {
            return Err(Error::InvalidInput {
                path: self.path.to_string(),
                reason: format!(
                    "chunk {coords:?} is outside the chunk grid {:?}",
                    self.grid.grid_shape()
                ),
            });
        }
        Ok(())
    }

    fn region_err(&self, source: crate::grid::RegionError) -> Error {
        Error::Region {
            path: self.path.to_string(),
            source,
        }
    }

    /// The stored (encoded) bytes of chunk `coords`, or `None` if it does not exist. A stored
    /// value larger than the codecs allow ([`Array::chunk_cap`]) is a
    /// [`StoreError::TooLarge`](crate::store::StoreError::TooLarge) error naming its key,
    /// refused before it is read where the store knows sizes.
    pub fn retrieve_encoded_chunk(&self, coords: &[u64]) -> Result<Option<Bytes>> {
        self.check_coords(coords)?;
        Ok(self
            .store
            .get_capped(&self.chunk_key(coords)?, self.chunk_cap)?)
    }

    /// Decodes `encoded`, the stored bytes of chunk `coords` ([`Array::retrieve_encoded_chunk`]):
    /// what [`Array::retrieve_chunk_if_exists`] does after its read, for a caller that reads
    /// and decodes at different moments (holding a lock only around the read, say).
    pub fn decode_encoded_chunk(
        &self,
        coords: &[u64],
        encoded: Bytes,
    ) -> Result<ArrayBytes<'static>> {
        let key = self.chunk_key(coords)?;
        self.decode_chunk(&key, encoded)
    }

    /// The elements of `region` (coordinates within chunk `coords`) decoded from `encoded`,
    /// the chunk's stored bytes, touching only the byte ranges the codecs need (a shard's
    /// index and the inner chunks the region meets); codecs that cannot decode part decode
    /// the whole.
    pub fn decode_encoded_part(
        &self,
        coords: &[u64],
        encoded: &Bytes,
        region: &Region,
    ) -> Result<ArrayBytes<'static>> {
        let key = self.chunk_key(coords)?;
        let chunk_err = |source| Error::Chunk {
            key: key.to_string(),
            source,
        };
        self.chain
            .partial_decode(&crate::codec::BytesChunkReader::new(encoded), region)
            .map_err(chunk_err)?
            .ok_or_else(|| {
                chunk_err(crate::codec::CodecError::corrupt(
                    "partial read",
                    "the chunk's bytes vanished",
                ))
            })
    }

    /// The most bytes a stored chunk of this array may hold: the exact encoded size where
    /// the codecs know it, else a generous bound ([`CodecChain::encoded_size_bound`]).
    pub fn chunk_cap(&self) -> u64 {
        self.chunk_cap
    }

    /// Decodes stored chunk bytes (`key` names the chunk in errors).
    fn decode_chunk(&self, key: &StoreKey, encoded: Bytes) -> Result<ArrayBytes<'static>> {
        // A buffer the store handed over whole becomes the decoded chunk without a copy where
        // the codecs leave the bytes as stored; a shared one (the store may reuse it) is
        // decoded from where it is, and copied only if the codecs leave the bytes as stored.
        let decoded = if encoded.is_unique() {
            self.chain.decode(Cow::Owned(encoded.into()))
        } else {
            self.chain.decode(Cow::Borrowed(&encoded))
        };
        decoded
            .map(ArrayBytes::into_owned)
            .map_err(|source| Error::Chunk {
                key: key.to_string(),
                source,
            })
    }

    /// The decoded elements of chunk `coords` (the whole chunk, edge padding included), or
    /// `None` if the chunk is not stored. One store read.
    pub fn retrieve_chunk_if_exists(&self, coords: &[u64]) -> Result<Option<ArrayBytes<'static>>> {
        self.check_coords(coords)?;
        let key = self.chunk_key(coords)?;
        match self.store.get_capped(&key, self.chunk_cap)? {
            Some(bytes) => self.decode_chunk(&key, bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The decoded elements of chunk `coords` (the whole chunk, edge padding included); a
    /// missing chunk reads as the fill value.
    pub fn retrieve_chunk(&self, coords: &[u64]) -> Result<ArrayBytes<'static>> {
        match self.retrieve_chunk_if_exists(coords)? {
            Some(chunk) => Ok(chunk),
            None => {
                let key = self.chunk_key(coords)?;
                ArrayBytes::fill(self.chain.decoded_representation()).map_err(|source| {
                    Error::Chunk {
                        key: key.to_string(),
                        source,
                    }
                })
            }
        }
    }

    /// The grid coordinates of the chunks stored in the store, in C order, found with one
    /// listing of the array's prefix (keys that are not chunk keys of this array, or lie
    /// outside its grid, are ignored). For a large, sparse array this is far cheaper than a
    /// read per chunk of the grid.
    pub fn stored_chunks(&self) -> Result<Vec<Vec<u64>>> {
        let prefix = self.path.prefix();
        let ndim = self.metadata.shape.len();
        let mut out: Vec<Vec<u64>> = self
            .store
            .list_prefix(&prefix)?
            .iter()
            .filter_map(|key| {
                let relative = key.as_str().get(prefix.as_str().len()..)?;
                let coords = self.metadata.chunk_key_encoding.decode(relative, ndim)?;
                self.grid.contains_chunk(&coords).then_some(coords)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Encodes and stores chunk `coords` (the whole chunk, edge padding included). If empty
    /// chunks are not stored and `data` is all fill value, the chunk is deleted instead.
    pub fn store_chunk(&self, coords: &[u64], data: ArrayBytes<'_>) -> Result<()> {
        self.check_coords(coords)?;
        let key = self.chunk_key(coords)?;
        let repr = self.chain.decoded_representation();
        if !self.store_empty_chunks && data.is_fill(repr) {
            self.store.delete(&key)?;
            return Ok(());
        }
        let encoded = self.chain.encode(data).map_err(|source| Error::Chunk {
            key: key.to_string(),
            source,
        })?;
        self.store.set(&key, Bytes::from(encoded.into_owned()))?;
        Ok(())
    }

    /// Stores chunk `coords` given as its array→bytes encoding
    /// ([`CodecChain::encode_serialized`]: the caller answers for the bytes; only the
    /// bytes→bytes codecs run). Always stored, even when it holds only the fill value.
    pub fn store_serialized_chunk(&self, coords: &[u64], serialized: Vec<u8>) -> Result<()> {
        self.check_coords(coords)?;
        let key = self.chunk_key(coords)?;
        let encoded = self
            .chain
            .encode_serialized(Cow::Owned(serialized))
            .map_err(|source| Error::Chunk {
                key: key.to_string(),
                source,
            })?;
        self.store.set(&key, Bytes::from(encoded.into_owned()))?;
        Ok(())
    }

    /// Deletes chunk `coords` (it then reads as the fill value).
    pub fn erase_chunk(&self, coords: &[u64]) -> Result<()> {
        self.check_coords(coords)?;
        self.store.delete(&self.chunk_key(coords)?)?;
        Ok(())
    }

    /// Writes the elements of `region` (C order). Chunks only partly covered are read,
    /// updated and written back; chunks are processed in parallel.
    pub fn store_region(&self, region: &Region, data: ArrayBytes<'_>) -> Result<()> {
        region
            .check_within(self.shape())
            .map_err(|e| self.region_err(e))?;
        let repr = ChunkRepresentation::new(
            region.shape().to_vec(),
            self.data_type(),
            self.metadata.fill_value.clone(),
        )
        .map_err(|source| Error::Pipeline {
            path: self.path.to_string(),
            source,
        })?;
        data.validate(&repr).map_err(|e| Error::InvalidInput {
            path: self.path.to_string(),
            reason: format!("data for region {region}: {e}"),
        })?;
        self.grid
            .chunks_in(region)
            .par_bridge()
            .try_for_each(|coords| self.store_region_chunk(&coords, region, &data))
    }

    fn store_region_chunk(
        &self,
        coords: &[u64],
        region: &Region,
        data: &ArrayBytes<'_>,
    ) -> Result<()> {
        let chunk_shape = self.grid.chunk_shape().to_vec();
        let in_array = self.grid.chunk_region(coords);
        let covered = match (&in_array, region.ndim()) {
            (_, 0) => true,
            (Some(r), _) => r.intersect(region).as_ref() == Some(r),
            (None, _) => false,
        };
        let repr = self.chain.decoded_representation();
        let mut chunk = if covered {
            ArrayBytes::fill(repr).map_err(|source| Error::Pipeline {
                path: self.path.to_string(),
                source,
            })?
        } else {
            self.retrieve_chunk(coords)?
        };
        let part = |c: &[u64]| {
            self.grid
                .chunk_region(c)
                .and_then(|r| r.intersect(region))
                .or_else(|| (region.ndim() == 0).then(|| Region::whole(&[])))
        };
        let Some(part) = part(coords) else {
            return Ok(());
        };
        let (in_chunk, in_region) = part_offsets(&part, coords, &chunk_shape, region);
        let runs = box_runs(
            region.shape(),
            &in_region,
            &chunk_shape,
            &in_chunk,
            part.shape(),
        );
        let bad = || Error::InvalidInput {
            path: self.path.to_string(),
            reason: format!("chunk {coords:?}: buffer sizes do not match the chunk shape"),
        };
        match (&mut chunk, data) {
            (ArrayBytes::Fixed(dst), ArrayBytes::Fixed(src)) => {
                let es = self.data_type().size().unwrap_or(1);
                let dst = dst.to_mut();
                for (so, doff, len) in runs {
                    let (s, d, l) = (so * es, doff * es, len * es);
                    let from = src.get(s..s + l).ok_or_else(bad)?;
                    dst.get_mut(d..d + l).ok_or_else(bad)?.copy_from_slice(from);
                }
            }
            (ArrayBytes::Variable { .. }, ArrayBytes::Variable { .. }) => {
                let n = repr.num_elements_usize();
                let mut elements: Vec<Vec<u8>> = (0..n)
                    .map(|i| chunk.element(i).map(<[u8]>::to_vec).unwrap_or_default())
                    .collect();
                for (so, doff, len) in runs {
                    for i in 0..len {
                        let e = data.element(so + i).ok_or_else(bad)?;
                        *elements.get_mut(doff + i).ok_or_else(bad)? = e.to_vec();
                    }
                }
                chunk = ArrayBytes::from_elements(elements);
            }
            _ => return Err(bad()),
        }
        self.store_chunk(coords, chunk)
    }

    /// The elements of `region` as Rust values (`T` must match the data type).
    pub fn retrieve_region_elements<T: Element>(&self, region: &Region) -> Result<Vec<T>> {
        self.check_element_type::<T>()?;
        let ArrayBytes::Fixed(bytes) = self.retrieve_region(region)? else {
            return Err(self.element_type_err::<T>());
        };
        let size = std::mem::size_of::<T>();
        Ok(bytes.chunks_exact(size).map(T::read_ne).collect())
    }

    /// Writes `values` (C order) to `region` (`T` must match the data type).
    pub fn store_region_elements<T: Element>(&self, region: &Region, values: &[T]) -> Result<()> {
        self.check_element_type::<T>()?;
        let mut bytes = Vec::with_capacity(std::mem::size_of_val(values));
        for v in values {
            v.write_ne(&mut bytes);
        }
        self.store_region(region, ArrayBytes::Fixed(Cow::Owned(bytes)))
    }

    fn check_element_type<T: Element>(&self) -> Result<()> {
        if T::DATA_TYPES.contains(&self.data_type())
            && self.data_type().size() == Some(std::mem::size_of::<T>())
        {
            Ok(())
        } else {
            Err(self.element_type_err::<T>())
        }
    }

    fn element_type_err<T: Element>(&self) -> Error {
        Error::InvalidInput {
            path: self.path.to_string(),
            reason: format!(
                "Rust type {} does not hold elements of {}",
                std::any::type_name::<T>(),
                self.data_type()
            ),
        }
    }
}
