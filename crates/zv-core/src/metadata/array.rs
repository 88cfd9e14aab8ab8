//! The array document: [`ArrayMetadata`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::document::{
    check_header, header, parse_object, split_extra, take, take_opt, with_extra,
};
use super::{invalid, to_pretty, ChunkKeyEncoding, ExtensionMetadata, JsonObject, MetadataError};
use crate::data_type::{DataType, FillValue};

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

    pub(super) fn from_object(map: &mut JsonObject) -> Result<Self, MetadataError> {
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
        let mut m = header("array");
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
        with_extra(m, &self.extra)
    }

    /// The document as pretty-printed UTF-8 JSON.
    pub fn to_json_pretty(&self) -> Vec<u8> {
        to_pretty(&self.to_value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::GroupMetadata;
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
}
