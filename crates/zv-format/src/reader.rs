//! Reading ZV 0.7 stores: by level, chunk, object, group and bounding box.
//!
//! [`ZvStore::open`] reads the root metadata and finds the levels by listing; [`Level`] reads
//! the blobs of one level. Everything follows "read liberally" (`docs/format-decisions.md`):
//! intermediate groups without `zarr.json`, compact or pretty JSON, mixed codecs, empty
//! `link_fragments` attributes, polyline cross-chunk records with placeholder rows and
//! `__shard_*` packs are all accepted. Every failure is an [`Error`] naming the key; a corrupt
//! blob never panics.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::reader::ZvStore;
//! use zv_format::writer::{WriterOptions, ZvWriter};
//! use zv_format::Geometry;
//! // a small graph, written in memory: object 0 has three vertices in two chunks, object 1 one
//! let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
//! let options = WriterOptions::new(Geometry::Graph, vec![10.0, 10.0, 10.0]);
//! let mut w = ZvWriter::create(store.clone(), options)?;
//! let points = [[1.0, 1.0, 1.0], [12.0, 1.0, 1.0], [2.0, 5.0, 1.0], [30.0, 30.0, 30.0]];
//! let points: Vec<Vec<f64>> = points.iter().map(|p| p.to_vec()).collect();
//! w.add_vertices(&points, Some(&[0, 0, 0, 1]), &Default::default())?;
//! w.add_edges(&[[0, 1], [0, 2]], &Default::default())?;
//! w.finish()?;
//!
//! let level = ZvStore::open(store)?.level(0)?;
//! let object = level.object(0)?;                  // vertices in manifest order, links
//! assert_eq!(object.vertices.len(), object.rows.len());
//! assert_eq!(object.links.map(|l| l.len()), Some(2)); // one edge crosses chunks
//! let hits = level.query_box(&[0.0; 3], &[9.0; 3])?; // only intersecting chunks are read
//! assert_eq!(hits.positions.len(), 2);
//! assert_eq!(hits.positions[1], [2.0, 5.0, 1.0]);   // a row is a `&[f64]` of the flat buffer
//! let all = level.points(&[])?;                       // every chunk read once
//! assert_eq!((all.len(), all.rows.keys().len()), (4, 3)); // 4 points from 3 chunks
//! # Ok(()) }
//! ```
//!
//! Results are columnar ([`Points`], [`Object`]): positions in one flat `f64` buffer
//! ([`Positions`]), the `(chunk, row)` of each point as a shared chunk table plus a chunk index
//! and a row per point ([`ChunkRefs`]), attributes as row-aligned columns. A [`Level`] reads
//! its level-wide arrays and array group documents once (module `cache`).
//!
//! The submodules hold one concept each, as `impl Level` blocks where they read a level:
//! chunk arrays, attributes, the object index, cross-chunk links, link numbering, skeleton
//! parents, objects (gathered chunk by chunk), whole-level points, box queries, whole-level
//! scans and consistency checks.

use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;

use crate::blob::{join, Blobs};
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::LayoutError;
use crate::metadata::arrays::{FragmentIndexArray, VerticesArray};
use crate::metadata::{JsonObject, LevelMetadata, RootMetadata};
use crate::names;

mod attribute_info;
mod box_query;
mod cache;
mod chunk_arrays;
mod columns;
mod consistency;
mod cross_chunk;
mod dense_attributes;
mod gather;
pub(crate) mod level_scan;
pub(crate) mod links;
mod lod;
mod object_index;
mod objects;
mod points;
mod positions;
mod raw_index;
pub(crate) mod skeleton;
mod v09;
mod vertices;

pub use attribute_info::AttributeInfo;
pub use box_query::BoxHits;
pub use chunk_arrays::Chunk;
pub use columns::PointColumns;
pub use consistency::Deltas;
pub use cross_chunk::{CrossChunk, RecordVisitor};
pub use dense_attributes::DenseAttribute;
pub use lod::VertexRef;
pub use object_index::ObjectIndex;
pub use objects::Object;
pub use points::Points;
pub use positions::{ChunkRefs, Positions};
pub(crate) use raw_index::RawIndex;
pub use skeleton::chunk_parents;
pub use vertices::Vertices;

/// An opened ZV store.
#[derive(Debug, Clone)]
pub struct ZvStore {
    blobs: Arc<Blobs>,
    root: Arc<RootMetadata>,
    root_attributes: JsonObject,
    level_ids: Vec<u32>,
}

