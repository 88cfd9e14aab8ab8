//! Typed models of the per-array group attributes: the `zarr.json` attributes of the group of
//! each logical array of a level (`<level>/vertices`, `<level>/links/<d>`, …;
//! `docs/format-decisions.md`, "ZV layer").
//!
//! Each model reads with `from_attributes(attributes, key)` and writes with `to_attributes()`:
//!
//! - **Read liberally**: the discriminator is `zv_array`, or the legacy `zvf_array` when
//!   `zv_array` is absent, and may be missing altogether (the reference leaves
//!   `link_fragments` as `{}`; intermediate groups have no attributes); `groupings` is read as
//!   `groups`; optional keys may be missing or `null`; integral floats are accepted where
//!   integers are expected; keys this crate does not interpret are kept in `extra` and written
//!   back after the known keys. A discriminator naming *another* known array is an error; one
//!   this crate does not know is kept in `extra` as found.
//! - **Write exactly what the writer writes**: known keys in the writer's order
//!   (`serde_json` keeps insertion order), the discriminator spelled as the 0.7.0 reference
//!   spells it (`attribute` for vertex attributes, `groupings_attribute` for group
//!   attributes), optional keys only when set.
//! - Bad stored values are an [`Error`](crate::Error) naming `key` (the group's `zarr.json`)
//!   and what was wrong; nothing allocates beyond the document.
//!
//! | model | group | replaces (writer.rs / reader.rs) |
//! |---|---|---|
//! | [`VerticesArray`] | `vertices` | the `0/vertices` `json!` of `ZvWriter::finish`; `Level::open`'s `data_type_attr` + float check |
//! | [`FragmentIndexArray`] | `vertex_fragments`, `link_fragments` | the `0/vertex_fragments` and `0/link_fragments` `json!` (the reader does not read them) |
//! | [`LinksArray`] | `links/<d>` | the `0/links/0` `json!`; `Level::links_info` |
//! | [`CrossChunkLinksArray`] | `cross_chunk_links/<d>` | the `0/cross_chunk_links/0` `json!`; the attribute part of `Level::cross_chunk_links` |
//! | [`ObjectIndexArray`] | `object_index` | the `0/object_index` `json!`; the attribute part of `Level::read_object_index` |
//! | [`GroupsArray`] | `groups` | the `0/groups` `json!` |
//! | [`RowAttributeArray`] | `vertex_attributes/<n>`, `fragment_attributes/<n>`, `link_attributes/<n>/<d>`, `cross_chunk_link_attributes/<n>/<d>` | the four attribute loops of `ZvWriter::finish`; `Level::attribute_info` (and the dtype lookup of dump.rs's cross-chunk link attributes) |
//! | [`DenseAttributeArray`] | `object_attributes/<n>`, `group_attributes/<n>` | `ZvWriter::write_dense`; the attribute part of `Level::dense_attributes` (`data_type_attr`, `shape_attr`, `has_present_mask`) |
//!
//! [`parse_dtype`] replaces the reader's `data_type_attr`.
//!
//! ```
//! use zv_format::metadata::arrays::LinksArray;
//! let attrs = serde_json::json!({"zv_array": "links", "dtype": "int64", "link_width": 2.0,
//!     "level_delta": 0, "comment": "kept"});
//! let links = LinksArray::from_attributes(attrs.as_object().unwrap(), "0/links/0/zarr.json")?;
//! assert_eq!((links.link_width, links.num_links), (2, None));
//! let back = serde_json::Value::Object(links.to_attributes());
//! assert_eq!(back, serde_json::json!({"zv_array": "links", "dtype": "int64", "link_width": 2,
//!     "level_delta": 0, "comment": "kept"}));
//! # Ok::<(), zv_format::Error>(())
//! ```

mod attributes;
mod structure;
#[cfg(test)]
mod tests;

use serde_json::Value;

use super::json::as_int;
use super::JsonObject;
use crate::error::{Error, Result};
use crate::names::{self, ZVF_ARRAY, ZV_ARRAY};

pub use attributes::{
    parse_dtype, DenseAttributeArray, DenseAttributeKind, RowAttributeArray, RowAttributeKind,
};
pub use structure::{
    CrossChunkLinksArray, FragmentIndexArray, FragmentIndexKind, GroupsArray, LinksArray,
    ObjectIndexArray, VerticesArray, FRAGMENT_INDEX_V1, VLEN_MANIFESTS_V1, VLEN_MANIFESTS_V2,
};

/// What a per-array group holds: the value of its `zv_array` discriminator.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ZvArray {
    /// `vertices`.
    Vertices,
    /// `vertex_fragments`.
    VertexFragments,
    /// `link_fragments`.
    LinkFragments,
    /// `links` (`links/<d>`).
    Links,
    /// `attribute` (`vertex_attributes/<n>`).
    VertexAttribute,
    /// `fragment_attribute` (`fragment_attributes/<n>`).
    FragmentAttribute,
    /// `link_attribute` (`link_attributes/<n>/<d>`).
    LinkAttribute,
    /// `cross_chunk_links` (`cross_chunk_links/<d>`).
    CrossChunkLinks,
    /// `cross_chunk_link_attribute` (`cross_chunk_link_attributes/<n>/<d>`).
    CrossChunkLinkAttribute,
    /// `object_index`.
    ObjectIndex,
    /// `object_attribute` (`object_attributes/<n>`).
    ObjectAttribute,
    /// `groups` (read also as `groupings`).
    Groups,
    /// `groupings_attribute` (`group_attributes/<n>`; the reference's legacy literal).
    GroupAttribute,
    /// A discriminator this crate does not know, as found.
    Other(String),
}

