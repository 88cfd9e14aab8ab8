//! The vertices and links of level 0 of a mesh, graph or skeleton read chunk by chunk
//! ([`LinkStream`]), for exports that must not hold the level in memory (`zv export` to PLY,
//! OBJ, STL, SWC or a CSV edge list).
//!
//! A survey reads every chunk's vertex rows and link rows once, which gives each chunk the
//! level-global number of its first vertex; the cross-chunk records (a level-wide array, held
//! whole as the reader holds it) are numbered through those offsets. Then each chunk's
//! vertices ([`super::points::PointStream`]) come with its links in level-global numbers, in
//! the order and with the values of [`super::export_geometry`]:
//!
//! - meshes and graphs: each chunk's link rows; the cross-chunk records come after every
//!   chunk ([`LinkStream::cross_links`]);
//! - skeletons: one `[child, parent]` link per vertex that has a parent, in child order, by
//!   zv's rule (sequential inside each fragment, overridden by the chunk's stored links and
//!   then by the cross-chunk records whose child it holds), so the cross-chunk records are
//!   handed out with the chunk of their child and [`LinkStream::cross_links`] is empty.
//!
//! Memory holds a few chunks, the cross-chunk records and one offset per chunk.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::document::GeometryDocument;
//! use zv_format::export::links::LinkStream;
//! let doc = GeometryDocument::from_json(br#"{"format": "zv-geometry/1",
//!     "geometry": "mesh", "chunk_shape": [10, 10, 10],
//!     "vertices": [[1, 1, 1], [2, 1, 1], [1, 2, 1], [15, 1, 1]],
//!     "faces": [[0, 1, 2], [1, 3, 2]]}"#)?;
//! let store = Arc::new(zv_store_mem::MemoryStore::new());
//! zv_format::import::write_document(store.clone(), &doc, 1000)?;
//! let zv = zv_format::ZvStore::open(store)?;
//! let stream = LinkStream::open(&zv)?;
//! let mut faces = Vec::new();
//! stream.for_each(&zv_format::progress::NoProgress, |chunk| {
//!     faces.extend(chunk.links.into_iter().map(|l| l.ends));
//!     Ok(())
//! })?;
//! faces.extend(stream.cross_links().into_iter().map(|l| l.ends));
//! assert_eq!(faces.len(), 2);
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use super::points::{PointChunk, PointStream};
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::metadata::ChunkKey;
use crate::progress::Progress;
use crate::reader::links::{Endpoints, LinkSource, NumberedLink};
use crate::reader::skeleton::fragment_parents_in;
use crate::reader::{AttributeInfo, ZvStore};

/// Where a link's attribute values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkRow {
    /// Row `n` of its chunk's link rows.
    Chunk(usize),
    /// Cross-chunk record `n`.
    Cross(usize),
    /// None: an implicit skeleton parent.
    Implicit,
}

/// A link in level-global vertex numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The endpoints (a skeleton's are `[child, parent]`).
    pub ends: Vec<u64>,
    /// Where its attribute values are.
    pub row: LinkRow,
}

/// One chunk's vertices and links.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkChunk {
    /// The vertices.
    pub points: PointChunk,
    /// The level-global number of the chunk's first vertex.
    pub offset: u64,
    /// The links (see the [module docs](self)).
    pub links: Vec<Link>,
    /// The chunk's rows of each link attribute of [`LinkStream::infos`] (`None`: no rows).
    pub attributes: Vec<Option<AttributeRows>>,
}

/// Level 0's vertices and links, read chunk by chunk (see the [module docs](self)).
pub struct LinkStream {
    points: PointStream,
    source: Arc<LinkSource>,
    width: usize,
    skeleton: bool,
    infos: Vec<AttributeInfo>,
    /// The cross-chunk records, numbered (ordinal: the record).
    cross: Vec<NumberedLink>,
    /// Each link attribute's rows of the cross-chunk records.
    cross_attributes: Vec<Option<AttributeRows>>,
    /// Skeletons: the cross-chunk records by the chunk of their child.
    cross_of_chunk: HashMap<usize, Vec<usize>>,
    /// Each link attribute's channels.
    channels: Vec<usize>,
    /// The chunk link rows of the level.
    chunk_links: u64,
}

