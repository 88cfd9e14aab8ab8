//! The links of a 0.9 level (`docs/format-decisions.md`, "Writing ZV 0.9"): the family
//! group `links/0` with one chunk-grid array per offsets segment. The intra-chunk rows are
//! written by the 0.7 code into the all-zero segment ([`ZvWriter::intra_links_array`]); here
//! the cross-chunk records are filed into the other segments as zarr-vectors 0.9.2 files them
//! ([`partition`]: canonical endpoint order and `perm_idx`, the family being undirected),
//! the link attributes mirror them (`link_attributes/<name>/0/<offsets>`, each cell the rows
//! of its records in order), and the documents are written.

use rayon::prelude::*;
use serde_json::json;

use super::super::chunk_blobs::ChunkBlobs;
use super::super::columns::FinishedColumn;
use super::super::documents::empty_group;
use super::super::links::RoutedLinks;
use super::super::{ZvWriter, SAME_LEVEL};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::links::RaggedLinks;
use crate::layout::offset_links::{
    ends_of, has_perm, parse_segment, CellPlan, EndsFn, PlannedCell,
};
use crate::metadata::arrays::FragmentIndexKind;
use crate::metadata::{ChunkKey, JsonObject};
use crate::names;

/// The family policy written: undirected (endpoint order is kept by `perm_idx`), each
/// record stored once — 0.9.2's `write_graph`, `write_mesh` and `write_polylines` policy.
const DIRECTED: bool = false;
/// See [`DIRECTED`].
const STORE: &str = "canonical";

/// The attributes of the segment array with `offsets` (0.9.2's per-array metadata).
fn segment_attributes(offsets: &[Vec<i64>], width: usize) -> JsonObject {
    let intra = offsets.iter().flatten().all(|&c| c == 0);
    let mut m = JsonObject::new();
    m.insert("zv_array".into(), json!(names::LINKS));
    m.insert("dtype".into(), json!("int64"));
    m.insert("offsets".into(), json!(offsets));
    m.insert(
        "has_perm".into(),
        json!(has_perm(intra, 0, DIRECTED, STORE)),
    );
    m.insert("link_width".into(), json!(width));
    m.insert("level_delta".into(), json!(0));
    m
}

impl ZvWriter {
    /// Writes the cross-chunk records into their offsets segments and the documents of the
    /// `links/0` family: linked geometries always have it (with the all-zero segment and
    /// `link_fragments`, even without rows), polylines only when a polyline crosses chunks.
    /// `intra_links` is the number of intra-chunk rows written.
    ///
    /// The records are not held: each is filed ([`CellPlan`], 16 bytes a record) from its
    /// link and the vertices' places (`chunks`; polylines' records are held by `routed`),
    /// and each cell's rows are made as the cell is written, cells in parallel.
    pub(in super::super) fn write_links_v09(
        &self,
        routed: RoutedLinks,
        intra_links: u64,
        columns: &[FinishedColumn],
        chunks: Option<&ChunkBlobs>,
    ) -> Result<()> {
        let linked = self.linked();
        let family = join(&[&self.level, names::LINKS, SAME_LEVEL]);
        let family_key = join(&[&family, "zarr.json"]);
        let cross_links = routed.cross_chunk_len() as u64;
        let family_error = |source| Error::Blob {
            key: family_key.clone(),
            source,
        };
        let made = self.made_ends(&routed, chunks)?;
        let ends = either(made, ends_of(&routed.cross));
        let plan = CellPlan::new(cross_links as usize, DIRECTED, &ends).map_err(family_error)?;
        if !linked && plan.is_empty() {
            return Ok(());
        }
        // the cells, and their segments (each once, cells being in segment order)
        let cells: Vec<PlannedCell<'_>> = plan.cells().collect();
        let mut segments: Vec<&str> = cells.iter().map(|c| c.segment).collect();
        segments.dedup();
        self.write_link_attributes_v09(&routed, &cells, &segments, intra_links, columns)?;
        let width = self.links.width();
        let sid = self.grid.ndim;
        let codecs = self.opts.codecs.codecs(8, true);
        let ncols = width + usize::from(has_perm(false, 0, DIRECTED, STORE));
        cells.par_iter().try_for_each(|cell| -> Result<()> {
            let path = join(&[
                &family,
                cell.segment,
                &ChunkKey(cell.source.to_vec()).to_string(),
            ]);
            let blob_error = |source| Error::Blob {
                key: path.clone(),
                source,
            };
            let rows = plan.rows(cell.records, &ends).map_err(blob_error)?;
            let blob = RaggedLinks {
                link_width: ncols,
                groups: vec![rows],
            }
            .encode()
            .map_err(blob_error)?;
            self.blobs.write_bytes(&path, &blob, &codecs)
        })?;
        for &seg in &segments {
            let path = join(&[&family, seg]);
            let offsets = parse_segment(seg, sid, width)
                .map_err(|why| Error::metadata(join(&[&path, "zarr.json"]), why))?;
            self.blobs.write_chunk_array_document(
                &path,
                segment_attributes(&offsets, width),
                &codecs,
            )?;
        }
        if linked {
            self.blobs.write_chunk_array_document(
                &self.intra_links_array(),
                segment_attributes(&vec![vec![0; sid]; width.saturating_sub(1)], width),
                &codecs,
            )?;
            self.write_fragment_index_document(
                &join(&[&self.level, names::LINK_FRAGMENTS]),
                FragmentIndexKind::Link,
            )?;
        }
        let total = intra_links + cross_links;
        let mut attributes = JsonObject::new();
        attributes.insert("zv_array".into(), json!("links_family"));
        attributes.insert("level_delta".into(), json!(0));
        attributes.insert("link_width".into(), json!(width));
        attributes.insert("sid_ndim".into(), json!(sid));
        attributes.insert("directed".into(), json!(DIRECTED));
        attributes.insert("store".into(), json!(STORE));
        attributes.insert("num_links".into(), json!(total));
        attributes.insert("num_physical_records".into(), json!(total));
        self.blobs
            .write_group(&join(&[&self.level, names::LINKS]), JsonObject::new())?;
        self.blobs.write_group(&family, attributes)
    }
}

