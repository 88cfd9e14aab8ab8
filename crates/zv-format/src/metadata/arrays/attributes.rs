//! The models of attribute groups: row-aligned attributes (vertex, fragment, link and
//! cross-chunk link attributes) and dense attributes (object and group attributes), with the
//! `dtype` spellings they accept and the dictionary (categorical) keys they carry.

use serde_json::Value;
use zv_core::data_type::DataType;

use super::super::json::{as_uint, opt_value, uint_list, unknown_keys};
use super::{
    accepted_kind, at, delta, document, finish, is_discriminator, one_of, put, string, ZvArray,
};
use crate::error::{Error, Result};
use crate::layout::attributes::Dictionary;
use crate::metadata::JsonObject;

/// The keys of a dictionary encoding (written by [`Dictionary::to_attributes`]).
const DICTIONARY_KEYS: &[&str] = &["encoding", "categories", "ordered", "_FillValue"];

/// The `dtype` of an attribute group: a Zarr v3 name (`float32`) or a NumPy type string
/// (`<f4`, `|u1`, …); `default` when absent or `null`. A variable-length type, an unknown name
/// or a non-string is an error naming `key`.
pub fn parse_dtype(attributes: &JsonObject, key: &str, default: DataType) -> Result<DataType> {
    match attributes.get("dtype") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(s)) => {
            let name = s.trim_start_matches(['<', '>', '|', '=']);
            let name = match name {
                "f4" => "float32",
                "f8" => "float64",
                "f2" => "float16",
                "i1" => "int8",
                "i2" => "int16",
                "i4" => "int32",
                "i8" => "int64",
                "u1" => "uint8",
                "u2" => "uint16",
                "u4" => "uint32",
                "u8" => "uint64",
                "b1" => "bool",
                other => other,
            };
            DataType::from_name(name)
                .filter(|d| !d.is_variable())
                .ok_or_else(|| Error::metadata(key, format!("unsupported dtype `{s}`")))
        }
        Some(other) => Err(Error::metadata(
            key,
            format!("dtype {other} is not a string"),
        )),
    }
}

/// What every attribute group has: its name, data type, channel names and dictionary.
struct Common {
    name: Option<String>,
    dtype: DataType,
    channel_names: Option<Vec<String>>,
    dictionary: Option<Dictionary>,
}

impl Common {
    fn read(attributes: &JsonObject, key: &str, default: DataType) -> Result<Self> {
        let name = opt_value(attributes, "name", string).map_err(at(key))?;
        let channel_names = match attributes.get("channel_names") {
            None | Some(Value::Null) => None,
            // read liberally: non-string names are kept as their JSON text
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect(),
            ),
            Some(other) => {
                return Err(Error::metadata(
                    key,
                    format!("channel_names {other} is not a list"),
                ))
            }
        };
        // plain values (no `encoding`, or `raw`) or a dictionary; nothing else is read
        one_of(
            opt_value(attributes, "encoding", string).map_err(at(key))?,
            "encoding",
            &["raw", "dictionary"],
            key,
        )?;
        let dictionary = Dictionary::from_attributes(attributes).map_err(|source| Error::Blob {
            key: key.to_owned(),
            source,
        })?;
        Ok(Self {
            name,
            dtype: parse_dtype(attributes, key, default)?,
            channel_names,
            dictionary,
        })
    }

    /// The keys of `attributes` that are neither read by [`Common::read`] (dictionary keys
    /// only with a dictionary) nor in `own`, nor a known discriminator.
    fn extra(&self, attributes: &JsonObject, known_kind: bool, own: &[&str]) -> JsonObject {
        unknown_keys(attributes, |k| {
            is_discriminator(k, known_kind, attributes)
                || matches!(k, "name" | "dtype" | "channel_names")
                || (self.dictionary.is_some() && DICTIONARY_KEYS.contains(&k))
                || own.contains(&k)
        })
    }
}

/// Inserts the dictionary keys and then `channel_names` (or the other way round).
fn put_dictionary_and_names(
    m: &mut JsonObject,
    dictionary: Option<&Dictionary>,
    channel_names: Option<&Vec<String>>,
    names_first: bool,
) {
    let names = channel_names.map(|n| Value::from(n.clone()));
    if names_first {
        put(m, "channel_names", names.clone());
    }
    if let Some(d) = dictionary {
        d.to_attributes(m);
    }
    if !names_first {
        put(m, "channel_names", names);
    }
}

