//! Writing ZV stores in the "zv-0.7 spec profile" (`docs/format-decisions.md`, "Write one
//! profile").
//!
//! [`ZvWriter`] takes geometry in batches of any size: vertex rows (with object ids and vertex
//! attributes, [`ZvWriter::add_vertices_flat`]), polylines ([`ZvWriter::add_polylines_flat`]),
//! edges, faces. Each batch is checked whole, then each vertex becomes a record of its chunk
//! (its fragment key, its global index, its stored coordinates and attribute cells: 16 bytes
//! plus the stored row), with no allocation per vertex. Records are held in memory per chunk
//! up to [`WriterOptions::memory_budget`] (1 GiB by default); past it, every record held is
//! spilled to a temporary file per chunk, and so again each time the budget fills, so that a
//! dataset of any size streams through in bounded memory. The budget decides where records
//! wait, never what is written: the store is the same byte for byte. What is kept in memory
//! besides, and so grows with the dataset:
//!
//! - connectivity: 16 bytes per edge, 8 per face corner, plus the link attribute values;
//!   skeletons also 8 bytes per vertex (its object);
//! - polylines: 8 bytes per piece (a run of a polyline inside one bin), 16 per chunk crossing
//!   and 8 per polyline.
//!
//! During [`ZvWriter::finish`], linked geometries add 8 bytes per vertex (its chunk and row),
//! skeletons 24 more (DFS order) and 16 per intra-chunk link; one chunk's spilled records are
//! read at a time per thread; and the level-global blobs — the object index, the cross-chunk
//! links (`8·link_width·(ndim+1)` bytes per record) and the dense attributes — are built
//! whole, as they are single blobs.
//!
//! Nothing is written to the store before [`ZvWriter::finish`], which validates everything
//! first; then the chunk blobs are sorted, encoded and written in parallel (rayon) while the
//! object index is built (in parallel, per block of objects) and written beside them; then
//! the links, cross-chunk links and the group documents. Chunk-keyed tables use FxHash, and a
//! dense table when the bounds are fixed.
//!
//! **Durability at commit.** The file-system store does not sync per file
//! (`zv_store_fs::Durability::Commit`); instead [`ZvWriter::finish`] commits: it writes the
//! level document, syncs the store (every blob and document written so far becomes durable at
//! once, one `syncfs` on the file-system store), writes the root `zarr.json` — last: a store
//! without it does not open as a ZV store, so a write that failed or was abandoned leaves no
//! store that opens — and syncs again.
//!
//! A whole [`GeometryDocument`](crate::document::GeometryDocument) is written by
//! [`crate::import::write_document`].
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::{Geometry, ZvStore};
//! use zv_format::writer::{WriterOptions, ZvWriter};
//! let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
//! let mut w = ZvWriter::create(store.clone(), WriterOptions::new(Geometry::Graph, vec![10.0, 10.0, 10.0]))?;
//! w.add_vertices(&[vec![1.0, 1.0, 1.0], vec![12.0, 1.0, 1.0], vec![2.0, 5.0, 1.0]], None, &Default::default())?;
//! w.add_edges(&[[0, 1], [0, 2]], &Default::default())?;
//! w.finish()?;
//! let level = ZvStore::open(store)?.level(0)?;
//! let graph = level.object(0)?;
//! assert_eq!(graph.vertices.len(), 3);
//! assert_eq!(graph.links.unwrap().len(), 2);   // one edge crosses chunks
//! # Ok(()) }
//! ```

mod checks;
mod chunk_blobs;
mod columns;
mod documents;
mod ingest;
mod link_ids;
mod links;
pub(crate) use links::vertex_set;
mod lock;
mod lookup;
mod objects;
mod options;
mod part;
mod part_pieces;
mod placement;
mod places;
mod polylines;
mod skeleton;
mod spill;
mod v09;
mod vertices;

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::metadata::ExtensionMetadata;
use zv_core::store::Store;