/// The endpoints of a record: made (`made`, a deferred routing) or held (`held`).
fn either<'a>(
    made: Option<impl EndsFn<'a> + 'a>,
    held: impl EndsFn<'a> + 'a,
) -> impl EndsFn<'a> + 'a {
    move |r, out| match &made {
        Some(made) => made(r, out),
        None => held(r, out),
    }
}

/// The attributes of the segment array with `offsets` of link attribute `c`
/// (0.9.2's per-array metadata; `channel_names` when rows have several values, as zv's vertex
/// attributes carry them).
fn attribute_segment_attributes(c: &FinishedColumn, offsets: &[Vec<i64>]) -> JsonObject {
    let mut m = JsonObject::new();
    m.insert("zv_array".into(), json!("link_attribute"));
    m.insert("name".into(), json!(c.name));
    m.insert("dtype".into(), json!(c.data_type.name()));
    m.insert("offsets".into(), json!(offsets));
    m.insert("level_delta".into(), json!(0));
    let row_shape: Vec<usize> = if c.channels > 1 {
        m.insert("channel_names".into(), json!(c.channel_names_or_default()));
        vec![c.channels]
    } else {
        Vec::new()
    };
    m.insert("row_shape".into(), json!(row_shape));
    m
}

impl ZvWriter {
    /// Writes the link attributes as 0.9.2 lays them out: per attribute the family group
    /// `link_attributes/<name>/0` mirroring `links/0` — the all-zero segment's cells already
    /// written with the intra-chunk links (an array only when there are intra-chunk links),
    /// and each cross-chunk cell of `cells` (their segments: `segments`) the rows of its
    /// records, in its records' order.
    fn write_link_attributes_v09(
        &self,
        routed: &RoutedLinks,
        cells: &[PlannedCell<'_>],
        segments: &[&str],
        intra_links: u64,
        columns: &[FinishedColumn],
    ) -> Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        let sid = self.grid.ndim;
        let width = self.links.width();
        let group = join(&[&self.level, names::LINK_ATTRIBUTES]);
        empty_group(&self.blobs, &group)?;
        let total = intra_links + routed.cross_chunk_len() as u64;
        for c in columns {
            let family = join(&[&group, &c.name, SAME_LEVEL]);
            let codecs = self.codecs(c.data_type.size().unwrap_or(1));
            cells.par_iter().try_for_each(|cell| {
                let rows = c.encode(
                    cell.records
                        .iter()
                        .map(|&r| self.links.cell(c, routed.cross_links[r])),
                );
                let key = ChunkKey(cell.source.to_vec()).to_string();
                self.write_rows(&join(&[&family, cell.segment, &key]), &rows)
            })?;
            for &seg in segments {
                let path = join(&[&family, seg]);
                let offsets = parse_segment(seg, sid, width)
                    .map_err(|why| Error::metadata(join(&[&path, "zarr.json"]), why))?;
                self.blobs.write_chunk_array_document(
                    &path,
                    attribute_segment_attributes(c, &offsets),
                    &codecs,
                )?;
            }
            if intra_links > 0 {
                let zero = vec![vec![0; sid]; width.saturating_sub(1)];
                self.blobs.write_chunk_array_document(
                    &self.link_attribute_array(&c.name),
                    attribute_segment_attributes(c, &zero),
                    &codecs,
                )?;
            }
            empty_group(&self.blobs, &join(&[&group, &c.name]))?;
            let mut attributes = JsonObject::new();
            attributes.insert("zv_array".into(), json!("link_attribute_family"));
            attributes.insert("name".into(), json!(c.name));
            attributes.insert("level_delta".into(), json!(0));
            attributes.insert("num_links".into(), json!(total));
            self.blobs.write_group(&family, attributes)?;
        }
        Ok(())
    }
}
