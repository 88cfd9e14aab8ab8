//! The vertices of level 0 read chunk by chunk ([`PointStream`]), for exports that must not
//! hold the level in memory (`zv export` to CSV or PLY of a 10M-point store): the points of a
//! point cloud, the vertices of a mesh, graph or skeleton (whose links
//! [`super::links::LinkStream`] adds). Polylines, whose vertices are exported object by
//! object, are read by [`super::polylines::PolylineStream`].
//!
//! The points come in the order of [`super::export_geometry`] (chunks in key order, rows in
//! order), with the same values: positions as `f64`, numeric attribute rows as stored,
//! categorical values decoded to strings, and each point's object (the first object whose
//! manifest names it, 0 for none) when the level has an object index. A few chunks are read
//! at a time, in parallel; memory holds those chunks, the object index and one number per
//! chunk.
//!
//! When the level has an object index, or the caller needs the point count before the points
//! (a PLY header), [`PointStream::open`] first reads every chunk's vertices and fragment index
//! once (a survey), checks every manifest against the fragment counts — so a hostile range
//! costs nothing — and then knows the total.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::document::GeometryDocument;
//! use zv_format::export::points::PointStream;
//! let doc = GeometryDocument::from_json(br#"{"format": "zv-geometry/1",
//!     "geometry": "point_cloud", "chunk_shape": [10, 10],
//!     "vertices": [[1, 2], [15, 3], [4, 4]]}"#)?;
//! let store = Arc::new(zv_store_mem::MemoryStore::new());
//! zv_format::import::write_document(store.clone(), &doc, 1000)?;
//! let zv = zv_format::ZvStore::open(store)?;
//! let stream = PointStream::open(&zv, true)?;
//! assert_eq!(stream.count(), Some(3));
//! let mut xs = Vec::new();
//! stream.for_each(&zv_format::progress::NoProgress, |chunk| {
//!     xs.extend(chunk.positions.iter().map(|p| p[0]));
//!     Ok(())
//! })?;
//! assert_eq!(xs, vec![1.0, 4.0, 15.0]);
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::metadata::ChunkKey;
use crate::names;
use crate::progress::Progress;
use crate::reader::{AttributeInfo, Chunk, Level, Positions, ZvStore};

/// Chunks read at once, in parallel, before they are handed out in order.
const WINDOW: usize = 8;

/// One attribute's values for the points of a chunk.
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkColumn {
    /// Numeric rows, as stored (`None`: the chunk has no blob of the attribute, its points
    /// have no value).
    Numeric(Option<AttributeRows>),
    /// Categorical values, decoded (`None`: no value).
    Categorical(Vec<Option<String>>),
}

/// The points of one chunk.
#[derive(Debug, Clone, PartialEq)]
pub struct PointChunk {
    /// The chunk key.
    pub key: ChunkKey,
    /// The positions, in row order.
    pub positions: Positions,
    /// One column per attribute of [`PointStream::infos`], in that order.
    pub attributes: Vec<ChunkColumn>,
    /// Each point's object (0 for none), when the level has an object index.
    pub object_ids: Option<Vec<u64>>,
}

/// Level 0's vertices, read chunk by chunk (see the [module docs](self)).
pub struct PointStream {
    pub(crate) level: Level,
    pub(crate) keys: Vec<ChunkKey>,
    infos: Arc<Vec<AttributeInfo>>,
    /// Per chunk coordinates, each fragment's first object (lowest id naming it).
    owners: Option<HashMap<Vec<i64>, Vec<Option<u64>>>>,
    count: Option<u64>,
    /// After a survey, the level-global number of each chunk's first vertex.
    pub(crate) offsets: Option<Vec<u64>>,
}

/// What a survey learns of one chunk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Surveyed {
    /// Vertex rows.
    pub rows: u64,
    /// Fragments.
    pub fragments: u64,
    /// Delta-0 link rows (when the survey reads links).
    pub links: u64,
}

