//! Serde models of the Zarr v3 `zarr.json` documents (final Zarr v3 core specification).
//!
//! [`ArrayMetadata`] and [`GroupMetadata`] parse and validate a document; unknown top-level
//! keys that the specification allows (objects with `"must_understand": false`, and
//! zarr-python's `consolidated_metadata`) are kept in `extra` and written back unchanged.
//! Documents are written pretty-printed with keys in a stable order.
//!
//! ```
//! use zv_core::metadata::{ArrayMetadata, NodeMetadata};
//! let doc = r#"{"zarr_format":3,"node_type":"array","shape":[10],"data_type":"uint8",
//!   "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},
//!   "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},
//!   "fill_value":0,"codecs":[{"name":"bytes"}],"attributes":{}}"#;
//! let meta = ArrayMetadata::from_json(doc.as_bytes())?;
//! assert_eq!(meta.chunk_shape(), &[4]);
//! assert!(matches!(NodeMetadata::from_json(doc.as_bytes())?, NodeMetadata::Array(_)));
//! # Ok::<(), zv_core::metadata::MetadataError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::data_type::{DataType, FillValue, FillValueError};

/// JSON object type used for attributes and configurations.
pub type JsonObject = Map<String, Value>;

/// Why a metadata document was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// Not valid JSON, or a field has the wrong JSON type or is missing.
    #[error("malformed zarr.json: {0}")]
    Json(#[from] serde_json::Error),
    /// A field has an invalid value.
    #[error("invalid zarr.json: {0}")]
    Invalid(String),
    /// The fill value does not fit the data type.
    #[error(transparent)]
    FillValue(#[from] FillValueError),
    /// A feature the document needs is not supported.
    #[error("unsupported in zarr.json: {0}")]
    Unsupported(String),
}

fn invalid(msg: impl Into<String>) -> MetadataError {
    MetadataError::Invalid(msg.into())
}

/// A named extension point with optional configuration: a codec, a storage transformer, a
/// chunk grid. Accepts both `"name"` and `{"name": …, "configuration": {…}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "ExtensionRepr")]
pub struct ExtensionMetadata {
    /// The registered name (`"blosc"`, `"bytes"`, …).
    pub name: String,
    /// The configuration object, if present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configuration: Option<JsonObject>,
    /// `must_understand`, if present (absent means `true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub must_understand: Option<bool>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ExtensionRepr {
    Name(String),
    Full {
        name: String,
        #[serde(default)]
        configuration: Option<JsonObject>,
        #[serde(default)]
        must_understand: Option<bool>,
    },
}

impl From<ExtensionRepr> for ExtensionMetadata {
    fn from(r: ExtensionRepr) -> Self {
        match r {
            ExtensionRepr::Name(name) => Self {
                name,
                configuration: None,
                must_understand: None,
            },
            ExtensionRepr::Full {
                name,
                configuration,
                must_understand,
            } => Self {
                name,
                configuration,
                must_understand,
            },
        }
    }
}

impl ExtensionMetadata {
    /// An extension with a name and no configuration.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            configuration: None,
            must_understand: None,
        }
    }

    /// An extension with a configuration object (`value` must be a JSON object; anything
    /// else gives an empty configuration).
    pub fn with_configuration(name: impl Into<String>, value: Value) -> Self {
        Self {
            name: name.into(),
            configuration: match value {
                Value::Object(m) => Some(m),
                _ => Some(Map::new()),
            },
            must_understand: None,
        }
    }

    /// Whether a reader may ignore this extension when it does not know it.
    pub fn may_ignore(&self) -> bool {
        self.must_understand == Some(false)
    }

    /// The configuration, or an empty object.
    pub fn configuration_or_empty(&self) -> JsonObject {
        self.configuration.clone().unwrap_or_default()
    }
}

/// How chunk grid coordinates become store keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKeyEncoding {
    /// `default`: `c` + separator + coordinates joined by the separator (`c/1/2`); `c` for 0-d.
    Default {
        /// `/` or `.`.
        separator: char,
    },
    /// `v2`: coordinates joined by the separator (`1.2`); `0` for 0-d.
    V2 {
        /// `.` or `/`.
        separator: char,
    },
}