/// Which row-aligned attribute a group holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowAttributeKind {
    /// `vertex_attributes/<n>` (`zv_array: "attribute"`).
    Vertex,
    /// `fragment_attributes/<n>` (`fragment_attribute`).
    Fragment,
    /// `link_attributes/<n>/<d>` (`link_attribute`).
    Link,
    /// `cross_chunk_link_attributes/<n>/<d>` (`cross_chunk_link_attribute`).
    CrossChunkLink,
}

const ROW_KINDS: [(RowAttributeKind, ZvArray); 4] = [
    (RowAttributeKind::Vertex, ZvArray::VertexAttribute),
    (RowAttributeKind::Fragment, ZvArray::FragmentAttribute),
    (RowAttributeKind::Link, ZvArray::LinkAttribute),
    (
        RowAttributeKind::CrossChunkLink,
        ZvArray::CrossChunkLinkAttribute,
    ),
];

/// A row-aligned attribute group: `{"zv_array": …, "name": n, "dtype": …}`, with
/// `channel_names` and the dictionary keys where they apply, `level_delta` for (cross-chunk)
/// link attributes, and `num_links` and `shape` for cross-chunk link attributes.
///
/// Written key order: discriminator, `name`, `dtype`, `level_delta`, `num_links`, `shape`,
/// then `channel_names` before the dictionary keys for vertex attributes (and groups without
/// a discriminator), after them for the other kinds, as the writer does.
#[derive(Debug, Clone, PartialEq)]
pub struct RowAttributeArray {
    /// The discriminator found (`None` if absent or unknown).
    pub kind: Option<RowAttributeKind>,
    /// `name`, if given (the folder name is authoritative).
    pub name: Option<String>,
    /// The stored data type (`float32` when absent); the codes' type for a dictionary.
    pub dtype: DataType,
    /// `channel_names`, if given.
    pub channel_names: Option<Vec<String>>,
    /// The dictionary of a categorical attribute.
    pub dictionary: Option<Dictionary>,
    /// `level_delta` (link and cross-chunk link attributes), if given.
    pub level_delta: Option<i32>,
    /// `num_links` (cross-chunk link attributes), if given.
    pub num_links: Option<u64>,
    /// `shape` (cross-chunk link attributes: `[M]` or `[M, C]`), if given.
    pub shape: Option<Vec<u64>>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl RowAttributeArray {
    /// An attribute `name` of `kind` stored as `dtype`, nothing else set.
    pub fn new(kind: RowAttributeKind, name: &str, dtype: DataType) -> Self {
        Self {
            kind: Some(kind),
            name: Some(name.to_owned()),
            dtype,
            channel_names: None,
            dictionary: None,
            level_delta: None,
            num_links: None,
            shape: None,
            extra: JsonObject::new(),
        }
    }

    /// Channels per row when recorded (`channel_names`), else `None` (inferred from sizes).
    pub fn channels(&self) -> Option<usize> {
        self.channel_names.as_ref().map(Vec::len)
    }

    /// Reads the attributes of a row-aligned attribute group; `key` names its `zarr.json`.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let accepted: Vec<ZvArray> = ROW_KINDS.iter().map(|(_, z)| z.clone()).collect();
        let zv = accepted_kind(attributes, key, &accepted)?;
        let common = Common::read(attributes, key, DataType::Float32)?;
        let err = at(key);
        Ok(Self {
            kind: ROW_KINDS
                .iter()
                .find(|(_, z)| Some(z) == zv.as_ref())
                .map(|(k, _)| *k),
            level_delta: opt_value(attributes, "level_delta", delta).map_err(&err)?,
            num_links: opt_value(attributes, "num_links", as_uint).map_err(&err)?,
            shape: opt_value(attributes, "shape", uint_list).map_err(&err)?,
            extra: common.extra(
                attributes,
                zv.is_some(),
                &["level_delta", "num_links", "shape"],
            ),
            name: common.name,
            dtype: common.dtype,
            channel_names: common.channel_names,
            dictionary: common.dictionary,
        })
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let zv = ROW_KINDS
            .iter()
            .find(|(k, _)| Some(*k) == self.kind)
            .map(|(_, z)| z);
        let mut m = document(zv);
        put(&mut m, "name", self.name.as_deref());
        m.insert("dtype".into(), Value::from(self.dtype.name()));
        put(&mut m, "level_delta", self.level_delta);
        put(&mut m, "num_links", self.num_links);
        put(&mut m, "shape", self.shape.clone());
        let names_first = matches!(self.kind, None | Some(RowAttributeKind::Vertex));
        put_dictionary_and_names(
            &mut m,
            self.dictionary.as_ref(),
            self.channel_names.as_ref(),
            names_first,
        );
        finish(m, &self.extra)
    }
}

