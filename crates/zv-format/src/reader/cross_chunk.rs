//! Cross-chunk links ([`CrossChunk`]): the level-global records of links whose endpoints lie
//! in different chunks (`cross_chunk_links/<delta>/data`), and their attributes
//! (`cross_chunk_link_attributes/<name>/<delta>/data`, one row per record).

use super::{blob_err, delta_name, AttributeInfo, Level};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::attributes::AttributeRows;
use crate::layout::cross_chunk::{CrossChunkLinks, RecordDecoder};
use crate::metadata::arrays::CrossChunkLinksArray;
use crate::metadata::{JsonObject, Layout};
use crate::names;

/// The cross-chunk links of one delta.
#[derive(Debug, Clone, PartialEq)]
pub struct CrossChunk {
    /// The level delta.
    pub delta: i32,
    /// The records.
    pub links: CrossChunkLinks,
    /// The group's attributes, verbatim.
    pub attributes: JsonObject,
}

/// What [`Level::visit_cross_chunk_links`] hands each batch of records to.
pub type RecordVisitor<'a> = dyn FnMut(&CrossChunkLinks) -> Result<()> + 'a;

impl Level {
    /// The cross-chunk link deltas present, ascending. In a ZV 0.9 store, the cross-level
    /// deltas of `links/` (its delta-0 records are read with the links).
    pub fn cross_chunk_deltas(&self) -> Result<Vec<i32>> {
        if self.blobs.layout() == Layout::ChunkGrid {
            let mut d = self.deltas_of(names::LINKS)?;
            d.retain(|&d| d != 0);
            return Ok(d);
        }
        self.deltas_of(names::CROSS_CHUNK_LINKS)
    }

    /// The cross-chunk link records of `delta` (`None` if there is no such group).
    /// In a ZV 0.9 store they are the records of `links/<delta>`'s segments other than the
    /// all-zero one.
    pub fn cross_chunk_links(&self, delta: i32) -> Result<Option<CrossChunk>> {
        if self.blobs.layout() == Layout::ChunkGrid {
            return self.v09_cross_chunk(delta);
        }
        Ok(self.v07_records(delta, None)?.map(|(c, _)| c))
    }

    /// The records of [`Level::cross_chunk_links`] handed to `visit` in their order, a batch
    /// at a time (the records of a stored chunk of `cross_chunk_links/<delta>/data`, or of
    /// a ZV 0.9 cell), so that no more than a batch is held. Returns the number of records
    /// (`None` if there is no such group). The checks are those of
    /// [`Level::cross_chunk_links`]; records visited before an error stay visited.
    pub fn visit_cross_chunk_links(
        &self,
        delta: i32,
        visit: &mut RecordVisitor<'_>,
    ) -> Result<Option<u64>> {
        if self.blobs.layout() == Layout::ChunkGrid {
            return self.v09_visit_cross_chunk(delta, visit);
        }
        Ok(self.v07_records(delta, Some(visit))?.map(|(_, n)| n))
    }