impl LinkStream {
    /// Opens level 0 of `store`, a mesh, graph or skeleton, and surveys it.
    pub fn open(store: &ZvStore) -> Result<Self> {
        let geometry = store.geometry();
        if !geometry.has_explicit_links() || geometry.is_sequential() {
            return Err(Error::Unsupported {
                key: "zarr.json".into(),
                what: format!(
                    "streaming the links of a {} store (meshes, graphs and skeletons only)",
                    geometry.name()
                ),
            });
        }
        let level = store.level(0)?;
        let width = level.link_width()?;
        let (points, survey) = PointStream::open_surveyed(store, true, Some(width))?;
        let offsets = points.offsets.clone().unwrap_or_default();
        let mut at: HashMap<&[i64], (u64, u64, usize)> = HashMap::new();
        for (i, (k, s)) in points.keys.iter().zip(&survey).enumerate() {
            at.insert(
                k.coords(),
                (offsets.get(i).copied().unwrap_or(0), s.rows, i),
            );
        }
        let source = level.link_source()?;
        let mut cross = Vec::new();
        let mut number = |k: &[i64], r: u64| {
            at.get(k)
                .and_then(|&(o, rows, _)| (r < rows).then_some(o + r))
        };
        source.number_cross_chunk(0, &mut number, Endpoints::All, &mut cross)?;
        let infos: Vec<AttributeInfo> = level
            .link_attribute_names()?
            .iter()
            .map(|n| level.link_attribute_info(n, 0))
            .collect::<Result<_>>()?;
        let cross_attributes = match source.records() {
            Some(_) => infos
                .iter()
                .map(|i| level.cross_chunk_link_attribute(&i.name, 0))
                .collect::<Result<_>>()?,
            None => vec![None; infos.len()],
        };
        // each link attribute's channels: named, else as the first chunk with link rows (or
        // the cross-chunk records) hold them, else one
        let first = points.keys.iter().zip(&survey).find(|(_, s)| s.links > 0);
        let mut channels = Vec::with_capacity(infos.len());
        for (info, cross) in infos.iter().zip(&cross_attributes) {
            let stored = match (info.channels(), first) {
                (Some(c), _) => Some(c),
                (None, Some((k, s))) => level
                    .link_attribute(info, 0, k, s.links)?
                    .map(|r| r.channels()),
                (None, None) => None,
            };
            channels.push(
                stored
                    .or(cross.as_ref().map(AttributeRows::channels))
                    .unwrap_or(1),
            );
        }
        let skeleton = geometry == Geometry::Skeleton;
        let mut cross_of_chunk: HashMap<usize, Vec<usize>> = HashMap::new();
        if skeleton {
            for (r, l) in cross.iter().enumerate() {
                let Some(&child) = l.ends.first() else {
                    continue;
                };
                // the chunk whose vertices hold the child
                let c = offsets.partition_point(|&o| o <= child).saturating_sub(1);
                cross_of_chunk.entry(c).or_default().push(r);
            }
        }
        Ok(Self {
            points,
            source,
            width,
            skeleton,
            infos,
            cross,
            cross_attributes,
            cross_of_chunk,
            channels,
            chunk_links: survey.iter().map(|s| s.links).sum(),
        })
    }

    /// The vertices' stream (attributes, object ids, count).
    pub fn points(&self) -> &PointStream {
        &self.points
    }

    /// The vertices' stream, to change what it hands out.
    pub fn points_mut(&mut self) -> &mut PointStream {
        &mut self.points
    }

    /// How the link attributes are stored, in name order.
    pub fn infos(&self) -> &[AttributeInfo] {
        &self.infos
    }

    /// Each link attribute's channels (named, else as the first stored rows hold them, else
    /// one), in the order of [`LinkStream::infos`].
    pub fn channels(&self) -> &[usize] {
        &self.channels
    }

    /// The width of the stored link rows (3 or 4 for meshes' faces).
    pub fn width(&self) -> usize {
        self.width
    }

    /// The number of links a mesh or graph hands out (the chunks' link rows, then the
    /// cross-chunk records); for a skeleton, its stored links.
    pub fn count(&self) -> u64 {
        self.chunk_links + self.cross.len() as u64
    }

