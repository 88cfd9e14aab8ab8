//! The error type of the ZV layer. Every variant names the store key (or path) concerned.

use zv_core::codec::CodecError;
use zv_core::store::StoreError;

use crate::layout::LayoutError;

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
    /// The store is not ZV 0.7.
    #[error("`{key}`: store is ZV {found}; this build reads 0.7.x")]
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
    /// Invalid input to a writer or query.
    #[error("invalid input: {0}")]
    InvalidInput(String),
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

    /// An inconsistency at `key`.
    pub fn inconsistent(key: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Inconsistent {
            key: key.into(),
            reason: reason.into(),
        }
    }
}
