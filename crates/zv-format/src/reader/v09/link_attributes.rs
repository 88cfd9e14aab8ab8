//! ZV 0.9 link attributes (`docs/format-decisions.md`, "ZV 0.9 stores", "Link attributes").
//!
//! `link_attributes/<name>/<delta>` is a group (`zv_array: "link_attribute_family"`) that
//! mirrors the link family `links/<delta>`: one chunk-grid array per offsets segment, the
//! same cells, each cell the flat little-endian rows of its links cell's records in the same
//! order (no header; the width of a row is the array's `row_shape`). So
//!
//! - the all-zero segment's cell of chunk `k` is 0.7's `link_attributes/<name>/<d>/<k>` blob,
//!   one row per link row of the chunk, read through the 0.7 code once
//!   [`Level::link_attribute_rows_array`] names it;
//! - the other segments' cells, read in the order [`Level::v09_family`] reads the records,
//!   are 0.7's `cross_chunk_link_attributes/<name>/<d>` rows
//!   ([`Level::v09_cross_chunk_link_attribute`]).
//!
//! Every segment array holds the same `dtype`; an attribute cell must hold exactly one row
//! per record of its links cell, and a cell or segment the links do not have is an error.

use std::collections::BTreeSet;

use zv_core::data_type::DataType;

use super::super::{blob_err, delta_name, AttributeInfo, Level};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::layout::offset_links::intra_segment;
use crate::metadata::arrays::RowAttributeArray;
use crate::metadata::{ChunkKey, Layout};
use crate::names;

impl Level {
    /// The array of the per-chunk rows of link attribute `name` of `delta`, relative to the
    /// level: `link_attributes/<name>/<d>` (0.7), or the all-zero offsets segment under it
    /// (0.9).
    pub(crate) fn link_attribute_rows_array(&self, name: &str, delta: i32) -> Result<String> {
        let base = join(&[names::LINK_ATTRIBUTES, name, &delta_name(delta)]);
        if self.blobs.layout() != Layout::ChunkGrid {
            return Ok(base);
        }
        let (width, sid) = self.v09_family_shape(delta)?;
        Ok(join(&[&base, &intra_segment(sid, width)]))
    }

    /// How link attribute `name` of `delta` is stored in a 0.9 level: read from its all-zero
    /// segment array, else from its first segment (by name). A family without arrays is a
    /// `float32` attribute with no rows.
    pub(crate) fn v09_link_attribute_info(&self, name: &str, delta: i32) -> Result<AttributeInfo> {
        let group = self.p(&[names::LINK_ATTRIBUTES, name, &delta_name(delta)]);
        let intra = self.p(&[&self.link_attribute_rows_array(name, delta)?]);
        let mut segments = self.blobs.children(&group)?;
        segments.sort();
        let first = segments
            .iter()
            .map(|s| join(&[&group, s]))
            .find(|p| *p != intra);
        for path in std::iter::once(intra).chain(first) {
            if self.blobs.grid(&path)?.is_some() {
                return Self::of_delta(self.attribute_info(&path, name)?, &path, delta);
            }
        }
        let attributes = self.blobs.group_attributes(&group)?.unwrap_or_default();
        Ok(AttributeInfo {
            name: name.to_owned(),
            data_type: DataType::Float32,
            channel_names: None,
            dictionary: None,
            level_delta: Some(delta),
            attributes,
        })
    }

    /// The rows of link attribute `name` for the cross-chunk records of the 0.9 family
    /// `links/<delta>`, one per record in [`Level::v09_cross_chunk`]'s order; `None` without
    /// the attribute's group.
    pub(crate) fn v09_cross_chunk_link_attribute(
        &self,
        name: &str,
        delta: i32,
    ) -> Result<Option<AttributeRows>> {
        let group = self.p(&[names::LINK_ATTRIBUTES, name, &delta_name(delta)]);
        if !self.blobs.exists(&group)? {
            return Ok(None);
        }
        let info = self.link_attribute_info(name, delta)?;
        let segments = self.v09_family(delta)?.map(|(_, s)| s).unwrap_or_default();
        let intra = self.p(&[&self.link_attribute_rows_array(name, delta)?]);
        let known: BTreeSet<&str> = segments.iter().map(|s| s.segment.as_str()).collect();
        for seg in self.blobs.children(&group)? {
            let path = join(&[&group, &seg]);
            if path != intra && !known.contains(seg.as_str()) && self.blobs.grid(&path)?.is_some() {
                return Err(Error::inconsistent(
                    join(&[&path, "zarr.json"]),
                    format!(
                        "link attribute `{name}` has a segment `{seg}` that `links/{}` does not have",
                        delta_name(delta)
                    ),
                ));
            }
        }
        let mut out: Option<AttributeRows> = None;
        for seg in &segments {
            let path = join(&[&group, &seg.segment]);
            let akey = join(&[&path, "zarr.json"]);
            let records: usize = seg.cells.iter().map(|c| c.1).sum();
            let what = |n: usize, at: &str| {
                format!("link attribute `{name}` for the {n} records of `links/{delta}/{at}`")
            };
            let Some(grid) = self.blobs.grid(&path)? else {
                if records == 0 {
                    continue;
                }
                return Err(Error::Missing {
                    key: akey,
                    what: what(records, &seg.segment),
                });
            };
            let model = RowAttributeArray::from_attributes(grid.attributes(), &akey)?;
            if model.dtype != info.data_type {
                return Err(Error::metadata(
                    &akey,
                    format!(
                        "`dtype` is {}, but link attribute `{name}` is {} in its other segments",
                        model.dtype.name(),
                        info.data_type.name()
                    ),
                ));
            }
            let filed: BTreeSet<&ChunkKey> = seg.cells.iter().map(|c| &c.0).collect();
            if let Some(stray) = grid.keys()?.into_iter().find(|k| !filed.contains(k)) {
                return Err(Error::inconsistent(
                    grid.cell_store_key(&stray),
                    format!(
                        "a link attribute cell for chunk {stray}, whose `links/{delta}/{}` cell \
                         holds no records",
                        seg.segment
                    ),
                ));
            }
            for (src, n) in &seg.cells {
                let ckey = grid.cell_store_key(src);
                let bytes = grid.cell(src)?.ok_or_else(|| Error::Missing {
                    key: ckey.clone(),
                    what: what(*n, &format!("{}/{src}", seg.segment)),
                })?;
                let rows =
                    AttributeRows::decode(&bytes, info.data_type, *n as u64, info.channels())
                        .map_err(blob_err(ckey.clone()))?;
                match &mut out {
                    None => out = Some(rows),
                    Some(all) => all.extend(&rows).map_err(blob_err(ckey))?,
                }
            }
        }
        Ok(Some(out.unwrap_or_else(|| {
            AttributeRows::empty(info.data_type, info.channels().unwrap_or(1))
        })))
    }
}