use crate::blob::Blobs;
use crate::document::Attribute;
use crate::error::{AttributeKind, Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;

pub use checks::SPARE_OBJECTS;
pub use lock::LOCK_KEY;
pub use options::{
    CodecChoice, Compression, FormatVersion, OutOfBounds, WriteSummary, WriterOptions,
    DEFAULT_MEMORY_BUDGET, MAX_BINS_PER_CHUNK,
};
pub use placement::COORDINATE_LIMIT;
pub(crate) use places::Places;

use chunk_blobs::ChunkBlobs;
use columns::Columns;
use links::Connectivity;
pub(crate) use part::Owner;
use placement::{Extent, Grid};
use polylines::Polylines;
use spill::Spill;
pub(crate) use vertices::check_id_count;

/// The level a new store's writer writes.
const LEVEL: &str = "0";
/// The level delta of links within the level (`links/0`, …).
const SAME_LEVEL: &str = "0";

/// What a writer's commit writes.
#[derive(Debug)]
enum Target {
    /// Level 0 and the root document of a new store.
    Store,
    /// One coarser level of an existing store, whose level document adds these fields.
    Level(serde_json::Map<String, serde_json::Value>),
}

/// An input error with no single place to name.
fn bad(reason: impl Into<String>) -> Error {
    Error::InvalidInput(reason.into())
}

/// The streaming writer. See the [module docs](self).
pub struct ZvWriter {
    blobs: Blobs,
    /// The name of the level written (`"0"` for a new store).
    level: String,
    /// What the commit writes: a new store's level 0 and root, or one pyramid level.
    target: Target,
    opts: WriterOptions,
    grid: Grid,
    extent: Extent,
    spill: Spill,
    /// The vertex attribute columns.
    columns: Columns,
    n_vertices: u64,
    /// Whether vertices come with object ids (fixed by the first batch that says).
    objects_given: Option<bool>,
    max_object: Option<u64>,
    /// Skeletons: the object of each vertex (for validation).
    vertex_object: Vec<u64>,
    links: Connectivity,
    polylines: Polylines,
    /// The number of objects asked for with [`ZvWriter::set_num_objects`].
    num_objects_hint: u64,
    object_attributes: BTreeMap<String, Attribute>,
    fragment_attributes: BTreeMap<String, Attribute>,
    groups: BTreeMap<u64, Vec<u64>>,
    group_attributes: BTreeMap<String, Attribute>,
    /// The part of a distributed write this writer writes ([`crate::parts`]), if any.
    owner: Option<part::Owner>,
    /// A new store's claim against other writers (`lock`), let go when the writer drops:
    /// after the commit, or without one.
    lock: Option<lock::WriterLock>,
}

impl std::fmt::Debug for ZvWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZvWriter")
            .field("geometry", &self.opts.geometry)
            .field("vertices", &self.n_vertices)
            .field("chunks", &self.spill.keys().len())
            .finish()
    }
}

impl ZvWriter {
    /// Starts a new store in `store`, which must not already hold a root `zarr.json`.
    pub fn create(store: Arc<dyn Store>, options: WriterOptions) -> Result<Self> {
        crate::link_plugins();
        options.validate()?;
        // claimed first, then checked: a writer that committed here before the claim has left
        // its root document (it lets go of the claim after it)
        let lock = lock::WriterLock::acquire(store.clone())?;
        let mut writer = Self::create_unclaimed(store, options)?;
        writer.lock = Some(lock);
        Ok(writer)
    }

    /// [`ZvWriter::create`] without claiming the store: the parts of a distributed write
    /// ([`crate::parts`]), which write one store together by their own protocol.
    pub(crate) fn create_unclaimed(store: Arc<dyn Store>, options: WriterOptions) -> Result<Self> {
        crate::link_plugins();
        options.validate()?;
        let blobs = Blobs::new(store);
        if blobs.node("")?.is_some() {
            return Err(bad(
                "the store already holds a root zarr.json (write into an empty store)",
            ));
        }
        Ok(Self::new(blobs, LEVEL.to_owned(), Target::Store, options))
    }

