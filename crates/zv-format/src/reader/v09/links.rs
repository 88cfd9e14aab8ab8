//! ZV 0.9 links (`docs/format-decisions.md`, "ZV 0.9 stores", "Links").
//!
//! A 0.9 level keeps every link record of level delta `d` under the group `links/<d>` (the
//! *family*: `link_width`, `sid_ndim`, `directed`, `store`), one chunk-grid array per
//! **offsets segment**: a record is filed at the cell of its *source* chunk, in the array
//! named by the other endpoints' chunk offsets from the source (`"+1.-1.0"`, several joined
//! by `_`; `self` for width 1).
//!
//! - The all-zero segment holds the intra-chunk rows: each cell is exactly 0.7's
//!   `links/0/<key>` blob (flat `int64` rows of chunk-local vertex rows) with its
//!   `link_fragments` sidecar, so it reads through the 0.7 code ([`Level::links`]) once
//!   [`Level::link_rows_array`] names it.
//! - Every other segment holds cross-chunk records as 0.7's self-describing ragged blob
//!   ([`RaggedLinks`]) of rows `[perm_idx?, v_0, …, v_{L-1}]`: endpoint `k` is row `v_k` of
//!   chunk `source + offset_k` (`offset_0` = 0). Where the array's `has_perm` is true, the
//!   endpoints are in a canonical order and `perm_idx` (a Lehmer code) restores the order
//!   written. [`Level::v09_cross_chunk`] turns them into the 0.7 model of cross-chunk
//!   records, so everything that reads cross-chunk links reads them.
//!
//! Records are listed as zarr-vectors 0.9.2 lists them: segments in name order, cells in the
//! order of their dotted keys as text, rows in order. The cells are read and decoded a window
//! at a time in parallel, and taken in that order.

use rayon::prelude::*;

use super::super::{blob_err, delta_name, CrossChunk, Level};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::cross_chunk::CrossChunkLinks;
use crate::layout::links::RaggedLinks;
use crate::metadata::arrays::LinksArray;
use crate::metadata::{ChunkKey, JsonObject, Layout};
use crate::names;
use serde_json::Value;

use crate::layout::cross_level::{anchor, chunk_scale};
use crate::layout::offset_links::{
    has_perm as default_has_perm, intra_segment, lehmer_decode, parse_segment,
};
use crate::metadata::LevelMetadata;

/// The cells of one cross-chunk offsets segment, in reading order, with the number of records
/// each holds (what the segment's link attribute cells must hold rows for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegmentCells {
    /// The segment's name (`+1.0.0`).
    pub segment: String,
    /// `(source chunk, records)` per non-empty cell.
    pub cells: Vec<(ChunkKey, usize)>,
}

impl Level {
    /// The array of the intra-chunk link rows of `delta`, relative to the level: `links/<d>`
    /// (0.7), or the all-zero offsets segment under it (0.9).
    pub(crate) fn link_rows_array(&self, delta: i32) -> Result<String> {
        let base = join(&[names::LINKS, &delta_name(delta)]);
        if self.blobs.layout() != Layout::ChunkGrid {
            return Ok(base);
        }
        let (width, sid) = self.v09_family_shape(delta)?;
        Ok(join(&[&base, &intra_segment(sid, width)]))
    }

    /// `(link_width, sid_ndim)` of the 0.9 family `links/<delta>` (width 2 and the key arity
    /// when absent).
    pub(super) fn v09_family_shape(&self, delta: i32) -> Result<(usize, usize)> {
        let group = self.p(&[names::LINKS, &delta_name(delta)]);
        let key = join(&[&group, "zarr.json"]);
        let attrs = self.blobs.group_attributes(&group)?.unwrap_or_default();
        let width = LinksArray::from_attributes(&attrs, &key)?.link_width;
        Ok((width, self.v09_sid(&attrs, &key)?))
    }

    /// The family's `sid_ndim`, which must be the level's chunk key arity.
    fn v09_sid(&self, attrs: &JsonObject, key: &str) -> Result<usize> {
        match attrs.get("sid_ndim") {
            None | Some(Value::Null) => Ok(self.key_arity),
            Some(v) if v.as_u64() == Some(self.key_arity as u64) => Ok(self.key_arity),
            Some(v) => Err(Error::metadata(
                key,
                format!(
                    "`sid_ndim` is {v}, but the level's chunk keys have {} components",
                    self.key_arity
                ),
            )),
        }
    }

