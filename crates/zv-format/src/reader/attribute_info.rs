//! Per-row attributes and how they are stored ([`AttributeInfo`]): vertex attributes (one
//! blob per chunk), fragment attributes (one row per fragment of a chunk) and link attributes
//! (one row per link row of a chunk).

use zv_core::data_type::DataType;

use super::{blob_err, delta_name, Level};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::attributes::{AttributeRows, Dictionary};
use crate::metadata::arrays::RowAttributeArray;
use crate::metadata::{ChunkKey, JsonObject, Layout};
use crate::names;

/// How an attribute is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeInfo {
    /// The attribute name.
    pub name: String,
    /// The stored data type.
    pub data_type: DataType,
    /// `channel_names`, if recorded.
    pub channel_names: Option<Vec<String>>,
    /// The dictionary of a categorical attribute.
    pub dictionary: Option<Dictionary>,
    /// `level_delta` (link and cross-chunk link attributes), if given.
    pub level_delta: Option<i32>,
    /// The array group's attributes, verbatim.
    pub attributes: JsonObject,
}

impl AttributeInfo {
    /// Channels per row when recorded (`channel_names`), else `None` (inferred from sizes).
    pub fn channels(&self) -> Option<usize> {
        self.channel_names.as_ref().map(Vec::len)
    }
}

impl Level {
    /// How the attribute `name` whose group is `group` is stored (float32 without `dtype`),
    /// read from the group document (see [`Level::attribute_info`], which reads it once).
    pub(crate) fn read_attribute_info(&self, group: &str, name: &str) -> Result<AttributeInfo> {
        let key = join(&[group, "zarr.json"]);
        let attributes = self.blobs.group_attributes(group)?.unwrap_or_default();
        let model = RowAttributeArray::from_attributes(&attributes, &key)?;
        Ok(AttributeInfo {
            name: name.to_owned(),
            data_type: model.dtype,
            channel_names: model.channel_names,
            dictionary: model.dictionary,
            level_delta: model.level_delta,
            attributes,
        })
    }

    /// `info` (of the attribute group `group`, a folder for delta `delta`) if its stored
    /// `level_delta`, when given, names that delta; else an error naming the group document.
    pub(crate) fn of_delta(info: AttributeInfo, group: &str, delta: i32) -> Result<AttributeInfo> {
        match info.level_delta {
            Some(d) if d != delta => Err(Error::metadata(
                join(&[group, "zarr.json"]),
                format!("`level_delta` is {d}, but the folder is for delta {delta}"),
            )),
            _ => Ok(info),
        }
    }

    /// Reads the typed rows of an attribute blob at `path` that belongs to `rows` rows; a
    /// missing blob is `None`, or an error naming `required` when given.
    pub(crate) fn attribute_blob(
        &self,
        path: &str,
        info: &AttributeInfo,
        rows: u64,
        required: Option<String>,
    ) -> Result<Option<AttributeRows>> {
        match (self.blobs.read_bytes(path)?, required) {
            (None, Some(what)) => Err(Error::Missing {
                key: self.blobs.missing_key(path),
                what,
            }),
            (None, None) => Ok(None),
            (Some(b), _) => {
                // a 0.9 cell is named by its stored chunk
                let key = match self.blobs.layout() {
                    Layout::ChunkGrid => self.blobs.missing_key(path),
                    _ => join(&[path, "c/0"]),
                };
                AttributeRows::decode(&b, info.data_type, rows, info.channels())
                    .map(Some)
                    .map_err(blob_err(key))
            }
        }
    }

    /// The vertex attribute names (folders of `vertex_attributes/`).
    pub fn vertex_attribute_names(&self) -> Result<Vec<String>> {
        self.children_of(names::VERTEX_ATTRIBUTES)
    }

    /// How vertex attribute `name` is stored.
    pub fn vertex_attribute_info(&self, name: &str) -> Result<AttributeInfo> {
        self.attribute_info(&self.p(&[names::VERTEX_ATTRIBUTES, name]), name)
    }

    /// How every vertex attribute is stored, in name order.
    pub fn vertex_attribute_infos(&self) -> Result<Vec<AttributeInfo>> {
        Ok(self.shared_vertex_attribute_infos()?.as_ref().clone())
    }

    /// The rows of vertex attribute `name` in chunk `key` (`rows` = the chunk's vertex rows);
    /// `None` if the chunk has no blob for it.
    /// A chunk with vertex rows but no blob for the attribute is an error; a chunk without
    /// rows may lack it.
    pub fn vertex_attribute(
        &self,
        info: &AttributeInfo,
        key: &ChunkKey,
        rows: u64,
    ) -> Result<Option<AttributeRows>> {
        let path = self.chunk_blob(&[names::VERTEX_ATTRIBUTES, &info.name], key);
        let required = (rows > 0).then(|| {
            format!(
                "vertex attribute `{}` for the {rows} rows of chunk {key}",
                info.name
            )
        });
        self.attribute_blob(&path, info, rows, required)
    }

    /// The fragment attribute names (folders of `fragment_attributes/`).
    pub fn fragment_attribute_names(&self) -> Result<Vec<String>> {
        self.children_of(names::FRAGMENT_ATTRIBUTES)
    }

    /// How fragment attribute `name` is stored.
    pub fn fragment_attribute_info(&self, name: &str) -> Result<AttributeInfo> {
        self.attribute_info(&self.p(&[names::FRAGMENT_ATTRIBUTES, name]), name)
    }

    /// The rows of fragment attribute `name` in chunk `key`, one per fragment of the chunk's
    /// `vertex_fragments` (`fragments` of them); `None` if the chunk has no blob for it.
    pub fn fragment_attribute(
        &self,
        info: &AttributeInfo,
        key: &ChunkKey,
        fragments: u64,
    ) -> Result<Option<AttributeRows>> {
        let array = [names::FRAGMENT_ATTRIBUTES, &info.name];
        self.attribute_blob(&self.chunk_blob(&array, key), info, fragments, None)
    }

    /// Link attribute names (folders of `link_attributes/`).
    pub fn link_attribute_names(&self) -> Result<Vec<String>> {
        self.check_v09_unread_links()?;
        self.children_of(names::LINK_ATTRIBUTES)
    }

    /// How link attribute `name` of `delta` is stored (in a ZV 0.9 store, read from its
    /// segment arrays).
    pub fn link_attribute_info(&self, name: &str, delta: i32) -> Result<AttributeInfo> {
        if self.blobs.layout() == Layout::ChunkGrid {
            return self.v09_link_attribute_info(name, delta);
        }
        let group = self.p(&[names::LINK_ATTRIBUTES, name, &delta_name(delta)]);
        Self::of_delta(self.attribute_info(&group, name)?, &group, delta)
    }

    /// The values of a link attribute for the `rows` link rows of chunk `key` (a chunk with
    /// link rows but no blob is an error). In a ZV 0.9 store, the cell of the attribute's
    /// all-zero offsets segment.
    pub fn link_attribute(
        &self,
        info: &AttributeInfo,
        delta: i32,
        key: &ChunkKey,
        rows: u64,
    ) -> Result<Option<AttributeRows>> {
        let path = self.chunk_blob(&[&self.link_attribute_rows_array(&info.name, delta)?], key);
        let required = (rows > 0).then(|| {
            format!(
                "link attribute `{}` for the {rows} link rows of chunk {key}",
                info.name
            )
        });
        self.attribute_blob(&path, info, rows, required)
    }
}