    /// The records of the ZV 0.7 group `cross_chunk_links/<delta>`, decoded a stored chunk
    /// of its `data` at a time: held whole (`visit` `None`), or handed to `visit` a stored
    /// chunk at a time (the records returned are then empty). With the record count.
    fn v07_records(
        &self,
        delta: i32,
        mut visit: Option<&mut RecordVisitor<'_>>,
    ) -> Result<Option<(CrossChunk, u64)>> {
        let group = self.p(&[names::CROSS_CHUNK_LINKS, &delta_name(delta)]);
        let key = join(&[&group, "zarr.json"]);
        let attributes = match self.blobs.group_attributes(&group)? {
            Some(a) => a,
            None if self.blobs.exists(&group)? => JsonObject::new(),
            None => return Ok(None),
        };
        let model = CrossChunkLinksArray::from_attributes(&attributes, &key)?;
        model.check(delta, &self.geometry, &key)?;
        let width = model.link_width;
        let sid = model.sid_ndim.unwrap_or(self.key_arity);
        let data_path = join(&[&group, names::DATA]);
        // decoded a stored chunk at a time: a large level's records are held once, as
        // values, not also as the bytes of their blob (or, visited, not held at all); an
        // error names the stored chunk whose bytes ended the records at fault
        let mut chunk_key = join(&[&data_path, "zarr.json"]);
        let mut decoder =
            RecordDecoder::new(width, sid).map_err(|e| blob_err(chunk_key.clone())(e))?;
        let mut first = true;
        let mut visited = 0u64;
        let found = self
            .blobs
            .read_bytes_pieces(&data_path, &mut |piece, total, key| {
                key.clone_into(&mut chunk_key);
                let bad = |e| blob_err(key.to_owned())(e);
                if std::mem::take(&mut first) {
                    match visit {
                        Some(_) => decoder.check(model.num_links, total).map_err(bad)?,
                        None => decoder.expect(model.num_links, total).map_err(bad)?,
                    }
                }
                decoder.push(piece);
                let Some(visit) = visit.as_mut() else {
                    return decoder.check_pushed().map_err(bad);
                };
                let batch = decoder.take_whole().map_err(bad)?;
                if !batch.is_empty() {
                    visited += batch.len() as u64;
                    visit(&batch)?;
                }
                Ok(())
            })?;
        // num_links is optional: without it, the data holds as many records as fit
        let links = match (found, model.num_links) {
            (true, n) => decoder
                .finish(n)
                .map_err(|e| blob_err(chunk_key.clone())(e))?,
            (false, None | Some(0)) => CrossChunkLinks::new(width, sid),
            (false, Some(n)) => {
                return Err(Error::Missing {
                    key: join(&[&data_path, "zarr.json"]),
                    what: format!("cross-chunk link data for {n} links"),
                })
            }
        };
        let records = visited + links.len() as u64;
        let links = match visit {
            Some(visit) if !links.is_empty() => {
                visit(&links)?;
                CrossChunkLinks::new(width, sid)
            }
            _ => links,
        };
        Ok(Some((
            CrossChunk {
                delta,
                links,
                attributes,
            },
            records,
        )))
    }

    /// The cross-chunk link attribute names (folders of `cross_chunk_link_attributes/`; in a
    /// ZV 0.9 store, the link attributes, whose families hold the cross-chunk rows too).
    pub fn cross_chunk_link_attribute_names(&self) -> Result<Vec<String>> {
        if self.blobs.layout() == Layout::ChunkGrid {
            return self.link_attribute_names();
        }
        self.children_of(names::CROSS_CHUNK_LINK_ATTRIBUTES)
    }

    /// How cross-chunk link attribute `name` of `delta` is stored (in a ZV 0.9 store, as the
    /// link attribute).
    pub fn cross_chunk_link_attribute_info(&self, name: &str, delta: i32) -> Result<AttributeInfo> {
        if self.blobs.layout() == Layout::ChunkGrid {
            return self.link_attribute_info(name, delta);
        }
        let group = self.p(&[names::CROSS_CHUNK_LINK_ATTRIBUTES, name, &delta_name(delta)]);
        Self::of_delta(self.attribute_info(&group, name)?, &group, delta)
    }

    /// The values of cross-chunk link attribute `name` for the records of `delta`, one row
    /// per record (as many rows as `cross_chunk_links/<delta>` has records, none without that
    /// group). An attribute without its group (`cross_chunk_link_attributes/<name>/<delta>`)
    /// is absent (`None`); a group without its `data` is an error. In a ZV 0.9 store, the rows
    /// of the attribute's segments other than the all-zero one, in the records' order.
    pub fn cross_chunk_link_attribute(
        &self,
        name: &str,
        delta: i32,
    ) -> Result<Option<AttributeRows>> {
        if self.blobs.layout() == Layout::ChunkGrid {
            return self.v09_cross_chunk_link_attribute(name, delta);
        }
        let info = self.cross_chunk_link_attribute_info(name, delta)?;
        let group = self.p(&[names::CROSS_CHUNK_LINK_ATTRIBUTES, name, &delta_name(delta)]);
        let records = self
            .cross_chunk_links(delta)?
            .map_or(0, |c| c.links.len() as u64);
        let required = self.blobs.exists(&group)?.then(|| {
            format!(
                "cross-chunk link attribute data (`{group}` holds attribute `{name}` of {records} records)"
            )
        });
        self.attribute_blob(&join(&[&group, names::DATA]), &info, records, required)
    }
}
