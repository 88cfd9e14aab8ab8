//! The error type of the crate: every variant names the file (or store key) at fault.

use std::path::{Path, PathBuf};

use zv_core::codec::CodecError;

/// Errors of reading and converting legacy stores.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
    /// A metadata file is not valid JSON.
    #[error("{}: invalid JSON: {source}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: serde_json::Error,
    },
    /// A file's content disagrees with the format or with the metadata.
    #[error("{}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A valid file that zv cannot read safely (object dtype, nested columns, …).
    #[error("{}: not supported: {what}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What is not supported.
        what: String,
    },
    /// A blosc frame could not be decoded (or encoded).
    #[error("{}: {source}", path.display())]
    Codec {
        /// The chunk file.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: CodecError,
    },
    /// A requested region does not fit the array.
    #[error("{}: region {region}: {reason}", path.display())]
    Region {
        /// The array's directory.
        path: PathBuf,
        /// The region, as written.
        region: String,
        /// What is wrong.
        reason: String,
    },
    /// Writing the converted Zarr v3 hierarchy failed.
    #[error("writing the Zarr v3 copy: {0}")]
    Target(#[from] zv_core::Error),
}

impl Error {
    /// An [`Error::Invalid`] for `path`.
    pub(crate) fn invalid(path: &Path, reason: impl Into<String>) -> Self {
        Error::Invalid {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }

    /// An [`Error::Unsupported`] for `path`.
    pub(crate) fn unsupported(path: &Path, what: impl Into<String>) -> Self {
        Error::Unsupported {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }

    /// The file (or directory) the error concerns, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Error::Io { path, .. }
            | Error::Json { path, .. }
            | Error::Invalid { path, .. }
            | Error::Unsupported { path, .. }
            | Error::Codec { path, .. }
            | Error::Region { path, .. } => Some(path),
            Error::Target(_) => None,
        }
    }
}

/// The result type of the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
