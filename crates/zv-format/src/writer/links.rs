//! Links: the edges and faces as they arrive (with their link attribute rows), and at finish
//! their placement — implicit (a skeleton parent on the previous row of its fragment), within
//! a chunk (`links/0` with `link_fragments` and link attributes) or across chunks
//! (`cross_chunk_links/0` with its attributes; in 0.9 the `links/0` family's other offsets
//! segments, [`super::v09`]).

use std::collections::BTreeMap;

use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::chunk_blobs::ChunkBlobs;
use super::columns::{Columns, FinishedColumn};
use super::documents::{cross_chunk_attribute_document, empty_group};
use super::link_ids::{LinkIds, LinkVertices};
use super::{FormatVersion, ZvWriter, SAME_LEVEL};
use crate::blob::join;
use crate::document::Attribute;
use crate::error::{AttributeKind, Error, InputItem, Result};
use crate::geometry::Geometry;
use crate::layout::cross_chunk::CrossChunkLinks;
use crate::layout::fragment_index::FragmentIndex;
use crate::layout::links::LinkRows;
use crate::layout::offset_links::{intra_segment, Ends, EndsFn};
use crate::layout::{encode_i64s, LayoutError};
use crate::metadata::arrays::CrossChunkLinksArray;
use crate::names;

/// The edges or faces added so far, and their link attribute rows.
#[derive(Debug, Clone)]
pub(super) struct Connectivity {
    mesh: bool,
    /// The links' vertices, link after link: graph edges `[source, target]`, skeleton links
    /// `[child, parent]`, or faces' corners.
    ids: LinkIds,
    /// The face arity, fixed by the first face.
    pub(super) face_arity: Option<usize>,
    columns: Columns,
    /// Link attribute records, in link order.
    records: Vec<u8>,
    /// Whether an intra-chunk link with the same set of vertices as an earlier link of its
    /// chunk is left out ([`ZvWriter::drop_duplicate_links`]).
    pub(super) unique: bool,
}

/// The set of a link's vertices, sorted, padded with `u64::MAX` (`None` past 4 vertices): two
/// links are duplicates when their sets are equal, whatever their direction or winding.
pub(crate) fn vertex_set(link: &[u64]) -> Option<[u64; 4]> {
    let mut set = [u64::MAX; 4];
    set.get_mut(..link.len())?.copy_from_slice(link);
    set[..link.len()].sort_unstable();
    Some(set)
}

/// Where the links go: per chunk (intra-chunk links) or across chunks.
#[derive(Debug)]
pub(super) struct RoutedLinks {
    /// Per chunk: (vertex fragment of the first endpoint, link index).
    intra: Vec<Vec<(u32, usize)>>,
    /// The cross-chunk records, when they are held (polylines'; empty when `deferred`).
    pub(super) cross: CrossChunkLinks,
    /// The link of each cross-chunk record (linked geometries).
    pub(super) cross_links: Vec<usize>,
    /// Whether the records of `cross_links` are made as they are written, not held in
    /// `cross` (linked geometries: 64 bytes an edge record over three axes; a ZV 0.7 level
    /// streams them into `cross_chunk_links/0/data` a batch at a time, a ZV 0.9 level files
    /// them into cells without holding them, [`ZvWriter::made_ends`]).
    deferred: bool,
}

impl RoutedLinks {
    /// The number of cross-chunk records.
    pub(super) fn cross_chunk_len(&self) -> usize {
        if self.deferred {
            self.cross_links.len()
        } else {
            self.cross.len()
        }
    }
}

impl Connectivity {
    /// No links yet; `mesh`: links are faces.
    pub(super) fn new(mesh: bool) -> Self {
        Self {
            mesh,
            ids: LinkIds::default(),
            face_arity: None,
            columns: Columns::new(AttributeKind::Link),
            records: Vec::new(),
            unique: false,
        }
    }

    /// Keeps the first of each set of `links` (link indices in ascending order, with their
    /// vertex fragment) with the same vertices, when duplicates are left out.
    fn keep_first(&self, links: &mut Vec<(u32, usize)>) {
        if !self.unique {
            return;
        }
        let mut seen = FxHashSet::default();
        seen.reserve(links.len());
        links.retain(|&(_, li)| vertex_set(&self.link(li)).is_none_or(|s| seen.insert(s)));
    }

    /// The vertices of each link.
    pub(super) fn width(&self) -> usize {
        if self.mesh {
            self.face_arity.unwrap_or(3)
        } else {
            2
        }
    }

