//! A document of either kind: [`NodeMetadata`], dispatching on `node_type`.

use serde_json::Value;

use super::deferred::DeferredAttributes;
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
        Self::from_object(parse_object(bytes)?)
    }

    /// [`NodeMetadata::from_json`], leaving the user attributes named in `keys` unparsed:
    /// they are not in the result's attributes but returned beside it as JSON text (checked
    /// to be JSON), in document order. For attributes that are large and seldom needed (a
    /// list of a thousand chunk keys costs most of a document's parse; scanning it as text
    /// costs a fifth of that). A document [`NodeMetadata::from_json`] refuses is refused
    /// with its error.
    pub fn from_json_deferring(
        bytes: &[u8],
        keys: &[&str],
    ) -> Result<(Self, DeferredAttributes), MetadataError> {
        match super::deferred::parse_deferring(bytes, keys) {
            Some((map, deferred)) => Self::from_object(map).map(|m| (m, deferred)),
            // not an object, or not JSON: the usual parse gives the usual error
            None => Self::from_json(bytes).map(|m| (m, Vec::new())),
        }
    }

    fn from_object(mut map: JsonObject) -> Result<Self, MetadataError> {
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
