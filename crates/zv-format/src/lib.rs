//! # zv-format — the Zarr Vectors (ZV 0.7) format
//!
//! The ZV hierarchy on top of the Zarr v3 layer of `zv-core`. This crate also decides which
//! plugins a program gets, through Cargo features:
//!
//! | feature | enables |
//! |---|---|
//! | `fs` | the filesystem store (`file://`, plain paths) |
//! | `mem` | the in-memory store (`memory://`) |
//! | `blosc`, `zstd`, `gzip`, `crc32c` | those codecs of `zv-codecs` |
//!
//! `bytes`, `transpose` and `vlen-bytes` are always available. A codec left out by the
//! features is still known by name, and asking for it says which feature to enable:
//!
//! ```
//! zv_format::link_plugins();
//! let bytes = zv_core::plugin::codec_plugin("bytes");
//! assert!(bytes.is_ok());
//! ```

pub use zv_core;

/// Makes sure the plugin crates selected by the features are linked, so that their
/// registrations are visible. Call it once before resolving codecs or stores by name (the
/// readers and writers of this crate do).
pub fn link_plugins() {
    zv_codecs::link();
    #[cfg(feature = "fs")]
    zv_store_fs::link();
    #[cfg(feature = "mem")]
    zv_store_mem::link();
}

pub mod blob;
pub mod dump;
pub mod error;
pub mod layout;
pub mod metadata;
pub mod reader;

pub use error::{Error, Result};
pub use reader::{Level, ZvStore};