    /// The number of links.
    pub(super) fn count(&self) -> usize {
        self.ids.len() / self.width().max(1)
    }

    /// The vertices of link `li` (empty past the last link).
    #[inline]
    pub(super) fn link(&self, li: usize) -> LinkVertices {
        LinkVertices::of(&self.ids, li, self.width())
    }

    /// The links as `[first, second]` pairs (graph edges and skeleton links).
    pub(super) fn edges(&self) -> impl Iterator<Item = [u64; 2]> + Clone + '_ {
        (0..self.count()).map(|li| match *self.link(li) {
            [a, b] => [a, b],
            _ => [0, 0], // a mesh's faces are not pairs (never asked for)
        })
    }

    /// The cell of link `li` in column `c`.
    pub(super) fn cell(&self, c: &FinishedColumn, li: usize) -> &[u8] {
        c.cell(&self.records, li * self.columns.record_len())
    }

    /// The link attribute columns with their final encodings.
    pub(super) fn finish_columns(&self) -> Result<Vec<FinishedColumn>> {
        self.columns.finish()
    }

    /// Checks a batch's link attributes (one row per link) and keeps their rows.
    fn keep_attributes(
        &mut self,
        attributes: &BTreeMap<String, Attribute>,
        n: usize,
    ) -> Result<()> {
        let schema = self.columns.check(attributes, n)?;
        self.columns.install(schema);
        // a batch without links fixes no schema
        let mut cells = self.columns.cells(attributes);
        for r in 0..n {
            cells.push_row(r, &mut self.records);
        }
        Ok(())
    }

    /// Adds edges (the geometry is checked by the caller).
    pub(super) fn add_edges(
        &mut self,
        edges: &[[u64; 2]],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        if let Some((i, e)) = edges.iter().enumerate().find(|(_, e)| e[0] == e[1]) {
            return Err(Error::input(
                InputItem::Edge((self.count() + i) as u64),
                format!("links vertex {} to itself", e[0]),
            ));
        }
        self.keep_attributes(attributes, edges.len())?;
        self.ids.extend(edges.as_flattened());
        Ok(())
    }

    /// Adds faces (the geometry is checked by the caller).
    pub(super) fn add_faces(
        &mut self,
        faces: &[Vec<u64>],
        attributes: &BTreeMap<String, Attribute>,
    ) -> Result<()> {
        let Some(arity) = self.face_arity.or(faces.first().map(Vec::len)) else {
            return self.keep_attributes(attributes, 0);
        };
        for (i, f) in faces.iter().enumerate() {
            if !(3..=4).contains(&f.len()) || f.len() != arity {
                return Err(Error::input(
                    InputItem::Face((self.ids.len() / arity.max(1) + i) as u64),
                    format!(
                        "has {} vertices (all faces must be triangles, or all quads)",
                        f.len()
                    ),
                ));
            }
        }
        self.keep_attributes(attributes, faces.len())?;
        self.face_arity = Some(arity);
        for f in faces {
            self.ids.extend(f);
        }
        Ok(())
    }
}

/// An error of the cross-chunk link blob.
fn cross_chunk_error(level: &str) -> impl Fn(LayoutError) -> Error + '_ {
    move |source| Error::Blob {
        key: join(&[level, names::CROSS_CHUNK_LINKS, SAME_LEVEL, names::DATA]),
        source,
    }
}

impl ZvWriter {
    /// The array of the intra-chunk link rows: `links/0` (0.7), or its all-zero offsets
    /// segment (0.9).
    pub(super) fn intra_links_array(&self) -> String {
        let family = join(&[&self.level, names::LINKS, SAME_LEVEL]);
        if self.opts.format_version == FormatVersion::V0_9 {
            join(&[&family, &intra_segment(self.grid.ndim, self.links.width())])
        } else {
            family
        }
    }

    /// The array of the per-chunk rows of link attribute `name`: `link_attributes/<name>/0`
    /// (0.7), or its all-zero offsets segment (0.9).
    pub(super) fn link_attribute_array(&self, name: &str) -> String {
        let family = join(&[&self.level, names::LINK_ATTRIBUTES, name, SAME_LEVEL]);
        if self.opts.format_version == FormatVersion::V0_9 {
            join(&[&family, &intra_segment(self.grid.ndim, self.links.width())])
        } else {
            family
        }
    }

