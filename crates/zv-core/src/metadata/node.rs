//! A document of either kind: [`NodeMetadata`], dispatching on `node_type`.

use serde_json::Value;

use super::document::parse_object;
use super::{invalid, ArrayMetadata, GroupMetadata, JsonObject, MetadataError};

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