    /// The attributes of ZV 0.9 cross-level links (`link_attributes/<name>/<delta ≠ 0>`) are
    /// not read yet: refused naming the node, never read as something else.
    pub(crate) fn check_v09_unread_links(&self) -> Result<()> {
        if self.blobs.layout() != Layout::ChunkGrid {
            return Ok(());
        }
        for n in self.children_of(names::LINK_ATTRIBUTES)? {
            for d in self.children_of(&join(&[names::LINK_ATTRIBUTES, &n]))? {
                if d != "0" {
                    return Err(Error::Unsupported {
                        key: self.p(&[names::LINK_ATTRIBUTES, &n, &d, "zarr.json"]),
                        what: "attributes of cross-level links of a ZV 0.9 store \
                               (`link_attributes/<name>/<delta>` with delta ≠ 0)"
                            .into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The chunk scales ([`chunk_scale`]) of this level and of level `id + delta`, which the
    /// family `links/<delta>` links to: their chunk shapes as whole multiples of the root's.
    pub(crate) fn v09_scales(&self, delta: i32) -> Result<(Vec<i64>, Vec<i64>)> {
        let root = &self.root.chunk_shape;
        let own = chunk_scale(&self.chunk_shape(), root, self.key_arity)
            .map_err(|w| Error::metadata(self.p(&["zarr.json"]), w))?;
        if delta == 0 {
            return Ok((own.clone(), own));
        }
        let family = self.p(&[names::LINKS, &delta_name(delta), "zarr.json"]);
        let other = u32::try_from(i64::from(self.id) + i64::from(delta)).map_err(|_| {
            Error::metadata(
                &family,
                format!("links to level {}", i64::from(self.id) + i64::from(delta)),
            )
        })?;
        let path = other.to_string();
        let key = join(&[&path, "zarr.json"]);
        let attrs = self
            .blobs
            .group_attributes(&path)?
            .ok_or_else(|| Error::Missing {
                key: key.clone(),
                what: format!("level {other}, which `{family}` links to"),
            })?;
        let meta = LevelMetadata::from_attributes(&attrs, other, &self.root, &key)?;
        let theirs = chunk_scale(
            &meta.effective_chunk_shape(&self.root),
            root,
            self.key_arity,
        )
        .map_err(|w| Error::metadata(&key, w))?;
        Ok((own, theirs))
    }

    /// Whether the all-zero segment of the cross-level family `links/<delta>` pairs chunks
    /// with the same key on both levels (equal chunk scales), as 0.7's `links/±N/<key>`
    /// does: then [`Level::cross_level_links`] reads it and the cross-chunk records leave it
    /// out.
    pub(crate) fn v09_same_keys(&self, delta: i32) -> Result<bool> {
        let (own, theirs) = self.v09_scales(delta)?;
        Ok(delta != 0 && own == theirs)
    }

    /// The cross-chunk records of the 0.9 family `links/<delta>` (its segments other than the
    /// all-zero one), in 0.9.2's order, endpoints in the order written (`perm_idx` undone).
    /// `None` without the family. For a cross-level family (delta ≠ 0) endpoint `k ≥ 1` is
    /// at level + delta, in chunk `anchor(source) + offset_k`, and the all-zero segment is
    /// read here too unless [`Level::v09_same_keys`].
    pub(crate) fn v09_cross_chunk(&self, delta: i32) -> Result<Option<CrossChunk>> {
        Ok(self.v09_family(delta)?.map(|(c, _)| c))
    }

    /// [`Level::v09_cross_chunk`] with the cells its records came from, in the same order.
    pub(crate) fn v09_family(&self, delta: i32) -> Result<Option<(CrossChunk, Vec<SegmentCells>)>> {
        let mut filed: Vec<SegmentCells> = Vec::new();
        let family = self.v09_family_cells(delta, &mut |_, segment, cell| {
            match cell {
                None => filed.push(SegmentCells {
                    segment: segment.to_owned(),
                    cells: Vec::new(),
                }),
                Some((src, records)) => {
                    if let Some(last) = filed.last_mut() {
                        last.cells.push((src.clone(), records));
                    }
                }
            }
            Ok(())
        })?;
        Ok(family.map(|(links, attributes)| {
            let cross = CrossChunk {
                delta,
                links,
                attributes,
            };
            (cross, filed)
        }))
    }

    /// The records of [`Level::v09_cross_chunk`] handed to `visit` a cell at a time, in
    /// their order ([`Level::visit_cross_chunk_links`]); the number of records.
    pub(crate) fn v09_visit_cross_chunk(
        &self,
        delta: i32,
        visit: &mut crate::reader::RecordVisitor<'_>,
    ) -> Result<Option<u64>> {
        let mut records = 0u64;
        let family = self.v09_family_cells(delta, &mut |links, _, cell| {
            if cell.is_some() && !links.is_empty() {
                records += links.len() as u64;
                visit(links)?;
                links.clear();
            }
            Ok(())
        })?;
        Ok(family.map(|_| records))
    }

    /// Reads the family `links/<delta>` (see [`Level::v09_cross_chunk`]) segment by segment
    /// and cell by cell into one record buffer: `on_cell(buffer, segment, None)` when a
    /// segment starts, `on_cell(buffer, segment, Some((source chunk, records)))` after a
    /// cell's records were appended (the callee may take them out). Returns the buffer left
    /// and the family's attributes (`None` without the family).
    fn v09_family_cells(
        &self,
        delta: i32,
        on_cell: &mut CellSink<'_>,
    ) -> Result<Option<(CrossChunkLinks, JsonObject)>> {
        let group = self.p(&[names::LINKS, &delta_name(delta)]);
        let key = join(&[&group, "zarr.json"]);
        let Some(attributes) = self.blobs.group_attributes(&group)? else {
            return Ok(None);
        };
        let scales = self.v09_scales(delta)?;
        let skip_intra = delta == 0 || scales.0 == scales.1;
        let model = LinksArray::from_attributes(&attributes, &key)?;
        model.check(delta, &self.geometry, &key)?;
        let width = model.link_width;
        let sid = self.v09_sid(&attributes, &key)?;
        let directed = match attributes.get("directed") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                return Err(Error::metadata(
                    &key,
                    format!("`directed` is {v}, not a boolean"),
                ))
            }
        };
        let store = match attributes.get("store") {
            None | Some(Value::Null) => "canonical",
            Some(Value::String(s)) if s == "canonical" || s == "duplicate" => s.as_str(),
            Some(v) => {
                return Err(Error::metadata(
                    &key,
                    format!("`store` is {v}, not \"canonical\" or \"duplicate\""),
                ))
            }
        };
        let intra = intra_segment(sid, width);
        let mut segments = self.blobs.children(&group)?;
        segments.sort();
        let mut links = CrossChunkLinks::new(width, sid);
        for seg in segments.iter().filter(|s| !skip_intra || **s != intra) {
            let path = join(&[&group, seg]);
            let akey = join(&[&path, "zarr.json"]);
            let Some(grid) = self.blobs.grid(&path)? else {
                continue; // a folder without an array: 0.9.2 lists arrays only
            };
            let offsets = parse_segment(seg, sid, width).map_err(|w| Error::metadata(&akey, w))?;
            let attrs = grid.attributes();
            if let Some(v) = attrs.get("offsets").filter(|v| !v.is_null()) {
                if *v != serde_json::json!(offsets) {
                    return Err(Error::metadata(
                        &akey,
                        format!("`offsets` is {v}, but the array is named `{seg}`"),
                    ));
                }
            }
            match attrs.get("dtype") {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) if s == "int64" => {}
                Some(v) => {
                    return Err(Error::metadata(
                        &akey,
                        format!("link rows are int64, not {v}"),
                    ))
                }
            }
            let has_perm = match attrs.get("has_perm") {
                None | Some(Value::Null) => default_has_perm(false, delta, directed, store),
                Some(Value::Bool(b)) => *b,
                Some(v) => {
                    return Err(Error::metadata(
                        &akey,
                        format!("`has_perm` is {v}, not a boolean"),
                    ))
                }
            };
            let mut cells = grid.keys()?;
            cells.sort_by_cached_key(ChunkKey::to_string);
            on_cell(&mut links, seg, None)?;
            // a window of cells read and decoded in parallel, then taken in order (memory
            // holds that window's cells)
            let read = cells.chunks(crate::io_pool::window_len()).flat_map(|w| {
                let bytes: Vec<Result<Option<_>>> = w.par_iter().map(|c| grid.cell(c)).collect();
                w.iter().zip(bytes)
            });
            for (src, bytes) in read {
                let Some(bytes) = bytes? else {
                    continue;
                };
                let ckey = grid.cell_store_key(src);
                let base = if delta == 0 {
                    Some(src.coords().to_vec())
                } else {
                    anchor(src.coords(), &scales.0, &scales.1)
                };
                let base = base.ok_or_else(|| {
                    Error::inconsistent(
                        &ckey,
                        format!("chunk {src} has no anchor at level + {delta}"),
                    )
                })?;
                let cell = Cell {
                    src,
                    base: &base,
                    offsets: &offsets,
                    has_perm,
                    key: &ckey,
                };
                let before = links.len();
                push_cell(&mut links, &bytes, &cell)?;
                let records = links.len() - before;
                on_cell(&mut links, seg, Some((src, records)))?;
            }
        }
        Ok(Some((links, attributes)))
    }
}

/// What [`Level::v09_family_cells`] calls as it reads: the record buffer, the segment, and
/// `None` when the segment starts or `Some((source chunk, records appended))` after a cell.
type CellSink<'a> =
    dyn FnMut(&mut CrossChunkLinks, &str, Option<(&ChunkKey, usize)>) -> Result<()> + 'a;

/// One cell of a segment: its source chunk, the chunk the offsets start from (the source, or
/// its anchor at the other level), the segment's offsets, whether rows carry `perm_idx`,
/// and the store key (for errors).
struct Cell<'a> {
    src: &'a ChunkKey,
    base: &'a [i64],
    offsets: &'a [Vec<i64>],
    has_perm: bool,
    key: &'a str,
}

/// Appends the records of one cross-chunk cell.
fn push_cell(links: &mut CrossChunkLinks, bytes: &[u8], cell: &Cell<'_>) -> Result<()> {
    let (src, ckey, has_perm) = (cell.src, cell.key, cell.has_perm);
    let width = links.link_width();
    let ncols = width + usize::from(has_perm);
    let ragged = RaggedLinks::decode(bytes, ncols).map_err(blob_err(ckey.to_owned()))?;
    let bad = |why: String| Error::inconsistent(ckey, why);
    let mut chunks: Vec<Vec<i64>> = vec![src.coords().to_vec()];
    for o in cell.offsets {
        let c: Option<Vec<i64>> = cell
            .base
            .iter()
            .zip(o)
            .map(|(a, b)| a.checked_add(*b))
            .collect();
        chunks.push(c.ok_or_else(|| bad(format!("offset {o:?} from chunk {src} overflows")))?);
    }
    for (g, group) in ragged.groups.iter().enumerate() {
        for (r, row) in group.chunks_exact(ncols).enumerate() {
            let (perm, vis) = if has_perm {
                (row[0], &row[1..])
            } else {
                (0, row)
            };
            let order = lehmer_decode(perm, width).ok_or_else(|| {
                bad(format!(
                    "group {g} row {r}: perm_idx {perm} is not a permutation of {width}"
                ))
            })?;
            let mut ends: Vec<(&[i64], u64)> = vec![(&[], 0); width];
            for (i, (&v, c)) in vis.iter().zip(&chunks).enumerate() {
                let v = u64::try_from(v)
                    .map_err(|_| bad(format!("group {g} row {r}: negative vertex row {v}")))?;
                ends[order[i]] = (c.as_slice(), v);
            }
            links.push(&ends).map_err(blob_err(ckey.to_owned()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_cells_are_errors_naming_the_cell() {
        let mut links = CrossChunkLinks::new(2, 3);
        let src = ChunkKey(vec![0, 0, 0]);
        let offs = vec![vec![1, 0, 0]];
        // a perm_idx out of range
        let blob = RaggedLinks {
            link_width: 3,
            groups: vec![vec![7, 0, 1]],
        }
        .encode()
        .unwrap();
        let cell = |key| Cell {
            src: &src,
            base: src.coords(),
            offsets: &offs,
            has_perm: true,
            key,
        };
        let e = push_cell(&mut links, &blob, &cell("0/links/0/+1.0.0/c/2/2/2"));
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("0/links/0/+1.0.0/c/2/2/2"));
        // truncated bytes
        let e = push_cell(&mut links, &blob[..blob.len() - 3], &cell("K"));
        assert!(e.unwrap_err().to_string().contains('K'));
        // a swap restores the written order
        let blob = RaggedLinks {
            link_width: 3,
            groups: vec![vec![1, 4, 9]],
        }
        .encode()
        .unwrap();
        push_cell(&mut links, &blob, &cell("K")).unwrap();
        assert_eq!(links.endpoint(0, 0), Some((&[1i64, 0, 0][..], 9)));
        assert_eq!(links.endpoint(0, 1), Some((&[0i64, 0, 0][..], 4)));
    }
}