/// Which dense attribute a group holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenseAttributeKind {
    /// `object_attributes/<n>` (`zv_array: "object_attribute"`).
    Object,
    /// `group_attributes/<n>` (`groupings_attribute`, the reference's legacy literal).
    Group,
}

/// A dense attribute group: `{"zv_array": …, "name": n, "dtype": …, "num_channels": C,
/// "shape": [B(, C)]}`, plus `has_present_mask` for object attributes, then the dictionary
/// keys and `channel_names` where they apply (the writer's order). `num_channels` comes from
/// the reference's create call and can be stale: trust `shape`.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseAttributeArray {
    /// The discriminator found (`None` if absent or unknown).
    pub kind: Option<DenseAttributeKind>,
    /// `name`, if given (the folder name is authoritative).
    pub name: Option<String>,
    /// The stored data type (`float64` when absent).
    pub dtype: DataType,
    /// `num_channels`, if given.
    pub num_channels: Option<u64>,
    /// `shape`, if given (else derived from the data length).
    pub shape: Option<Vec<u64>>,
    /// `has_present_mask`, if given (a mask is required only when it is `true`).
    pub has_present_mask: Option<bool>,
    /// The dictionary of a categorical attribute.
    pub dictionary: Option<Dictionary>,
    /// `channel_names`, if given.
    pub channel_names: Option<Vec<String>>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

impl DenseAttributeArray {
    /// The attribute `name` of `kind`: `rows` rows of `channels` values of `dtype` (shape
    /// `[rows]` for one channel, else `[rows, channels]`); object attributes start without a
    /// present mask.
    pub fn new(
        kind: DenseAttributeKind,
        name: &str,
        dtype: DataType,
        rows: u64,
        channels: u64,
    ) -> Self {
        Self {
            kind: Some(kind),
            name: Some(name.to_owned()),
            dtype,
            num_channels: Some(channels),
            shape: Some(if channels > 1 {
                vec![rows, channels]
            } else {
                vec![rows]
            }),
            has_present_mask: (kind == DenseAttributeKind::Object).then_some(false),
            dictionary: None,
            channel_names: None,
            extra: JsonObject::new(),
        }
    }

    /// Whether the group says a `present_mask` is stored.
    pub fn expects_present_mask(&self) -> bool {
        self.has_present_mask == Some(true)
    }

    /// Reads the attributes of a dense attribute group; `key` names its `zarr.json`.
    pub fn from_attributes(attributes: &JsonObject, key: &str) -> Result<Self> {
        let accepted = [ZvArray::ObjectAttribute, ZvArray::GroupAttribute];
        let zv = accepted_kind(attributes, key, &accepted)?;
        let common = Common::read(attributes, key, DataType::Float64)?;
        let err = at(key);
        Ok(Self {
            kind: zv.as_ref().map(|z| {
                if *z == ZvArray::GroupAttribute {
                    DenseAttributeKind::Group
                } else {
                    DenseAttributeKind::Object
                }
            }),
            num_channels: opt_value(attributes, "num_channels", as_uint).map_err(&err)?,
            shape: opt_value(attributes, "shape", uint_list).map_err(&err)?,
            has_present_mask: opt_value(attributes, "has_present_mask", Value::as_bool)
                .map_err(&err)?,
            extra: common.extra(
                attributes,
                zv.is_some(),
                &["num_channels", "shape", "has_present_mask"],
            ),
            name: common.name,
            dtype: common.dtype,
            dictionary: common.dictionary,
            channel_names: common.channel_names,
        })
    }

    /// The attributes, as the writer writes them.
    pub fn to_attributes(&self) -> JsonObject {
        let zv = self.kind.map(|k| match k {
            DenseAttributeKind::Object => ZvArray::ObjectAttribute,
            DenseAttributeKind::Group => ZvArray::GroupAttribute,
        });
        let mut m = document(zv.as_ref());
        put(&mut m, "name", self.name.as_deref());
        m.insert("dtype".into(), Value::from(self.dtype.name()));
        put(&mut m, "num_channels", self.num_channels);
        put(&mut m, "shape", self.shape.clone());
        put(&mut m, "has_present_mask", self.has_present_mask);
        put_dictionary_and_names(
            &mut m,
            self.dictionary.as_ref(),
            self.channel_names.as_ref(),
            false,
        );
        finish(m, &self.extra)
    }
}