impl Default for ChunkKeyEncoding {
    fn default() -> Self {
        ChunkKeyEncoding::Default { separator: '/' }
    }
}

impl ChunkKeyEncoding {
    /// The key of the chunk at grid coordinates `coords`, relative to the array.
    pub fn encode(&self, coords: &[u64]) -> String {
        match *self {
            ChunkKeyEncoding::Default { separator } => {
                let mut key = String::with_capacity(1 + 4 * coords.len());
                key.push('c');
                for c in coords {
                    key.push(separator);
                    // writing to a String cannot fail
                    let _ = write!(key, "{c}");
                }
                key
            }
            ChunkKeyEncoding::V2 { separator } => {
                if coords.is_empty() {
                    return "0".to_owned();
                }
                let parts: Vec<String> = coords.iter().map(u64::to_string).collect();
                parts.join(&separator.to_string())
            }
        }
    }

    /// Parses a chunk key (relative to the array) back into grid coordinates of `ndim`
    /// dimensions; `None` if the key is not a chunk key of this encoding.
    pub fn decode(&self, key: &str, ndim: usize) -> Option<Vec<u64>> {
        let rest = match *self {
            ChunkKeyEncoding::Default { separator } => {
                if ndim == 0 {
                    return (key == "c").then(Vec::new);
                }
                key.strip_prefix('c')?.strip_prefix(separator)?
            }
            ChunkKeyEncoding::V2 { .. } if ndim == 0 => return (key == "0").then(Vec::new),
            ChunkKeyEncoding::V2 { .. } => key,
        };
        let sep = match *self {
            ChunkKeyEncoding::Default { separator } | ChunkKeyEncoding::V2 { separator } => {
                separator
            }
        };
        let coords: Option<Vec<u64>> = rest
            .split(sep)
            .map(|p| {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    None
                } else {
                    p.parse().ok()
                }
            })
            .collect();
        coords.filter(|c| c.len() == ndim)
    }

    fn to_metadata(self) -> Value {
        let (name, sep) = match self {
            ChunkKeyEncoding::Default { separator } => ("default", separator),
            ChunkKeyEncoding::V2 { separator } => ("v2", separator),
        };
        serde_json::json!({"name": name, "configuration": {"separator": sep.to_string()}})
    }

    fn from_metadata(ext: &ExtensionMetadata) -> Result<Self, MetadataError> {
        let sep = match ext.configuration.as_ref().and_then(|c| c.get("separator")) {
            None => None,
            Some(Value::String(s)) if s == "/" || s == "." => s.chars().next(),
            Some(other) => {
                return Err(invalid(format!(
                    "chunk_key_encoding separator must be \"/\" or \".\", got {other}"
                )))
            }
        };
        match ext.name.as_str() {
            "default" => Ok(ChunkKeyEncoding::Default {
                separator: sep.unwrap_or('/'),
            }),
            "v2" => Ok(ChunkKeyEncoding::V2 {
                separator: sep.unwrap_or('.'),
            }),
            other => Err(MetadataError::Unsupported(format!(
                "chunk_key_encoding `{other}` (supported: default, v2)"
            ))),
        }
    }
}

/// Keys of an array document that this crate interprets.
const ARRAY_KEYS: &[&str] = &[
    "zarr_format",
    "node_type",
    "shape",
    "data_type",
    "chunk_grid",
    "chunk_key_encoding",
    "fill_value",
    "codecs",
    "attributes",
    "storage_transformers",
    "dimension_names",
];

/// Keys of a group document that this crate interprets or tolerates.
const GROUP_KEYS: &[&str] = &["zarr_format", "node_type", "attributes"];

/// Keys that are not part of the core specification but are written by common
/// implementations; kept as they are.
const TOLERATED_KEYS: &[&str] = &["consolidated_metadata"];

