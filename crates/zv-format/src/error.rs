//! The error type of the ZV layer. Every variant names the store key (or path) concerned, or,
//! for writer input, the item of the input ([`InputItem`]).

use std::fmt;
use std::path::PathBuf;

use zv_core::codec::CodecError;
use zv_core::store::StoreError;

use crate::layout::LayoutError;
use crate::metadata::ChunkKey;

/// Errors of reading and writing ZV stores.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A Zarr-layer operation failed.
    #[error(transparent)]
    Zarr(#[from] zv_core::Error),
    /// A `zarr.json` document or its ZV attributes are invalid.
    #[error("`{key}`: invalid metadata: {reason}")]
    Metadata {
        /// The key of the document.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The store is neither ZV 0.7 nor ZV 0.9.
    #[error("`{key}`: store is ZV {found}; this build reads 0.7.x and 0.9.x")]
    Version {
        /// The key of the root document.
        key: String,
        /// The `zv_version` found.
        found: String,
    },
    /// A blob could not be decoded.
    #[error("`{key}`: {source}")]
    Blob {
        /// The blob's key.
        key: String,
        /// What is wrong.
        #[source]
        source: LayoutError,
    },
    /// A blob's Zarr codecs failed.
    #[error("`{key}`: {source}")]
    Codec {
        /// The key of the chunk.
        key: String,
        /// What is wrong.
        #[source]
        source: CodecError,
    },
    /// A blob or node that must exist is missing.
    #[error("`{key}`: missing {what}")]
    Missing {
        /// The key (or path) that was looked up.
        key: String,
        /// What was expected there.
        what: String,
    },
    /// The store uses a feature this build does not support.
    #[error("`{key}`: unsupported: {what}")]
    Unsupported {
        /// The key concerned.
        key: String,
        /// What is unsupported.
        what: String,
    },
    /// Data is inconsistent across blobs (e.g. a manifest names a fragment that does not
    /// exist).
    #[error("`{key}`: inconsistent: {reason}")]
    Inconsistent {
        /// The key concerned.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// Invalid input to a writer or query (with no single place to name).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Invalid input to the writer at a known place of the input.
    #[error("invalid input: {item}: {reason}")]
    Input {
        /// Where the input is wrong.
        item: InputItem,
        /// What is wrong.
        reason: String,
    },
    /// A local file operation failed (e.g. in the writer's spill directory).
    #[error("`{}`: {source}", path.display())]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// What failed.
        #[source]
        source: std::io::Error,
    },
}

/// A place in the input of the writer, named by an [`Error::Input`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputItem {
    /// A writer option (`chunk_shape`, `bin_shape`, `codecs`, …).
    Option(&'static str),
    /// A vertex, by global index (the order vertices were added in).
    Vertex(u64),
    /// A polyline (the object of a polyline geometry), by index.
    Polyline(u64),
    /// A vertex of a polyline.
    PolylineVertex {
        /// The polyline's index.
        polyline: u64,
        /// The vertex's index within the polyline.
        vertex: u64,
    },
    /// A graph edge or skeleton link, by index.
    Edge(u64),
    /// A mesh face, by index.
    Face(u64),
    /// An object, by id.
    Object(u64),
    /// A group, by id.
    Group(u64),
    /// The object ids of the vertices.
    ObjectIds,
    /// An occupied chunk.
    Chunk(ChunkKey),
    /// One attribute.
    Attribute {
        /// What the attribute describes.
        kind: AttributeKind,
        /// Its name.
        name: String,
    },
    /// The set of attributes of one kind (their names).
    Attributes(AttributeKind),
}

/// What an attribute describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttributeKind {
    /// Vertex attributes: one row per vertex.
    Vertex,
    /// Link attributes: one row per edge or face.
    Link,
    /// Object attributes: one row per object.
    Object,
    /// Fragment attributes: one value per object, stored on each of its fragments.
    Fragment,
    /// Group attributes: one row per group.
    Group,
}

impl fmt::Display for AttributeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AttributeKind::Vertex => "vertex",
            AttributeKind::Link => "link",
            AttributeKind::Object => "object",
            AttributeKind::Fragment => "fragment",
            AttributeKind::Group => "group",
        })
    }
}

impl fmt::Display for InputItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputItem::Option(name) => write!(f, "option `{name}`"),
            InputItem::Vertex(v) => write!(f, "vertex {v}"),
            InputItem::Polyline(p) => write!(f, "polyline {p}"),
            InputItem::PolylineVertex { polyline, vertex } => {
                write!(f, "polyline {polyline} vertex {vertex}")
            }
            InputItem::Edge(e) => write!(f, "edge {e}"),
            InputItem::Face(x) => write!(f, "face {x}"),
            InputItem::Object(o) => write!(f, "object {o}"),
            InputItem::Group(g) => write!(f, "group {g}"),
            InputItem::ObjectIds => f.write_str("object ids"),
            InputItem::Chunk(k) => write!(f, "chunk {k}"),
            InputItem::Attribute { kind, name } => write!(f, "{kind} attribute `{name}`"),
            InputItem::Attributes(kind) => write!(f, "{kind} attributes"),
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A metadata error for `key`.
    pub fn metadata(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Metadata {
            key: key.into(),
            reason: reason.into(),
        }
    }

    /// Invalid writer input at `item`.
    pub fn input(item: InputItem, reason: impl Into<String>) -> Self {
        Error::Input {
            item,
            reason: reason.into(),
        }
    }

    /// Invalid writer input in attribute `name`, of kind `kind`.
    pub fn attribute(kind: AttributeKind, name: &str, reason: impl Into<String>) -> Self {
        Self::input(
            InputItem::Attribute {
                kind,
                name: name.to_owned(),
            },
            reason,
        )
    }

    /// An inconsistency at `key`.
    pub fn inconsistent(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Inconsistent {
            key: key.into(),
            reason: reason.into(),
        }
    }
}
