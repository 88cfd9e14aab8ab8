//! The error type of node and array operations.

use crate::codec::CodecError;
use crate::grid::RegionError;
use crate::key::KeyError;
use crate::metadata::MetadataError;
use crate::store::StoreError;

/// Errors of hierarchy and array operations. Each carries the key or path it concerns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A store operation failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A key, path or name was invalid.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A `zarr.json` could not be parsed.
    #[error("`{key}`: {source}")]
    Metadata {
        /// The key of the document.
        key: String,
        /// What was wrong.
        #[source]
        source: MetadataError,
    },
    /// The codec pipeline of an array could not be built.
    #[error("array `{path}`: {source}")]
    Pipeline {
        /// The array path.
        path: String,
        /// What was wrong.
        #[source]
        source: CodecError,
    },
    /// Encoding or decoding a chunk failed.
    #[error("chunk `{key}`: {source}")]
    Chunk {
        /// The chunk key.
        key: String,
        /// What was wrong.
        #[source]
        source: CodecError,
    },
    /// No node exists at the path.
    #[error("no node at `{path}` (no `{key}`)")]
    NodeNotFound {
        /// The node path.
        path: String,
        /// The metadata key that is missing.
        key: String,
    },
    /// The node is not of the expected kind.
    #[error("`{path}` is a {actual}, not a {expected}")]
    NodeKind {
        /// The node path.
        path: String,
        /// What was expected.
        expected: &'static str,
        /// What is there.
        actual: &'static str,
    },
    /// A region was invalid.
    #[error("array `{path}`: {source}")]
    Region {
        /// The array path.
        path: String,
        /// What was wrong.
        #[source]
        source: RegionError,
    },
    /// Input data did not fit the array or region.
    #[error("array `{path}`: {reason}")]
    InvalidInput {
        /// The array path.
        path: String,
        /// What was wrong.
        reason: String,
    },
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