fn split_extra(
    map: &mut JsonObject,
    known: &[&str],
) -> Result<BTreeMap<String, Value>, MetadataError> {
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    let mut extra = BTreeMap::new();
    for key in unknown {
        let Some(value) = map.remove(&key) else {
            continue;
        };
        let may_ignore = TOLERATED_KEYS.contains(&key.as_str())
            || value
                .as_object()
                .and_then(|o| o.get("must_understand"))
                .and_then(Value::as_bool)
                == Some(false);
        if !may_ignore {
            return Err(MetadataError::Unsupported(format!(
                "unknown key `{key}` (an unknown key must be an object with \"must_understand\": false)"
            )));
        }
        extra.insert(key, value);
    }
    Ok(extra)
}

fn take<T: serde::de::DeserializeOwned>(
    map: &mut JsonObject,
    key: &str,
) -> Result<T, MetadataError> {
    let value = map
        .remove(key)
        .ok_or_else(|| invalid(format!("missing field `{key}`")))?;
    serde_json::from_value(value).map_err(|e| invalid(format!("field `{key}`: {e}")))
}

fn take_opt<T: serde::de::DeserializeOwned>(
    map: &mut JsonObject,
    key: &str,
) -> Result<Option<T>, MetadataError> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|e| invalid(format!("field `{key}`: {e}"))),
    }
}

fn check_header(map: &mut JsonObject, node_type: &str) -> Result<(), MetadataError> {
    match map.remove("zarr_format") {
        Some(Value::Number(n)) if n.as_u64() == Some(3) => {}
        Some(other) => {
            return Err(MetadataError::Unsupported(format!(
                "zarr_format {other} (this build reads Zarr v3)"
            )))
        }
        None => return Err(invalid("missing field `zarr_format`")),
    }
    match map.remove("node_type") {
        Some(Value::String(s)) if s == node_type => Ok(()),
        Some(other) => Err(invalid(format!(
            "node_type is {other}, expected \"{node_type}\""
        ))),
        None => Err(invalid("missing field `node_type`")),
    }
}

fn parse_object(bytes: &[u8]) -> Result<JsonObject, MetadataError> {
    match serde_json::from_slice::<Value>(bytes)? {
        Value::Object(m) => Ok(m),
        _ => Err(invalid("the document is not a JSON object")),
    }
}

/// The metadata of a Zarr v3 array.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayMetadata {
    /// The array shape.
    pub shape: Vec<u64>,
    /// The element data type.
    pub data_type: DataType,
    /// The chunk shape of the regular grid.
    chunk_shape: Vec<u64>,
    /// How chunk coordinates become keys.
    pub chunk_key_encoding: ChunkKeyEncoding,
    /// The fill value of missing chunks and edge padding.
    pub fill_value: FillValue,
    /// The codec pipeline, in encode order.
    pub codecs: Vec<ExtensionMetadata>,
    /// User attributes.
    pub attributes: JsonObject,
    /// Storage transformers (none are supported; an entry that must be understood is refused
    /// when the array is opened).
    pub storage_transformers: Vec<ExtensionMetadata>,
    /// Optional dimension names (one per dimension, each a string or null).
    pub dimension_names: Option<Vec<Option<String>>>,
    /// Unknown top-level keys allowed by the specification, kept for the round trip.
    pub extra: BTreeMap<String, Value>,
}

impl ArrayMetadata {
    /// A new array document with the regular grid `chunk_shape`, the default chunk key
    /// encoding (`/`), the zero fill value and the given codecs.
    pub fn new(
        shape: Vec<u64>,
        chunk_shape: Vec<u64>,
        data_type: DataType,
        codecs: Vec<ExtensionMetadata>,
    ) -> Result<Self, MetadataError> {
        let meta = Self {
            shape,
            data_type,
            chunk_shape,
            chunk_key_encoding: ChunkKeyEncoding::default(),
            fill_value: FillValue::zero(data_type),
            codecs,
            attributes: JsonObject::new(),
            storage_transformers: Vec::new(),
            dimension_names: None,
            extra: BTreeMap::new(),
        };
        meta.validate()?;
        Ok(meta)
    }

