//! # zv-format — the Zarr Vectors (ZV 0.7) format
//!
//! The ZV hierarchy on top of the Zarr v3 layer of `zv-core`:
//!
//! - [`reader`]: open any ZV 0.7 store ([`ZvStore`]) and answer by level, chunk, object,
//!   group and bounding box;
//! - [`validate`]: conformance levels 1–5 (`zv validate`);
//! - [`dump`]: a store's content as "zv-dump/1" JSON (`zv dump`);
//! - [`migrate`]: a store rewritten in the other layout, ZV 0.7 ↔ 0.9 (`zv migrate`);
//! - [`layout`]: the binary framings inside ZV blobs (fragment index, manifests, links, …);
//! - [`metadata`], [`blob`]: root and level metadata, blob access.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//! use zv_format::writer::{WriterOptions, ZvWriter};
//! use zv_format::{Geometry, ZvStore};
//! // a point cloud in memory: objects 0 and 1, object 1 alone in group 1
//! let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
//! let options = WriterOptions::new(Geometry::PointCloud, vec![50.0, 50.0, 50.0]);
//! let mut w = ZvWriter::create(store.clone(), options)?;
//! let points = vec![vec![1.0, 2.0, 3.0], vec![20.0, 5.0, 8.0], vec![70.0, 60.0, 10.0]];
//! w.add_vertices(&points, Some(&[0, 0, 1]), &Default::default())?;
//! w.set_groups(BTreeMap::from([(0, vec![0]), (1, vec![1])]), BTreeMap::new());
//! w.finish()?;
//!
//! let store = ZvStore::open(store)?;
//! let level = store.level(0)?;
//! let cell = level.object(0)?;                  // one object: its vertices and attributes
//! println!("object 0 has {} points", cell.vertices.len());
//! let group = level.group_objects(1)?;          // the objects of group 1
//! let near_origin = level.query_box(&[0.0; 3], &[30.0; 3])?;
//! assert_eq!((group.len(), near_origin.positions.len()), (1, 2));
//! # Ok(()) }
//! ```
//!
//! This crate also decides which plugins a program gets, through Cargo features:
//!
//! | feature | enables |
//! |---|---|
//! | `fs` | the filesystem store (`file://`, plain paths) |
//! | `mem` | the in-memory store (`memory://`) |
//! | `object` | object stores (`s3://`, `gs://`, `az://`, `abfs[s]://`) and read-only `http(s)://` (not a default) |
//! | `blosc`, `zstd`, `gzip`, `crc32c` | those codecs of `zv-codecs` |
//! | `sharding` | the `sharding_indexed` codec of `zv-codecs` |
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
    #[cfg(feature = "object")]
    zv_store_object::link();
}

pub mod blob;
pub mod document;
pub mod dump;
pub mod error;
pub mod export;
pub mod geometry;
pub mod import;
mod io_pool;
pub mod layout;
pub mod metadata;
pub mod migrate;
pub mod names;
pub mod parts;
pub mod progress;
pub mod pyramid;
pub mod reader;
mod serial;
mod short_copy;
pub mod validate;
pub mod writer;

pub use error::{Error, Result};
pub use geometry::Geometry;
pub use reader::{Level, ZvStore};