    /// The cross-chunk links a mesh or graph hands out after its chunks (a skeleton's come
    /// with their chunks: none).
    pub fn cross_links(&self) -> Vec<Link> {
        if self.skeleton {
            return Vec::new();
        }
        self.cross
            .iter()
            .map(|l| Link {
                ends: l.ends.clone(),
                row: LinkRow::Cross(l.ordinal),
            })
            .collect()
    }

    /// The vertices the cross-chunk links name, sorted, each once (what a writer that needs
    /// the vertices of a link keeps while the chunks pass).
    pub fn cross_vertices(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.cross.iter().flat_map(|l| l.ends.clone()).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Channel `channel` of link attribute `attr` of a link at `row` (`chunk`: its chunk's
    /// rows, [`LinkChunk::attributes`]); NaN when there is none.
    pub fn value(
        &self,
        chunk: &[Option<AttributeRows>],
        attr: usize,
        row: LinkRow,
        channel: usize,
    ) -> f64 {
        let (rows, r) = match row {
            LinkRow::Chunk(r) => (chunk.get(attr), r),
            LinkRow::Cross(r) => (self.cross_attributes.get(attr), r),
            LinkRow::Implicit => return f64::NAN,
        };
        rows.and_then(Option::as_ref)
            .and_then(|a| a.get_f64(r, channel))
            .unwrap_or(f64::NAN)
    }

    /// Hands every chunk's vertices and links to `f`, in key order; `progress` gets one unit
    /// per chunk.
    pub fn for_each(
        &self,
        progress: &dyn Progress,
        f: impl FnMut(LinkChunk) -> Result<()>,
    ) -> Result<()> {
        let offsets = self.points.offsets.as_deref().unwrap_or_default();
        let index: HashMap<&ChunkKey, usize> = self
            .points
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        let read = |k: &ChunkKey| {
            let i = index.get(k).copied().unwrap_or(0);
            self.chunk(k, i, offsets.get(i).copied().unwrap_or(0))
        };
        self.points.for_each_read(progress, read, f)
    }

    /// Chunk `k` (the `i`th, its first vertex numbered `offset`).
    fn chunk(&self, k: &ChunkKey, i: usize, offset: u64) -> Result<LinkChunk> {
        let level = &self.points.level;
        let (points, fragments) = self.points.points(k)?;
        let rows = points.positions.len() as u64;
        let stored = level.links(k, self.width, rows)?;
        let link_rows = stored.as_ref().map_or(0, |l| l.len());
        let attributes = match &stored {
            Some(_) => self
                .infos
                .iter()
                .map(|info| level.link_attribute(info, 0, k, link_rows as u64))
                .collect::<Result<_>>()?,
            None => vec![None; self.infos.len()],
        };
        let mut numbered = Vec::new();
        if let Some(l) = &stored {
            let parents = if self.skeleton {
                level.skeleton_parents(k, &fragments, l)?
            } else {
                Vec::new()
            };
            let mut number = |_: &[i64], r: u64| (r < rows).then_some(offset + r);
            self.source.number_chunk(
                k,
                l,
                &parents,
                0,
                &mut number,
                Endpoints::All,
                &mut numbered,
            )?;
        }
        let links = if self.skeleton {
            // the cross-chunk records whose child is here override the chunk's links
            for &r in self.cross_of_chunk.get(&i).into_iter().flatten() {
                let l = &self.cross[r];
                numbered.push(NumberedLink {
                    ends: l.ends.clone(),
                    ordinal: link_rows + r,
                });
            }
            let spans = fragments
                .iter()
                .map(|f| f.iter().map(|r| offset + r).collect::<Vec<u64>>());
            fragment_parents_in(offset, rows, spans, &numbered)
                .into_iter()
                .map(|(c, p, o)| Link {
                    ends: vec![c, p],
                    row: match o {
                        None => LinkRow::Implicit,
                        Some(o) if o < link_rows => LinkRow::Chunk(o),
                        Some(o) => LinkRow::Cross(o - link_rows),
                    },
                })
                .collect()
        } else {
            numbered
                .into_iter()
                .map(|l| Link {
                    ends: l.ends,
                    row: LinkRow::Chunk(l.ordinal),
                })
                .collect()
        };
        Ok(LinkChunk {
            points,
            offset,
            links,
            attributes,
        })
    }
}