    /// The chunk shape of the regular grid.
    pub fn chunk_shape(&self) -> &[u64] {
        &self.chunk_shape
    }

    /// Replaces the chunk shape (validated against the array shape).
    pub fn set_chunk_shape(&mut self, chunk_shape: Vec<u64>) -> Result<(), MetadataError> {
        let old = std::mem::replace(&mut self.chunk_shape, chunk_shape);
        if let Err(e) = self.validate() {
            self.chunk_shape = old;
            return Err(e);
        }
        Ok(())
    }

    /// Checks the internal consistency of the document.
    pub fn validate(&self) -> Result<(), MetadataError> {
        if self.chunk_shape.len() != self.shape.len() {
            return Err(invalid(format!(
                "chunk_shape {:?} has {} dimensions but shape {:?} has {}",
                self.chunk_shape,
                self.chunk_shape.len(),
                self.shape,
                self.shape.len()
            )));
        }
        if self.chunk_shape.contains(&0) {
            return Err(invalid(format!(
                "chunk_shape {:?} has a zero extent",
                self.chunk_shape
            )));
        }
        if let Some(names) = &self.dimension_names {
            if names.len() != self.shape.len() {
                return Err(invalid(format!(
                    "dimension_names has {} entries but the array has {} dimensions",
                    names.len(),
                    self.shape.len()
                )));
            }
        }
        match self.data_type.size() {
            Some(size) if self.fill_value.as_bytes().len() != size => Err(invalid(format!(
                "fill value has {} bytes, data type {} has {size}",
                self.fill_value.as_bytes().len(),
                self.data_type
            ))),
            _ => Ok(()),
        }
    }

    /// Parses and validates an array `zarr.json`.
    pub fn from_json(bytes: &[u8]) -> Result<Self, MetadataError> {
        let mut map = parse_object(bytes)?;
        Self::from_object(&mut map)
    }

    fn from_object(map: &mut JsonObject) -> Result<Self, MetadataError> {
        check_header(map, "array")?;
        let shape: Vec<u64> = take(map, "shape")?;
        let data_type: DataType = take(map, "data_type")?;
        let grid: ExtensionMetadata = take(map, "chunk_grid")?;
        if grid.name != "regular" {
            return Err(MetadataError::Unsupported(format!(
                "chunk_grid `{}` (supported: regular)",
                grid.name
            )));
        }
        let chunk_shape: Vec<u64> = match grid
            .configuration
            .as_ref()
            .and_then(|c| c.get("chunk_shape"))
        {
            Some(v) => serde_json::from_value(v.clone())
                .map_err(|e| invalid(format!("chunk_grid chunk_shape: {e}")))?,
            None => return Err(invalid("chunk_grid has no configuration.chunk_shape")),
        };
        let cke: ExtensionMetadata = take_opt(map, "chunk_key_encoding")?
            .unwrap_or_else(|| ExtensionMetadata::new("default"));
        let chunk_key_encoding = ChunkKeyEncoding::from_metadata(&cke)?;
        let fill_json = map
            .remove("fill_value")
            .ok_or_else(|| invalid("missing field `fill_value`"))?;
        let fill_value = FillValue::from_json(data_type, &fill_json)?;
        let codecs: Vec<ExtensionMetadata> = take(map, "codecs")?;
        let attributes: JsonObject = take_opt(map, "attributes")?.unwrap_or_default();
        let storage_transformers: Vec<ExtensionMetadata> =
            take_opt(map, "storage_transformers")?.unwrap_or_default();
        let dimension_names: Option<Vec<Option<String>>> = take_opt(map, "dimension_names")?;
        let extra = split_extra(map, ARRAY_KEYS)?;
        let meta = Self {
            shape,
            data_type,
            chunk_shape,
            chunk_key_encoding,
            fill_value,
            codecs,
            attributes,
            storage_transformers,
            dimension_names,
            extra,
        };
        meta.validate()?;
        Ok(meta)
    }

