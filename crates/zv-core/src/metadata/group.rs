//! The group document: [`GroupMetadata`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::document::{check_header, header, parse_object, split_extra, take_opt, with_extra};
use super::{to_pretty, JsonObject, MetadataError};

/// Keys of a group document that this crate interprets or tolerates.
const GROUP_KEYS: &[&str] = &["zarr_format", "node_type", "attributes"];

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

    pub(super) fn from_object(map: &mut JsonObject) -> Result<Self, MetadataError> {
        check_header(map, "group")?;
        let attributes: JsonObject = take_opt(map, "attributes")?.unwrap_or_default();
        let extra = split_extra(map, GROUP_KEYS)?;
        Ok(Self { attributes, extra })
    }

    /// The document as a JSON value, keys in a stable order.
    pub fn to_value(&self) -> Value {
        let mut m = header("group");
        m.insert("attributes".into(), Value::Object(self.attributes.clone()));
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

    #[test]
    fn group_documents() {
        let g = GroupMetadata::from_json(
            br#"{"zarr_format":3,"node_type":"group","consolidated_metadata":null}"#,
        )
        .unwrap();
        assert!(g.attributes.is_empty());
        assert_eq!(g.to_value()["consolidated_metadata"], Value::Null);
    }
}
