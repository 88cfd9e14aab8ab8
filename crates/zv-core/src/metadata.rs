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

mod array;
mod chunk_key;
mod deferred;
mod document;
mod extension;
mod group;
mod node;

use serde_json::{Map, Value};

pub use array::ArrayMetadata;

/// The most bytes a `zarr.json` document may hold when read (64 MiB): far more than any
/// array or group document needs (a ZV level document with every key is a few KiB), so a
/// value that large is not metadata.
pub const MAX_METADATA_BYTES: u64 = 64 << 20;
pub use chunk_key::ChunkKeyEncoding;
pub use deferred::DeferredAttributes;
pub use extension::ExtensionMetadata;
pub use group::GroupMetadata;
pub use node::NodeMetadata;

use crate::data_type::FillValueError;

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

/// Pretty-prints a JSON value (two-space indent) followed by a newline.
pub fn to_pretty(value: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(value).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}