    /// The document as a JSON value, keys in a stable order.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("zarr_format".into(), Value::from(3));
        m.insert("node_type".into(), Value::from("array"));
        m.insert("shape".into(), Value::from(self.shape.clone()));
        m.insert("data_type".into(), Value::from(self.data_type.name()));
        m.insert(
            "chunk_grid".into(),
            serde_json::json!({"name": "regular", "configuration": {"chunk_shape": self.chunk_shape}}),
        );
        m.insert(
            "chunk_key_encoding".into(),
            self.chunk_key_encoding.to_metadata(),
        );
        m.insert("fill_value".into(), self.fill_value.to_json(self.data_type));
        m.insert(
            "codecs".into(),
            serde_json::to_value(&self.codecs).unwrap_or(Value::Array(Vec::new())),
        );
        m.insert("attributes".into(), Value::Object(self.attributes.clone()));
        if let Some(names) = &self.dimension_names {
            m.insert(
                "dimension_names".into(),
                serde_json::to_value(names).unwrap_or(Value::Null),
            );
        }
        m.insert(
            "storage_transformers".into(),
            serde_json::to_value(&self.storage_transformers).unwrap_or(Value::Array(Vec::new())),
        );
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The document as pretty-printed UTF-8 JSON.
    pub fn to_json_pretty(&self) -> Vec<u8> {
        to_pretty(&self.to_value())
    }
}

/// Pretty-prints a JSON value (two-space indent) followed by a newline.
pub fn to_pretty(value: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(value).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}

/// The metadata of a Zarr v3 group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GroupMetadata {
    /// User attributes.
    pub attributes: JsonObject,
    /// Unknown top-level keys allowed by the specification, kept for the round trip.
    pub extra: BTreeMap<String, Value>,
}

impl GroupMetadata {
    /// A group document with these attributes.
    pub fn new(attributes: JsonObject) -> Self {
        Self {
            attributes,
            extra: BTreeMap::new(),
        }
    }

    /// Parses and validates a group `zarr.json`.
    pub fn from_json(bytes: &[u8]) -> Result<Self, MetadataError> {
        let mut map = parse_object(bytes)?;
        Self::from_object(&mut map)
    }

    fn from_object(map: &mut JsonObject) -> Result<Self, MetadataError> {
        check_header(map, "group")?;
        let attributes: JsonObject = take_opt(map, "attributes")?.unwrap_or_default();
        let extra = split_extra(map, GROUP_KEYS)?;
        Ok(Self { attributes, extra })
    }

    /// The document as a JSON value, keys in a stable order.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("zarr_format".into(), Value::from(3));
        m.insert("node_type".into(), Value::from("group"));
        m.insert("attributes".into(), Value::Object(self.attributes.clone()));
        for (k, v) in &self.extra {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The document as pretty-printed UTF-8 JSON.
    pub fn to_json_pretty(&self) -> Vec<u8> {
        to_pretty(&self.to_value())
    }
}

/// The metadata of any node.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeMetadata {
    /// An array.
    Array(ArrayMetadata),
    /// A group.
    Group(GroupMetadata),
}

impl NodeMetadata {
    /// Parses a `zarr.json` of either kind (dispatching on `node_type`).
    pub fn from_json(bytes: &[u8]) -> Result<Self, MetadataError> {
        let mut map = parse_object(bytes)?;
        match map.get("node_type") {
            Some(Value::String(s)) if s == "array" => {
                ArrayMetadata::from_object(&mut map).map(NodeMetadata::Array)
            }
            Some(Value::String(s)) if s == "group" => {
                GroupMetadata::from_object(&mut map).map(NodeMetadata::Group)
            }
            Some(other) => Err(invalid(format!(
                "node_type must be \"array\" or \"group\", got {other}"
            ))),
            None => Err(invalid("missing field `node_type`")),
        }
    }