    /// A writer of the coarser level `level` of an existing store (the pyramid builder): its
    /// level document gets `document`'s fields beside `vertex_count` and `arrays_present`, the
    /// root document is left to the builder, and where every vertex went is kept
    /// ([`ZvWriter::finish_level`]). The level must not exist yet.
    pub(crate) fn for_level(
        store: Arc<dyn Store>,
        options: WriterOptions,
        level: u32,
        document: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Self> {
        crate::link_plugins();
        options.validate()?;
        let blobs = Blobs::new(store);
        let name = level.to_string();
        if blobs.node(&name)?.is_some() {
            return Err(bad(format!("the store already holds level {name}")));
        }
        Ok(Self::new(blobs, name, Target::Level(document), options))
    }

    /// The writer of `level` (see [`ZvWriter::create`] and [`ZvWriter::for_level`]).
    fn new(blobs: Blobs, level: String, target: Target, options: WriterOptions) -> Self {
        Self {
            blobs,
            level,
            target,
            grid: Grid::new(&options),
            extent: Extent::new(&options),
            spill: Spill::new(Grid::new(&options).lookup(&options), options.memory_budget),
            columns: Columns::new(AttributeKind::Vertex),
            n_vertices: 0,
            objects_given: None,
            max_object: None,
            vertex_object: Vec::new(),
            links: Connectivity::new(options.geometry == Geometry::Mesh),
            polylines: Polylines::default(),
            num_objects_hint: 0,
            object_attributes: BTreeMap::new(),
            fragment_attributes: BTreeMap::new(),
            groups: BTreeMap::new(),
            group_attributes: BTreeMap::new(),
            owner: None,
            lock: None,
            opts: options,
        }
    }

    /// Adds vertex rows (point clouds, graphs, skeletons, meshes) with their object ids
    /// (`None`: no objects for point clouds, object 0 otherwise) and vertex attributes (one
    /// row per vertex). Returns the global index of the first vertex (edges and faces refer to
    /// vertices by global index, in the order they were added). The whole batch is checked
    /// before any of it is kept: a refused batch changes nothing. The first batch with rows
    /// fixes the vertex attribute schema, and for point clouds whether batches carry object
    /// ids (an empty batch with `Some` ids also fixes that; one with `None` fixes nothing).
    pub fn add_vertices(
        &mut self,
        positions: &[Vec<f64>],
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<u64> {
        let mut flat = Vec::with_capacity(positions.len() * self.grid.ndim);
        for (i, p) in positions.iter().enumerate() {
            self.grid
                .check_arity(p, || InputItem::Vertex(self.n_vertices + i as u64))?;
            flat.extend_from_slice(p);
        }
        self.add_vertices_flat(&flat, object_ids, attributes)
    }

    /// [`ZvWriter::add_vertices`] with the coordinates flat (`ndim` values per vertex), which
    /// avoids one allocation per vertex for large batches.
    pub fn add_vertices_flat(
        &mut self,
        coords: &[f64],
        object_ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<u64> {
        if self.opts.geometry.is_sequential() {
            return Err(bad(format!(
                "{} geometry takes polylines, not vertices",
                self.opts.geometry.name()
            )));
        }
        let n = self.whole_vertices(coords)?;
        let first = self.n_vertices;
        check_id_count(object_ids, n)?;
        if n == 0 {
            // an empty batch fixes no schema; empty object ids (an explicit statement, unlike
            // `None`) make a point cloud one with objects
            self.columns.check(attributes, 0)?;
            if object_ids.is_some() {
                self.check_id_mode(true)?;
                self.objects_given = Some(true);
            }
            return Ok(first);
        }
        if self.opts.geometry == Geometry::PointCloud {
            self.check_id_mode(object_ids.is_some())?;
        }
        let schema = self.columns.check(attributes, n)?;
        let first_vertex = self.n_vertices;
        let item = |i: usize| InputItem::Vertex(first_vertex + i as u64);
        let placed = if ingest::parallel(n) {
            self.place_batch_parallel(coords, item)?
        } else {
            self.place_batch(coords, item)?
        };
        // the whole batch is valid: keep it
        self.columns.install(schema);
        if self.keeps_in_parallel(n, attributes) {
            self.keep_vertices_parallel(coords, placed, object_ids, attributes)?;
        } else {
            self.keep_vertices(coords, placed, object_ids, attributes)?;
        }
        Ok(first)
    }

    /// Adds polylines (lines, polylines, streamlines); each is one object, in order. Vertex
    /// attributes have one row per vertex, over the polylines of the batch in order. Each
    /// polyline is split where it crosses a bin boundary; consecutive pieces in different
    /// chunks get a cross-chunk record from the last vertex of one to the first of the next.
    /// The whole batch is checked before any of it is kept. See
    /// [`ZvWriter::add_polylines_flat`], which this calls, for large batches.
    pub fn add_polylines(
        &mut self,
        polylines: &[Vec<Vec<f64>>],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        self.check_sequential()?;
        let total: usize = polylines.iter().map(Vec::len).sum();
        let mut coords = Vec::with_capacity(total * self.grid.ndim);
        let mut offsets = Vec::with_capacity(polylines.len() + 1);
        offsets.push(0);
        for (pi, pl) in polylines.iter().enumerate() {
            for (vi, p) in pl.iter().enumerate() {
                self.grid.check_arity(p, || InputItem::PolylineVertex {
                    polyline: self.polylines.count() + pi as u64,
                    vertex: vi as u64,
                })?;
                coords.extend_from_slice(p);
            }
            offsets.push(offsets[pi] + pl.len());
        }
        self.add_polylines_flat(&coords, &offsets, attributes)
    }

    /// [`ZvWriter::add_polylines`] with the coordinates flat (`ndim` values per vertex,
    /// polyline after polyline) and `offsets` of length `P + 1` (polyline `i` is vertices
    /// `offsets[i]..offsets[i + 1]`; `offsets` starts at 0 and ends at the vertex count),
    /// which avoids one allocation per vertex and per polyline.
    pub fn add_polylines_flat(
        &mut self,
        coords: &[f64],
        offsets: &[usize],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        self.add_polylines_with(coords, offsets, None, attributes)
    }

    /// [`ZvWriter::add_polylines_flat`] with the polylines' ids (a part of a distributed
    /// write is given some polylines of the whole write; `None`: the next ids in order).
    pub(crate) fn add_polylines_with(
        &mut self,
        coords: &[f64],
        offsets: &[usize],
        ids: Option<&[u64]>,
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        self.check_sequential()?;
        if ids.is_some() && self.owner.is_none() {
            return Err(bad(
                "polyline ids are given to the parts of a distributed write only",
            ));
        }
        let n = self.whole_vertices(coords)?;
        polylines::check_offsets(offsets, n)?;
        let schema = self.columns.check(attributes, n)?;
        let placed = self.check_polylines(coords, offsets, ids)?;
        // the whole batch is valid: keep it
        self.columns.install(schema);
        self.keep_polylines(coords, offsets, ids, placed, attributes)
    }

    /// Refuses polylines for geometries of vertex rows.
    fn check_sequential(&self) -> Result<()> {
        if !self.opts.geometry.is_sequential() {
            return Err(bad(format!(
                "{} geometry takes vertices, not polylines",
                self.opts.geometry.name()
            )));
        }
        Ok(())
    }

    /// Adds graph edges `[source, target]` or skeleton links `[child, parent]` (global vertex
    /// indices; vertices may be added before or after), with one attribute row per edge.
    ///
    /// A skeleton object may be a forest (several roots): each tree gets its own fragments in
    /// every chunk, so that the implicit sequential parent never joins two trees and zv's
    /// reader gives back exactly these links. The reference reader (0.7.0) takes
    /// `parent = i − 1` over the level's global row order wherever no link is stored, so it
    /// gives every root but the level's first row a parent — for forests and for several
    /// one-tree objects alike.
    pub fn add_edges(
        &mut self,
        edges: &[[u64; 2]],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        match self.opts.geometry {
            Geometry::Graph => {}
            Geometry::Skeleton if attributes.is_empty() => {}
            Geometry::Skeleton => return Err(bad("skeleton links are mostly implicit and cannot carry link attributes; put them on the child vertex")),
            _ => return Err(bad(format!("{} geometry has no edges", self.opts.geometry.name()))),
        }
        self.links.add_edges(edges, attributes)
    }

    /// Adds mesh faces (triangles or quads; one arity per store), with one attribute row per
    /// face.
    pub fn add_faces(
        &mut self,
        faces: &[Vec<u64>],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        if self.opts.geometry != Geometry::Mesh {
            return Err(bad(format!(
                "{} geometry has no faces",
                self.opts.geometry.name()
            )));
        }
        self.links.add_faces(faces, attributes)
    }

    /// Sets the object attributes: one row per object, objects being `0..=` the largest object
    /// id (the polylines, for polyline geometries); null rows are stored as absent, with a
    /// `present_mask`.
    pub fn set_object_attributes(&mut self, attributes: BTreeMap<String, Attribute>) {
        self.object_attributes = attributes;
    }

    /// Sets fragment attributes: one value per object, stored on each of its fragments.
    pub fn set_fragment_attributes(&mut self, attributes: BTreeMap<String, Attribute>) {
        self.fragment_attributes = attributes;
    }

    /// Sets the groups (group id → object ids; groups are `0..=` the largest id, missing ids
    /// are empty groups) and their attributes (one row per group).
    pub fn set_groups(
        &mut self,
        groups: BTreeMap<u64, Vec<u64>>,
        attributes: BTreeMap<String, Attribute>,
    ) {
        self.groups = groups;
        self.group_attributes = attributes;
    }

    /// Leaves out every intra-chunk link with the same set of vertices as an earlier link of
    /// its chunk (graph edges as undirected, faces whatever their winding): the first keeps
    /// its direction or winding and its place. The duplicates are found a chunk at a time as
    /// the chunks are written, in a set of that chunk's links. A duplicate of an intra-chunk
    /// link is in the same chunk, so no intra-chunk link of the level repeats another; the
    /// cross-chunk links are written as given (the pyramid's coarse graphs and meshes leave
    /// out their duplicates before, [`crate::pyramid`]).
    pub(crate) fn drop_duplicate_links(&mut self) {
        self.links.unique = true;
    }

    /// Writes the coordinates of the chunk a vertex at `position` goes to (its coordinates
    /// rounded to the vertex type first, as they are stored) to `out`.
    pub(crate) fn chunk_of(&self, position: &[f64], out: &mut [i64]) {
        self.grid.chunk_of_given(position, out);
    }

    /// Declares that the store has at least `n` objects: ids up to `n − 1` without vertices
    /// (or polylines past the last one given) are empty objects. The object count is the
    /// largest of this, the largest object id + 1 and the length of the object attributes.
    pub fn set_num_objects(&mut self, n: u64) {
        self.num_objects_hint = n;
    }

    /// Validates, then writes every blob and document; the root `zarr.json` comes last.
    pub fn finish(self) -> Result<WriteSummary> {
        self.finish_with_places().map(|(summary, _)| summary)
    }

    /// [`ZvWriter::finish`] for a pyramid level: also where every vertex went, as (chunk key,
    /// row) by global index, in the order the vertices were added.
    pub(crate) fn finish_level(self) -> Result<(WriteSummary, Places)> {
        self.finish_with_places()
    }

    /// [`ZvWriter::finish`], with where every vertex went when the writer tracks it (linked
    /// geometries and pyramid levels; empty otherwise).
    fn finish_with_places(self) -> Result<(WriteSummary, Places)> {
        let store = Arc::clone(self.blobs.store());
        crate::io_pool::with_store(store.as_ref(), move || self.commit())
    }

    /// [`ZvWriter::finish_with_places`], on the pool the store wants.
    fn commit(self) -> Result<(WriteSummary, Places)> {
        let counts = self.validate()?;
        // Another writer may have committed a store here since `create` (a writer that does
        // not claim the store: another implementation): stop before writing over its blobs.
        // zv's writers never get here together: the second is refused its claim (`lock`).
        if matches!(self.target, Target::Store) && self.blobs.node("")?.is_some() {
            return Err(bad(
                "another writer committed a store here first (the root zarr.json exists)",
            ));
        }
        if self.opts.format_version == FormatVersion::V0_9 {
            self.begin_grid_v09()?;
        }
        let skeleton = self.skeleton_order()?;
        let columns = self.columns.finish()?;
        let fragment_columns = self.fragment_columns()?;
        // the object index is built and written while the chunk blobs are
        let fragment_objects = self.fragment_objects(skeleton.as_ref())?;
        let (chunks, objects) = rayon::join(
            || {
                self.write_chunk_blobs(
                    skeleton.as_ref(),
                    &columns,
                    &fragment_columns,
                    Some(&fragment_objects),
                )
            },
            || self.write_objects(&fragment_objects.objects, &counts),
        );
        drop(fragment_objects);
        let chunks = chunks?;
        objects?;
        let link_columns = self.links.finish_columns()?;
        let mut routed = self.route_links(&chunks)?;
        let intra_links = self.write_intra_links(&mut routed, &chunks, &link_columns)?;
        let summary = WriteSummary {
            vertices: chunks.rows(),
            chunks: self.spill.keys().len(),
            objects: counts.objects,
            intra_links,
            cross_chunk_links: routed.cross_chunk_len() as u64,
            groups: counts.groups,
        };
        self.write_vertex_documents(&columns, &fragment_columns)?;
        self.write_level_links(routed, &link_columns, intra_links, Some(&chunks))?;
        self.write_level_and_root(chunks.rows(), !columns.is_empty())?;
        let places = if self.tracks_places() {
            self.places(chunks)
        } else {
            Places::default()
        };
        // the spill directory is removed when `self` drops
        Ok((summary, places))
    }

    /// Where every vertex went, as (chunk key, row) by the number it was added with (the
    /// chunk blobs must have tracked it: [`ZvWriter::tracks_places`]).
    fn places(&self, chunks: ChunkBlobs) -> Places {
        Places::from_parts(self.spill.keys().to_vec(), chunks.into_places())
    }

    /// Whether the chunk blobs keep where every vertex went: linked geometries need it for
    /// their links, pyramid levels for their cross-level links.
    fn tracks_places(&self) -> bool {
        self.linked() || matches!(self.target, Target::Level(_))
    }

    /// Whether the store has objects (an object index): always, except for point clouds
    /// written without object ids.
    fn has_objects(&self) -> bool {
        self.opts.geometry != Geometry::PointCloud || self.objects_given == Some(true)
    }

    /// Whether the geometry has explicit links (edges or faces).
    fn linked(&self) -> bool {
        matches!(
            self.opts.geometry,
            Geometry::Graph | Geometry::Skeleton | Geometry::Mesh
        )
    }

    /// The codecs of a blob with elements of `typesize` bytes.
    fn codecs(&self, typesize: usize) -> Vec<ExtensionMetadata> {
        self.opts.codecs.codecs(typesize, false)
    }

    /// Writes attribute rows as the blob at `path`.
    fn write_rows(&self, path: &str, rows: &AttributeRows) -> Result<()> {
        let ts = rows.data_type().size().unwrap_or(1);
        self.blobs.write_vec(path, rows.encode(), &self.codecs(ts))
    }
}