    /// Sorts every link into its chunk or the cross-chunk records; a skeleton link to the
    /// previous row of the same fragment stays implicit.
    pub(super) fn route_links(&self, chunks: &ChunkBlobs) -> Result<RoutedLinks> {
        let keys = self.spill.keys();
        let width = self.links.width();
        let mut routed = RoutedLinks {
            intra: vec![Vec::new(); keys.len()],
            cross: CrossChunkLinks::new(width, self.grid.ndim),
            cross_links: Vec::new(),
            deferred: true,
        };
        if self.opts.geometry.is_sequential() {
            return self.sequential_links();
        }
        if !self.linked() {
            return Ok(routed);
        }
        let skeleton = self.opts.geometry == Geometry::Skeleton;
        let mut ends = Vec::with_capacity(width);
        for li in 0..self.links.count() {
            ends.clear();
            ends.extend(self.links.link(li).iter().map(|&g| chunks.place(g)));
            let ci = ends[0].0;
            let same = ends.iter().all(|e| e.0 == ci);
            if skeleton && same {
                let (rc, rp) = (ends[0].1, ends[1].1);
                if rc > 0
                    && rp == rc - 1
                    && chunks.fragment_of(ci, rp) == chunks.fragment_of(ci, rc)
                {
                    continue; // implicit sequential parent
                }
            }
            if same {
                routed.intra[ci].push((chunks.fragment_of(ci, ends[0].1), li));
            } else {
                routed.cross_links.push(li);
            }
        }
        Ok(routed)
    }