impl PointStream {
    /// Opens level 0 of `store`, a point cloud, mesh, graph or skeleton; with `count`, the
    /// number of points is known before they are read ([`PointStream::count`]).
    pub fn open(store: &ZvStore, count: bool) -> Result<Self> {
        Ok(Self::open_surveyed(store, count, None)?.0)
    }

    /// [`PointStream::open`]; with `link_width`, the survey (then always made) also reads
    /// every chunk's delta-0 link rows of that width, and their counts are returned.
    pub(crate) fn open_surveyed(
        store: &ZvStore,
        count: bool,
        link_width: Option<usize>,
    ) -> Result<(Self, Vec<Surveyed>)> {
        let level = store.level(0)?;
        if level.geometry().is_sequential() {
            return Err(Error::Unsupported {
                key: "zarr.json".into(),
                what: format!(
                    "streaming the vertices of a {} store chunk by chunk (its vertices are read object by object)",
                    level.geometry().name()
                ),
            });
        }
        let keys = level.chunk_keys()?;
        let infos = level.shared_vertex_attribute_infos()?;
        let index = level.object_index()?;
        let mut stream = Self {
            level,
            keys,
            infos,
            owners: None,
            count: None,
            offsets: None,
        };
        if !count && index.is_none() && link_width.is_none() {
            return Ok((stream, Vec::new()));
        }
        // the survey: rows, fragments (and link rows) of every chunk
        let survey: Vec<Surveyed> = stream.level.with_store_pool(|| {
            stream
                .keys
                .par_iter()
                .map(|k| {
                    let c = stream.chunk(k)?;
                    let rows = c.vertices.len() as u64;
                    let links = match link_width {
                        Some(w) => stream
                            .level
                            .links(k, w, rows)?
                            .map_or(0, |l| l.len() as u64),
                        None => 0,
                    };
                    Ok(Surveyed {
                        rows,
                        fragments: c.fragments.len() as u64,
                        links,
                    })
                })
                .collect::<Result<_>>()
        })?;
        let mut offsets = Vec::with_capacity(survey.len());
        let mut total = 0u64;
        for s in &survey {
            offsets.push(total);
            total += s.rows;
        }
        stream.count = Some(total);
        stream.offsets = Some(offsets);
        if let Some(index) = index {
            let fragments: HashMap<&[i64], u64> = stream
                .keys
                .iter()
                .zip(&survey)
                .map(|(k, s)| (k.coords(), s.fragments))
                .collect();
            let okey = stream.level.p(&[names::OBJECT_INDEX]);
            index.check_fragments(&okey, |c| fragments.get(c).copied())?;
            let mut owners: HashMap<Vec<i64>, Vec<Option<u64>>> = HashMap::new();
            for (oid, m) in index.manifests.iter().enumerate() {
                for (coords, f) in m.refs() {
                    let n = fragments.get(coords).copied().unwrap_or(0) as usize;
                    let slots = owners
                        .entry(coords.to_vec())
                        .or_insert_with(|| vec![None; n]);
                    if let Some(slot) = slots.get_mut(f as usize) {
                        slot.get_or_insert(oid as u64);
                    }
                }
            }
            stream.owners = Some(owners);
        }
        Ok((stream, survey))
    }

    /// Leaves the object ids out when every vertex's is 0 (a level of one object, as a graph
    /// imported without ids); returns whether it did.
    pub fn drop_single_object_ids(&mut self) -> bool {
        let single = self.owners.as_ref().is_some_and(|o| {
            o.values()
                .flatten()
                .all(|owner| matches!(owner, None | Some(0)))
        });
        if single {
            self.owners = None;
        }
        single
    }

    /// How the vertex attributes are stored, in name order (the order of
    /// [`PointChunk::attributes`]).
    pub fn infos(&self) -> &[AttributeInfo] {
        &self.infos
    }

    /// Whether the points carry object ids (the level has an object index).
    pub fn has_object_ids(&self) -> bool {
        self.owners.is_some()
    }

    /// The number of points, when [`PointStream::open`] surveyed the level.
    pub fn count(&self) -> Option<u64> {
        self.count
    }

    /// The number of chunks.
    pub fn chunks(&self) -> usize {
        self.keys.len()
    }

