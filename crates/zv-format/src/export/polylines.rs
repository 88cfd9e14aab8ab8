//! The objects of level 0 of a polyline, line or streamline store read a batch of objects at
//! a time ([`PolylineStream`]), for exports that must not hold the level in memory (`zv
//! export` to TRK, TCK or OBJ).
//!
//! Objects come in id order, each with its vertices in manifest order and its vertex
//! attribute rows — the polylines of [`super::export_geometry`], with the same values. The
//! object index is read once into a compact table of fragment blocks (module `refs`, decoded
//! a part at a time: 12 bytes per block of fragments). Each batch of objects, sized to about
//! [`BATCH_BYTES`] of stored rows (from the bytes per object seen so far), is gathered
//! through a window of chunks (module `gather`): the chunks its blocks name are read as many
//! at a time as there are threads (2 to [`MAX_WINDOW`]), in parallel, the batch's rows copied
//! out of them as stored and the window dropped; each object's positions are decoded as it is
//! handed over. Memory holds the table, the object attributes, one batch's rows and one
//! window of decoded chunks, however the objects lie. Objects stored in spatial or import
//! order name a few chunks per batch, and the level is read about once; objects scattered
//! over every chunk make every batch read every chunk (the level is read once per batch:
//! bounded memory in id order costs time).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::document::GeometryDocument;
//! use zv_format::export::polylines::PolylineStream;
//! let doc = GeometryDocument::from_json(br#"{"format": "zv-geometry/1",
//!     "geometry": "streamline", "chunk_shape": [10, 10, 10],
//!     "polylines": [[[1, 1, 1], [12, 1, 1]], [[2, 2, 2], [3, 3, 3], [4, 4, 4]]]}"#)?;
//! let store = Arc::new(zv_store_mem::MemoryStore::new());
//! zv_format::import::write_document(store.clone(), &doc, 1000)?;
//! let zv = zv_format::ZvStore::open(store)?;
//! let stream = PolylineStream::open(&zv)?;
//! let mut lengths = Vec::new();
//! stream.for_each(&zv_format::progress::NoProgress, |pl| {
//!     lengths.push(pl.positions.len());
//!     Ok(())
//! })?;
//! assert_eq!(lengths, vec![2, 3]);
//! # Ok(()) }
//! ```

mod gather;
mod refs;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::names;
use crate::progress::Progress;
use crate::reader::{AttributeInfo, DenseAttribute, Level, Positions, ZvStore};

use gather::{Batch, Columns};
use refs::RefTable;

/// The bytes of stored rows (positions and vertex attributes) a batch of objects aims at.
pub const BATCH_BYTES: usize = 32 << 20;

/// The most chunks a batch reads at a time (the window is as many chunks as threads, at
/// least 2).
pub const MAX_WINDOW: usize = 8;

/// The objects of the first batch.
const FIRST_BATCH: usize = 256;

/// One object's polyline.
#[derive(Debug, Clone, PartialEq)]
pub struct Polyline {
    /// The object id.
    pub id: u64,
    /// The vertices, in manifest order.
    pub positions: Positions,
    /// The rows of each vertex attribute of [`PolylineStream::infos`], row-aligned with
    /// `positions`, as stored (categorical ones as dictionary codes; `None`: the object's
    /// chunks hold no rows of it).
    pub attributes: Vec<Option<AttributeRows>>,
}

/// Level 0's polylines, read a batch of objects at a time (see the [module docs](self)).
pub struct PolylineStream {
    level: Level,
    table: RefTable,
    infos: Arc<Vec<AttributeInfo>>,
    names: Vec<String>,
    object_attributes: Arc<BTreeMap<String, DenseAttribute>>,
    batch_bytes: usize,
    window: usize,
}

impl PolylineStream {
    /// Opens level 0 of `store`, a polyline, line or streamline store.
    pub fn open(store: &ZvStore) -> Result<Self> {
        let level = store.level(0)?;
        if !level.geometry().is_sequential() {
            return Err(Error::Unsupported {
                key: "zarr.json".into(),
                what: format!(
                    "streaming the polylines of a {} store (polylines, lines and streamlines only)",
                    level.geometry().name()
                ),
            });
        }
        let table = RefTable::read(&level)?.ok_or_else(|| Error::Missing {
            key: join(&[&level.p(&[names::OBJECT_INDEX]), "zarr.json"]),
            what: "object index of the polylines".into(),
        })?;
        let infos = level.shared_vertex_attribute_infos()?;
        let names = infos.iter().map(|i| i.name.clone()).collect();
        let object_attributes = level.shared_object_attributes()?;
        Ok(Self {
            level,
            table,
            infos,
            names,
            object_attributes,
            batch_bytes: BATCH_BYTES,
            window: rayon::current_num_threads().clamp(2, MAX_WINDOW),
        })
    }

    /// The stream with batches of about `bytes` bytes of stored rows read `window` chunks at
    /// a time (the defaults: [`BATCH_BYTES`]; as many chunks as threads, 2 to
    /// [`MAX_WINDOW`]); the objects are the same.
    pub fn with_sizes(mut self, bytes: usize, window: usize) -> Self {
        self.batch_bytes = bytes.max(1);
        self.window = window.max(1);
        self
    }

    /// The number of objects.
    pub fn num_objects(&self) -> u64 {
        self.table.num_objects()
    }

    /// How the vertex attributes are stored, in name order (the order of
    /// [`Polyline::attributes`]).
    pub fn infos(&self) -> &[AttributeInfo] {
        &self.infos
    }

    /// The object attributes (one row per object), by name.
    pub fn object_attributes(&self) -> &BTreeMap<String, DenseAttribute> {
        &self.object_attributes
    }

    /// The vertex type.
    pub fn vertex_type(&self) -> zv_core::data_type::DataType {
        self.level.vertex_type()
    }

    /// Hands every object's polyline to `f`, in id order; `progress` gets the number of
    /// objects as its total and one unit per object.
    pub fn for_each(
        &self,
        progress: &dyn Progress,
        mut f: impl FnMut(Polyline) -> Result<()>,
    ) -> Result<()> {
        let n = self.num_objects();
        progress.set_total(n, "objects");
        let (mut next, mut batch) = (0u64, FIRST_BATCH.min(self.batch_bytes) as u64);
        let (mut seen_objects, mut seen_bytes) = (0u64, 0u64);
        let mut cols = Columns::default();
        while next < n {
            let ids = next..n.min(next + batch);
            next = ids.end;
            let gathered = Batch::gather(
                &self.level,
                &self.table,
                &self.names,
                ids,
                self.window,
                cols,
            )?;
            seen_objects += gathered.len();
            seen_bytes += gathered.bytes();
            cols = gathered.emit(|pl| {
                f(pl)?;
                progress.advance(1);
                Ok(())
            })?;
            let per_object = seen_bytes.div_ceil(seen_objects.max(1)).max(1);
            batch = (self.batch_bytes as u64 / per_object).max(1);
        }
        Ok(())
    }
}