    /// The endpoints `(chunk coordinates, row)` of cross-chunk record `r` of a deferred
    /// routing, made from its link (`routed.cross_links[r]`) and the vertices' places
    /// (`chunks`); `None` when `routed` holds its records. A deferred routing without the
    /// places is an error (only the part writer passes none, and it routes polylines, whose
    /// records are held).
    pub(super) fn made_ends<'a>(
        &'a self,
        routed: &'a RoutedLinks,
        chunks: Option<&'a ChunkBlobs>,
    ) -> Result<Option<impl EndsFn<'a> + 'a>> {
        if !routed.deferred {
            return Ok(None);
        }
        let chunks = chunks.ok_or_else(|| {
            Error::InvalidInput(format!(
                "{}: cross-chunk records without the vertices' places",
                self.level
            ))
        })?;
        let keys = self.spill.keys();
        Ok(Some(move |r: usize, out: &mut Ends<'a>| {
            for g in self.links.link(routed.cross_links[r]) {
                let (c, row) = chunks.place(g);
                out.push((keys[c].0.as_slice(), row));
            }
            Ok(())
        }))
    }

    /// The cross-chunk records of polylines (none for other geometries), routed.
    pub(super) fn sequential_links(&self) -> Result<RoutedLinks> {
        let keys = self.spill.keys();
        let mut routed = RoutedLinks {
            intra: vec![Vec::new(); keys.len()],
            cross: CrossChunkLinks::new(self.links.width(), self.grid.ndim),
            cross_links: Vec::new(),
            deferred: false,
        };
        if !self.opts.geometry.is_sequential() {
            return Ok(routed);
        }
        for &[a, ra, b, rb] in self.polylines.crossings() {
            routed
                .cross
                .push(&[
                    (&keys[a as usize].0, ra as u64),
                    (&keys[b as usize].0, rb as u64),
                ])
                .map_err(cross_chunk_error(&self.level))?;
        }
        Ok(routed)
    }

    /// Writes every chunk's intra-chunk links, ordered by the vertex fragment of their first
    /// endpoint (stable: in link order within a fragment), with their link fragments and
    /// attributes; the later duplicates are left out first when duplicates are. Returns the
    /// number of links written.
    pub(super) fn write_intra_links(
        &self,
        routed: &mut RoutedLinks,
        chunks: &ChunkBlobs,
        columns: &[FinishedColumn],
    ) -> Result<u64> {
        let counts: Vec<u64> = routed
            .intra
            .par_iter_mut()
            .enumerate()
            .map(|(ci, links)| {
                self.links.keep_first(links);
                self.write_chunk_links(ci, links, chunks, columns)
            })
            .collect::<Result<_>>()?;
        Ok(counts.iter().sum())
    }

    /// The intra-chunk links of chunk `ci`.
    fn write_chunk_links(
        &self,
        ci: usize,
        links: &mut [(u32, usize)],
        chunks: &ChunkBlobs,
        columns: &[FinishedColumn],
    ) -> Result<u64> {
        if links.is_empty() {
            return Ok(0);
        }
        links.sort_by_key(|l| l.0);
        let name = self.spill.keys()[ci].to_string();
        let blob_error = |source| Error::Blob {
            key: name.clone(),
            source,
        };
        let values: Vec<i64> = links
            .iter()
            .flat_map(|l| {
                self.links
                    .link(l.1)
                    .into_iter()
                    .map(|g| chunks.place(g).1 as i64)
            })
            .collect();
        let rows = LinkRows::new(self.links.width(), values).map_err(blob_error)?;
        self.blobs.write_bytes(
            &join(&[&self.intra_links_array(), &name]),
            &rows.encode(),
            &self.opts.codecs.codecs(8, true),
        )?;
        let nfr = chunks.fragments(ci).max(1);
        let mut per_frag = vec![0u64; nfr];
        for l in links.iter() {
            per_frag[(l.0 as usize).min(nfr - 1)] += 1;
        }
        let lf = FragmentIndex::consecutive(&per_frag).map_err(blob_error)?;
        self.blobs.write_bytes(
            &join(&[&self.level, names::LINK_FRAGMENTS, &name]),
            &lf.encode(),
            &self.codecs(8),
        )?;
        for c in columns {
            let cells = links.iter().map(|l| self.links.cell(c, l.1));
            let path = join(&[&self.link_attribute_array(&c.name), &name]);
            self.write_rows(&path, &c.encode(cells))?;
        }
        Ok(links.len() as u64)
    }

    /// Writes the cross-chunk links and their attributes (linked and polyline geometries).
    /// Writes the level's link documents and cross-chunk records in the layout written
    /// (`intra_links`: the intra-chunk links already written with the chunks).
    /// `chunks` (the vertices' places) makes the records of a deferred routing.
    pub(super) fn write_level_links(
        &self,
        routed: RoutedLinks,
        columns: &[FinishedColumn],
        intra_links: u64,
        chunks: Option<&ChunkBlobs>,
    ) -> Result<()> {
        if self.opts.format_version == FormatVersion::V0_9 {
            return self.write_links_v09(routed, intra_links, columns, chunks);
        }
        self.write_link_documents(columns, intra_links)?;
        self.write_cross_chunk_links(routed, columns, chunks)
    }

    fn write_cross_chunk_links(
        &self,
        routed: RoutedLinks,
        columns: &[FinishedColumn],
        chunks: Option<&ChunkBlobs>,
    ) -> Result<()> {
        if !(self.linked() || self.opts.geometry.is_sequential()) {
            return Ok(());
        }
        let num_links = routed.cross_chunk_len();
        let group = join(&[&self.level, names::CROSS_CHUNK_LINKS]);
        empty_group(&self.blobs, &group)?;
        let delta = join(&[&group, SAME_LEVEL]);
        let doc =
            CrossChunkLinksArray::new(0, self.links.width(), num_links as u64, self.grid.ndim);
        self.blobs.write_group(&delta, doc.to_attributes())?;
        // streamed in chunks of at most `record_chunk_bytes`, encoded a piece at a time: the
        // records are not held twice (a blob that fits one chunk is laid out as
        // `write_bytes` lays it out)
        let record = routed.cross.link_width() * (routed.cross.sid_ndim() + 1);
        let mut stream = self.blobs.stream_bytes(
            &join(&[&delta, names::DATA]),
            (num_links * record) as u64 * 8,
            self.opts.record_chunk_bytes.max(8),
            &self.codecs(8),
        )?;
        if let Some(made) = self.made_ends(&routed, chunks)? {
            // made from the links and the vertices' places a batch at a time
            let mut batch = CrossChunkLinks::new(self.links.width(), self.grid.ndim);
            let mut ends = Ends::new();
            for start in (0..num_links).step_by(1 << 14) {
                batch.clear();
                for r in start..num_links.min(start + (1 << 14)) {
                    ends.clear();
                    made(r, &mut ends).map_err(cross_chunk_error(&self.level))?;
                    batch.push(&ends).map_err(cross_chunk_error(&self.level))?;
                }
                stream.write(&batch.encode())?;
            }
        } else {
            for piece in routed.cross.values().chunks(1 << 16) {
                stream.write(&encode_i64s(piece))?;
            }
        }
        stream.finish()?;
        drop(routed.cross);
        if columns.is_empty() {
            return Ok(());
        }
        let attributes = join(&[&self.level, names::CROSS_CHUNK_LINK_ATTRIBUTES]);
        empty_group(&self.blobs, &attributes)?;
        for c in columns {
            let cells = routed.cross_links.iter().map(|&li| self.links.cell(c, li));
            let rows = c.encode(cells);
            empty_group(&self.blobs, &join(&[&attributes, &c.name]))?;
            let group = join(&[&attributes, &c.name, SAME_LEVEL]);
            self.write_rows(&join(&[&group, names::DATA]), &rows)?;
            self.blobs.write_group(
                &group,
                cross_chunk_attribute_document(c, &rows, num_links as u64),
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use super::super::{FormatVersion, WriterOptions, ZvWriter};
    use crate::geometry::Geometry;
    use crate::reader::ZvStore;

    /// Three vertices in chunk `[0, 0, 0]` (x 1, 2, 3), two in `[1, 0, 0]` (x 12, 13).
    const XS: [f64; 5] = [1.0, 2.0, 3.0, 12.0, 13.0];

    /// Writes `links` (edges, or faces for a mesh) between the vertices of [`XS`], leaving
    /// out duplicates when `unique`; returns the summary's (intra, cross) counts and the
    /// links read back, as the x of their vertices in their stored order.
    fn write(
        mesh: bool,
        version: FormatVersion,
        unique: bool,
        links: &[&[u64]],
    ) -> ((u64, u64), BTreeSet<Vec<i64>>) {
        let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
        let geometry = if mesh {
            Geometry::Mesh
        } else {
            Geometry::Graph
        };
        let mut options = WriterOptions::new(geometry, vec![10.0; 3]);
        options.format_version = version;
        let mut w = ZvWriter::create(store.clone(), options).unwrap();
        if unique {
            w.drop_duplicate_links();
        }
        let points: Vec<Vec<f64>> = XS.iter().map(|&x| vec![x, 1.0, 1.0]).collect();
        w.add_vertices(&points, Some(&[0; 5]), &Default::default())
            .unwrap();
        if mesh {
            let faces: Vec<Vec<u64>> = links.iter().map(|l| l.to_vec()).collect();
            w.add_faces(&faces, &Default::default()).unwrap();
        } else {
            let edges: Vec<[u64; 2]> = links.iter().map(|l| [l[0], l[1]]).collect();
            w.add_edges(&edges, &Default::default()).unwrap();
        }
        let summary = w.finish().unwrap();
        let object = ZvStore::open(store)
            .unwrap()
            .level(0)
            .unwrap()
            .object(0)
            .unwrap();
        let read: BTreeSet<Vec<i64>> = object
            .links
            .unwrap()
            .iter()
            .map(|l| {
                l.iter()
                    .map(|&v| object.vertices[v as usize][0] as i64)
                    .collect()
            })
            .collect();
        let count = (summary.intra_links, summary.cross_chunk_links);
        (count, read)
    }

    fn xs(links: &[&[i64]]) -> BTreeSet<Vec<i64>> {
        links.iter().map(|l| l.to_vec()).collect()
    }

    #[test]
    fn duplicate_intra_chunk_links_are_left_out_the_first_kept() {
        let edges: [&[u64]; 9] = [
            &[0, 1],
            &[2, 0],
            &[1, 0],
            &[0, 3],
            &[3, 0],
            &[3, 4],
            &[4, 3],
            &[0, 2],
            &[1, 3],
        ];
        // the cross-chunk duplicates stay (their caller leaves them out)
        let kept = xs(&[&[1, 2], &[3, 1], &[12, 13], &[1, 12], &[12, 1], &[2, 12]]);
        let faces: [&[u64]; 5] = [&[0, 1, 2], &[2, 1, 0], &[1, 2, 0], &[0, 1, 3], &[3, 1, 0]];
        let kept_faces = xs(&[&[1, 2, 3], &[1, 2, 12], &[12, 2, 1]]);
        for version in [FormatVersion::V0_7, FormatVersion::V0_9] {
            assert_eq!(write(false, version, true, &edges), ((3, 3), kept.clone()));
            let mesh = write(true, version, true, &faces);
            assert_eq!(mesh, ((1, 2), kept_faces.clone()));
            // without the rule every link is written
            let (counts, read) = write(false, version, false, &edges);
            assert_eq!((counts, read.len()), ((6, 3), 9));
            assert_eq!(write(true, version, false, &faces).0, (3, 2));
        }
    }
}