impl ZvStore {
    /// Opens the ZV store at the root of `store`: reads the root `zarr.json` and lists the
    /// level groups (children named by integers), both at once. A store that cannot list
    /// (plain HTTP) takes the levels the root's NGFF `multiscales` datasets name.
    pub fn open(store: Arc<dyn Store>) -> Result<Self> {
        crate::link_plugins();
        let probe = Blobs::new(store.clone());
        // on an object store, level 0's documents are read with the root's (module
        // `blob::early`): opening level 0 then waits on no request. The four requests go
        // out together from the store's pool (the caller's may have fewer threads).
        let ((root_attributes, children), early) =
            crate::io_pool::with_store(store.as_ref(), || {
                crate::io_pool::join_requests(
                    store.as_ref(),
                    || {
                        crate::io_pool::join_requests(
                            store.as_ref(),
                            || probe.group_attributes(""),
                            || probe.children(""),
                        )
                    },
                    || crate::blob::read_ahead(store.as_ref()),
                )
            });
        let root_attributes = root_attributes?.ok_or_else(|| Error::Missing {
            key: "zarr.json".into(),
            what: "root group (not a Zarr v3 hierarchy)".into(),
        })?;
        let root = RootMetadata::from_attributes(&root_attributes, "zarr.json")?;
        let blobs = Blobs::with_layout(store, root.layout());
        blobs.keep_early(early);
        let children = match children {
            Err(Error::Store(zv_core::store::StoreError::Unsupported { .. })) => {
                root.datasets.iter().map(|d| d.path.clone()).collect()
            }
            other => other?,
        };
        let mut level_ids: Vec<u32> = children
            .iter()
            .filter(|c| is_level_name(c))
            .filter_map(|c| c.parse().ok())
            .collect();
        level_ids.sort_unstable();
        level_ids.dedup();
        if level_ids.is_empty() {
            return Err(Error::Missing {
                key: "0/zarr.json".into(),
                what: "level 0 (the store has no level groups)".into(),
            });
        }
        Ok(Self {
            blobs: Arc::new(blobs),
            root: Arc::new(root),
            root_attributes,
            level_ids,
        })
    }

    /// Opens a store by URL or path (`file://…`, a plain path, `memory://…`).
    pub fn open_url(url: &str) -> Result<Self> {
        crate::link_plugins();
        Self::open(zv_core::plugin::open_store(url)?)
    }

    /// The root metadata.
    pub fn root(&self) -> &RootMetadata {
        &self.root
    }

    /// The root group's attributes, verbatim.
    pub fn root_attributes(&self) -> &JsonObject {
        &self.root_attributes
    }

    /// The levels present, ascending.
    pub fn level_ids(&self) -> &[u32] {
        &self.level_ids
    }

    /// The store's geometry (`geometry_types[0]`, point cloud if none).
    pub fn geometry(&self) -> Geometry {
        self.root
            .geometry_types
            .first()
            .map_or(Geometry::PointCloud, |g| Geometry::parse(g))
    }

    /// The blob reader.
    pub fn blobs(&self) -> &Arc<Blobs> {
        &self.blobs
    }

    /// Opens level `id`.
    pub fn level(&self, id: u32) -> Result<Level> {
        if !self.level_ids.contains(&id) {
            return Err(Error::Missing {
                key: format!("{id}/zarr.json"),
                what: format!("level {id} (levels: {:?})", self.level_ids),
            });
        }
        Level::open(self.blobs.clone(), self.root.clone(), id, self.geometry())
    }
}

/// Whether a root child is a level group (named by a non-negative integer).
pub(crate) fn is_level_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

/// Parses a delta folder name: `"0"`, `"+N"`, `"-N"` (a leading `+` is required).
pub fn parse_delta(name: &str) -> Option<i32> {
    if name == "0" {
        return Some(0);
    }
    let (sign, digits) = match name.as_bytes().first()? {
        b'+' => (1, &name[1..]),
        b'-' => (-1, &name[1..]),
        _ => return None,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
        return None;
    }
    digits.parse::<i32>().ok().map(|d| sign * d)
}

/// The folder name of a delta.
pub fn delta_name(delta: i32) -> String {
    if delta > 0 {
        format!("+{delta}")
    } else {
        delta.to_string()
    }
}

/// Wraps a layout error as a blob error naming `key`.
pub(crate) fn blob_err(key: String) -> impl FnOnce(LayoutError) -> Error {
    move |source| Error::Blob { key, source }
}

/// One level of a store.
#[derive(Debug, Clone)]
pub struct Level {
    blobs: Arc<Blobs>,
    root: Arc<RootMetadata>,
    id: u32,
    path: String,
    metadata: LevelMetadata,
    attributes: JsonObject,
    vertex_type: DataType,
    geometry: Geometry,
    key_arity: usize,
    /// What the level reads once, shared by its clones.
    cache: Arc<cache::LevelCache>,
}