    /// The vertex data type.
    pub fn vertex_type(&self) -> zv_core::data_type::DataType {
        self.level.vertex_type()
    }

    /// Hands every chunk's points to `f`, in key order; `progress` gets the number of chunks
    /// as its total and one unit per chunk handed out.
    pub fn for_each(
        &self,
        progress: &dyn Progress,
        f: impl FnMut(PointChunk) -> Result<()>,
    ) -> Result<()> {
        self.for_each_read(progress, |k| self.points(k).map(|p| p.0), f)
    }

    /// Reads every chunk with `read`, a few at a time in parallel, and hands the results to
    /// `f` in key order (one unit of `progress` each).
    pub(crate) fn for_each_read<T: Send>(
        &self,
        progress: &dyn Progress,
        read: impl Fn(&ChunkKey) -> Result<T> + Sync,
        mut f: impl FnMut(T) -> Result<()>,
    ) -> Result<()> {
        progress.set_total(self.keys.len() as u64, "chunks");
        // a store that wants more requests in flight gets wider windows
        let width = WINDOW.max(self.level.store_concurrency());
        for window in self.keys.chunks(width) {
            let read: Vec<T> = self
                .level
                .with_store_pool(|| window.par_iter().map(&read).collect::<Result<_>>())?;
            for c in read {
                f(c)?;
                progress.advance(1);
            }
        }
        Ok(())
    }

    /// Vertices and fragments of chunk `k`; a listed chunk without vertices is an error.
    fn chunk(&self, k: &ChunkKey) -> Result<Chunk> {
        self.level.chunk(k)?.ok_or_else(|| Error::Missing {
            key: self
                .level
                .p(&[names::VERTICES, &k.to_string(), "zarr.json"]),
            what: "vertices".into(),
        })
    }

    /// The points of chunk `k`, and its fragments.
    pub(crate) fn points(
        &self,
        k: &ChunkKey,
    ) -> Result<(PointChunk, crate::layout::fragment_index::FragmentIndex)> {
        let chunk = self.chunk(k)?;
        let rows = chunk.vertices.len();
        let attributes = self
            .infos
            .iter()
            .map(|info| self.column(info, k, rows))
            .collect::<Result<_>>()?;
        let object_ids = self.owners.as_ref().map(|owners| {
            let mut ids: Vec<Option<u64>> = vec![None; rows];
            let of_fragment = owners.get(k.coords()).map_or(&[][..], Vec::as_slice);
            for (frag, owner) in chunk.fragments.iter().zip(of_fragment) {
                let Some(o) = *owner else { continue };
                for r in frag.iter() {
                    if let Some(slot) = ids.get_mut(r as usize) {
                        *slot = Some(slot.map_or(o, |s| s.min(o)));
                    }
                }
            }
            ids.into_iter().map(|o| o.unwrap_or(0)).collect()
        });
        let points = PointChunk {
            key: k.clone(),
            positions: chunk.vertices.positions(),
            attributes,
            object_ids,
        };
        Ok((points, chunk.fragments))
    }

    /// The values of attribute `info` in chunk `k` (of `rows` vertices).
    fn column(&self, info: &AttributeInfo, k: &ChunkKey, rows: usize) -> Result<ChunkColumn> {
        let values = self.level.vertex_attribute(info, k, rows as u64)?;
        let Some(d) = &info.dictionary else {
            return Ok(ChunkColumn::Numeric(values));
        };
        let Some(values) = values else {
            return Ok(ChunkColumn::Categorical(vec![None; rows]));
        };
        let key = || {
            self.level
                .chunk_blob(&[names::VERTEX_ATTRIBUTES, &info.name], k)
        };
        let decoded = d
            .decode_values(&values)
            .map_err(|source| Error::Blob { key: key(), source })?;
        decoded
            .into_iter()
            .map(|v| match v {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(other) => Err(Error::inconsistent(
                    key(),
                    format!("categorical value {other} is not a string"),
                )),
            })
            .collect::<Result<_>>()
            .map(ChunkColumn::Categorical)
    }
}