/// Every known discriminator with its spelling, as written.
const SPELLINGS: &[(ZvArray, &str)] = &[
    (ZvArray::Vertices, names::VERTICES),
    (ZvArray::VertexFragments, names::VERTEX_FRAGMENTS),
    (ZvArray::LinkFragments, names::LINK_FRAGMENTS),
    (ZvArray::Links, names::LINKS),
    (ZvArray::VertexAttribute, "attribute"),
    (ZvArray::FragmentAttribute, "fragment_attribute"),
    (ZvArray::LinkAttribute, "link_attribute"),
    (ZvArray::CrossChunkLinks, names::CROSS_CHUNK_LINKS),
    (
        ZvArray::CrossChunkLinkAttribute,
        "cross_chunk_link_attribute",
    ),
    (ZvArray::ObjectIndex, names::OBJECT_INDEX),
    (ZvArray::ObjectAttribute, "object_attribute"),
    (ZvArray::Groups, names::GROUPS),
    (ZvArray::GroupAttribute, "groupings_attribute"),
];

impl ZvArray {
    /// The discriminator for `name` (`groupings` is read as [`ZvArray::Groups`]).
    pub fn parse(name: &str) -> Self {
        if name == "groupings" {
            return ZvArray::Groups;
        }
        SPELLINGS
            .iter()
            .find(|(_, s)| *s == name)
            .map_or_else(|| ZvArray::Other(name.to_owned()), |(k, _)| k.clone())
    }

    /// The spelling written to `zv_array`.
    pub fn name(&self) -> &str {
        match self {
            ZvArray::Other(s) => s,
            known => SPELLINGS
                .iter()
                .find(|(k, _)| k == known)
                .map_or("", |(_, s)| s),
        }
    }

    /// The discriminator of a group's attributes: `zv_array`, else the legacy `zvf_array`;
    /// `None` if neither is present. A non-string value is an error naming `key`.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Option<Self>> {
        let found = attributes
            .get(ZV_ARRAY)
            .map(|v| (ZV_ARRAY, v))
            .or_else(|| attributes.get(ZVF_ARRAY).map(|v| (ZVF_ARRAY, v)));
        match found {
            None => Ok(None),
            Some((_, Value::String(s))) => Ok(Some(Self::parse(s))),
            Some((name, other)) => Err(Error::metadata(
                key,
                format!("`{name}` is {other}, not a string"),
            )),
        }
    }
}

/// The discriminator of `attributes` if it is one of `accepted`; `None` if it is absent or
/// unknown (an unknown one stays in the model's `extra`). Another known kind is an error.
fn accepted_kind(
    attributes: &JsonObject,
    key: &str,
    accepted: &[ZvArray],
) -> Result<Option<ZvArray>> {
    match ZvArray::from_attributes(attributes, key)? {
        None | Some(ZvArray::Other(_)) => Ok(None),
        Some(kind) if accepted.contains(&kind) => Ok(Some(kind)),
        Some(kind) => Err(Error::metadata(
            key,
            format!(
                "`zv_array` is `{}`, but this group holds {}",
                kind.name(),
                accepted
                    .iter()
                    .map(|k| format!("`{}`", k.name()))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        )),
    }
}

/// Whether `name` is the discriminator key that is consumed (not kept in `extra`): only when
/// the discriminator was a known kind, and only the key it was read from — `zv_array`, or the
/// legacy `zvf_array` when `zv_array` is absent. A `zvf_array` beside a `zv_array` is an
/// ordinary key, kept, so a document reads back equal after it is written (the writer writes
/// `zv_array`).
fn is_discriminator(name: &str, known: bool, attributes: &JsonObject) -> bool {
    known && (name == ZV_ARRAY || (name == ZVF_ARRAY && !attributes.contains_key(ZV_ARRAY)))
}

/// Starts a document with the discriminator `kind`.
fn document(kind: Option<&ZvArray>) -> JsonObject {
    let mut m = JsonObject::new();
    if let Some(kind) = kind {
        m.insert(ZV_ARRAY.into(), Value::from(kind.name()));
    }
    m
}

/// Inserts `key: value` when there is a value.
fn put<T: Into<Value>>(m: &mut JsonObject, key: &str, value: Option<T>) {
    if let Some(v) = value {
        m.insert(key.into(), v.into());
    }
}

/// Appends `extra` to a document (a key already there takes the value from `extra`).
fn finish(mut m: JsonObject, extra: &JsonObject) -> JsonObject {
    for (k, v) in extra {
        m.insert(k.clone(), v.clone());
    }
    m
}

/// `value` if it is one of `allowed`, else an error naming `key`, the attribute `name` and
/// the values allowed (an unknown enumeration value is never read silently).
pub(super) fn one_of(
    value: Option<String>,
    name: &str,
    allowed: &[&str],
    key: &str,
) -> Result<Option<String>> {
    match value {
        Some(v) if !allowed.contains(&v.as_str()) => Err(Error::metadata(
            key,
            format!(
                "`{name}` is `{v}`; this build reads {}",
                allowed
                    .iter()
                    .map(|a| format!("`{a}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        )),
        v => Ok(v),
    }
}

/// A string value, or `None` for anything else.
fn string(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// A level delta (`i32`; integral floats accepted).
fn delta(v: &Value) -> Option<i32> {
    as_int(v).and_then(|d| i32::try_from(d).ok())
}

/// Maps a description to a metadata error naming `key`.
fn at(key: &str) -> impl Fn(String) -> Error + '_ {
    move |reason| Error::metadata(key, reason)
}