impl Level {
    /// Runs `f`, whose parallel loops read this level's chunks, with as many requests in
    /// flight as the store wants (module `io_pool`).
    pub(crate) fn with_store_pool<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        crate::io_pool::with_store_reads(self.blobs.store().as_ref(), f)
    }

    /// How many requests the store wants in flight
    /// ([`zv_core::store::ReadableStore::concurrency`]).
    pub(crate) fn store_concurrency(&self) -> usize {
        self.blobs.store().concurrency()
    }

    fn open(
        blobs: Arc<Blobs>,
        root: Arc<RootMetadata>,
        id: u32,
        geometry: Geometry,
    ) -> Result<Self> {
        let path = id.to_string();
        let vertices = join(&[&path, names::VERTICES]);
        // the level's document and its vertices' at once (two requests in flight, not one
        // after the other, on an object store)
        let (attributes, vattrs) = crate::io_pool::join_requests(
            blobs.store().as_ref(),
            || blobs.group_attributes(&path),
            || blobs.group_attributes(&vertices),
        );
        let attributes = attributes?.unwrap_or_default();
        let metadata =
            LevelMetadata::from_attributes(&attributes, id, &root, &join(&[&path, "zarr.json"]))?;
        let vkey = join(&[&vertices, "zarr.json"]);
        let vattrs = vattrs?.unwrap_or_default();
        let vertex_type = VerticesArray::from_attributes(&vattrs, &vkey)?.dtype;
        let key_arity = metadata.key_arity(&root);
        Ok(Self {
            blobs,
            root,
            id,
            path,
            metadata,
            attributes,
            vertex_type,
            geometry,
            key_arity,
            cache: Arc::default(),
        })
    }

    /// The level number.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The parsed level metadata.
    pub fn metadata(&self) -> &LevelMetadata {
        &self.metadata
    }

    /// The level group's attributes, verbatim.
    pub fn attributes(&self) -> &JsonObject {
        &self.attributes
    }

    /// The root metadata.
    pub fn root(&self) -> &RootMetadata {
        &self.root
    }

    /// The store's geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The vertex data type.
    pub fn vertex_type(&self) -> DataType {
        self.vertex_type
    }

    /// The level's chunk shape.
    pub fn chunk_shape(&self) -> Vec<f64> {
        self.metadata.effective_chunk_shape(&self.root)
    }

    /// The level's bin shape.
    pub fn bin_shape(&self) -> Vec<f64> {
        self.metadata.effective_bin_shape(&self.root)
    }

    /// The blob reader.
    pub fn blobs(&self) -> &Arc<Blobs> {
        &self.blobs
    }

    /// How the store lays out per-chunk arrays (ZV 0.7 nodes or ZV 0.9 chunk grids).
    pub(crate) fn layout(&self) -> crate::metadata::Layout {
        self.blobs.layout()
    }

    /// In a ZV 0.9 level whose cells are packed in shards, the shard shape (chunks per
    /// stored object) of its `vertices`; `None` otherwise.
    pub fn shard_shape(&self) -> Result<Option<Vec<u64>>> {
        Ok(self
            .blobs
            .grid(&self.p(&[names::VERTICES]))?
            .and_then(|g| g.shard_shape()))
    }

    /// The store path of `parts` inside this level.
    pub(crate) fn p(&self, parts: &[&str]) -> String {
        let mut all = vec![self.path.as_str()];
        all.extend_from_slice(parts);
        join(&all)
    }

    /// The names of the child folders of an array group (attribute names, deltas, …).
    pub fn children_of(&self, array: &str) -> Result<Vec<String>> {
        self.blobs.children(&self.p(&[array]))
    }

    /// Whether the level has a `vertex_fragments` array (checked once, with its group
    /// document: an `encoding` other than `fragment_index_v1` is an error).
    pub(crate) fn has_fragment_array(&self) -> Result<bool> {
        self.cache
            .has_fragment_array
            .get_or_make(|| self.fragment_array(names::VERTEX_FRAGMENTS))
    }

    /// Whether the level has a `link_fragments` array (checked once, as
    /// [`Level::has_fragment_array`]).
    pub(crate) fn has_link_fragment_array(&self) -> Result<bool> {
        self.cache
            .has_link_fragment_array
            .get_or_make(|| self.fragment_array(names::LINK_FRAGMENTS))
    }

    /// Whether the fragment index array `array` exists; its group document, if any, must
    /// read as a fragment index group.
    fn fragment_array(&self, array: &str) -> Result<bool> {
        let group = self.p(&[array]);
        if let Some(attributes) = self.blobs.group_attributes(&group)? {
            FragmentIndexArray::from_attributes(&attributes, &join(&[&group, "zarr.json"]))?;
            return Ok(true);
        }
        self.blobs.exists(&group)
    }

    /// Whether the level has an `object_index` array (checked once).
    pub(crate) fn has_object_index(&self) -> Result<bool> {
        self.cache
            .has_object_index
            .get_or_make(|| self.blobs.exists(&self.p(&[names::OBJECT_INDEX])))
    }

    /// The deltas of the folders of `array` (`links`, `cross_chunk_links`), ascending.
    fn deltas_of(&self, array: &str) -> Result<Vec<i32>> {
        let mut d: Vec<i32> = self
            .children_of(array)?
            .iter()
            .filter_map(|n| parse_delta(n))
            .collect();
        d.sort_unstable();
        Ok(d)
    }
}