    /// The document as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            NodeMetadata::Array(a) => a.to_value(),
            NodeMetadata::Group(g) => g.to_value(),
        }
    }

    /// The user attributes.
    pub fn attributes(&self) -> &JsonObject {
        match self {
            NodeMetadata::Array(a) => &a.attributes,
            NodeMetadata::Group(g) => &g.attributes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn array_doc() -> Value {
        json!({"zarr_format":3,"node_type":"array","shape":[10,7],"data_type":"float32",
            "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4,4]}},
            "chunk_key_encoding":{"name":"v2","configuration":{"separator":"/"}},
            "fill_value":"NaN","codecs":[{"name":"bytes","configuration":{"endian":"little"}},"crc32c"],
            "attributes":{"a":1},"dimension_names":["y",null],
            "ext":{"must_understand":false,"x":1},"storage_transformers":[]})
    }

    #[test]
    fn array_round_trip_keeps_unknown_keys() {
        let doc = array_doc();
        let meta = ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap();
        assert_eq!(
            meta.chunk_key_encoding,
            ChunkKeyEncoding::V2 { separator: '/' }
        );
        assert_eq!(meta.codecs[1].name, "crc32c");
        let back = meta.to_value();
        assert_eq!(back["ext"], doc["ext"]);
        assert_eq!(back["fill_value"], json!("NaN"));
        let again = ArrayMetadata::from_json(&meta.to_json_pretty()).unwrap();
        assert_eq!(again, meta);
    }

    #[test]
    fn malformed_documents_are_errors() {
        let cases: Vec<Value> = vec![
            json!([]),
            json!({"zarr_format":2,"node_type":"array"}),
            json!({"zarr_format":3}),
            {
                let mut d = array_doc();
                d["shape"] = json!("x");
                d
            },
            {
                let mut d = array_doc();
                d.as_object_mut().unwrap().remove("fill_value");
                d
            },
            {
                let mut d = array_doc();
                d["data_type"] = json!("float128");
                d
            },
            {
                let mut d = array_doc();
                d["chunk_grid"]["configuration"]["chunk_shape"] = json!([4]);
                d
            },
            {
                let mut d = array_doc();
                d["chunk_grid"]["configuration"]["chunk_shape"] = json!([0, 4]);
                d
            },
            {
                let mut d = array_doc();
                d["fill_value"] = json!("yes");
                d
            },
            {
                let mut d = array_doc();
                d["unknown"] = json!(1);
                d
            },
            {
                let mut d = array_doc();
                d["chunk_key_encoding"]["configuration"]["separator"] = json!("-");
                d
            },
            {
                let mut d = array_doc();
                d["dimension_names"] = json!(["a"]);
                d
            },
        ];
        for doc in cases {
            assert!(
                ArrayMetadata::from_json(doc.to_string().as_bytes()).is_err(),
                "{doc}"
            );
        }
        assert!(ArrayMetadata::from_json(b"{not json").is_err());
        assert!(GroupMetadata::from_json(b"{\"zarr_format\":3,\"node_type\":\"array\"}").is_err());
    }

    #[test]
    fn group_documents() {
        let g = GroupMetadata::from_json(
            br#"{"zarr_format":3,"node_type":"group","consolidated_metadata":null}"#,
        )
        .unwrap();
        assert!(g.attributes.is_empty());
        assert_eq!(g.to_value()["consolidated_metadata"], Value::Null);
    }

    #[test]
    fn chunk_keys() {
        let d = ChunkKeyEncoding::Default { separator: '/' };
        assert_eq!(d.encode(&[1, 23]), "c/1/23");
        assert_eq!(d.encode(&[]), "c");
        assert_eq!(d.decode("c/1/23", 2), Some(vec![1, 23]));
        assert_eq!(d.decode("c/1/23", 3), None);
        assert_eq!(d.decode("c", 0), Some(vec![]));
        let v2 = ChunkKeyEncoding::V2 { separator: '.' };
        assert_eq!(v2.encode(&[1, 23]), "1.23");
        assert_eq!(v2.encode(&[]), "0");
        assert_eq!(v2.decode("1.23", 2), Some(vec![1, 23]));
        assert_eq!(v2.decode("1.-3", 2), None);
    }
}
