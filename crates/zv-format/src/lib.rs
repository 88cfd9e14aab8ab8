//! # zv-format — the Zarr Vectors (ZV 0.7) format
//!
//! The ZV hierarchy on top of the Zarr v3 layer of `zv-core`:
//!
//! - [`reader`]: open any ZV 0.7 store ([`ZvStore`]) and answer by level, chunk, object,
//!   group and bounding box;
//! - [`dump`]: a store's content as "zv-dump/1" JSON (`zv dump`);
//! - [`layout`]: the binary framings inside ZV blobs (fragment index, manifests, links, …);
//! - [`metadata`], [`blob`]: root and level metadata, blob access.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/zv-0.7/points_basic.zarr");
//! let store = zv_format::ZvStore::open_url(path.to_str().unwrap())?;
//! let level = store.level(0)?;
//! let cell = level.object(0)?;                  // one object: its vertices and attributes
//! println!("object 0 has {} points", cell.vertices.len());
//! let group = level.group_objects(1)?;          // the objects of group 1
//! let near_origin = level.query_box(&[0.0; 3], &[30.0; 3])?;
//! assert!(!group.is_empty() && !near_origin.positions.is_empty());
//! # Ok(()) }
//! ```
//!
//! This crate also decides which plugins a program gets, through Cargo features:
//!
//! | feature | enables |
//! |---|---|
//! | `fs` | the filesystem store (`file://`, plain paths) |
//! | `mem` | the in-memory store (`memory://`) |
//! | `blosc`, `zstd`, `gzip`, `crc32c` | those codecs of `zv-codecs` |
//!
//! `bytes`, `transpose` and `vlen-bytes` are always available. A codec left out by the
//! features is still known by name, and asking for it says which feature to enable.

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
pub mod document;
pub mod dump;
pub mod error;
pub mod export;
pub mod geometry;
pub mod import;
pub mod layout;
pub mod metadata;
pub mod names;
pub mod reader;
pub mod writer;

pub use error::{Error, Result};
pub use geometry::Geometry;
pub use reader::{Level, ZvStore};
