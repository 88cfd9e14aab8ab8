//! # zv-core — the Zarr v3 layer of zv
//!
//! The small, slow-moving core that codec and store plugins build against:
//!
//! - [`key`] and [`node`]: validated store keys, prefixes, node paths and names;
//! - [`store`]: the capability-split store traits ([`store::ReadableStore`],
//!   [`store::WritableStore`], [`store::ListableStore`], [`store::Store`]);
//! - [`metadata`], [`data_type`]: serde models of `zarr.json`, data types and fill values;
//! - [`grid`]: the regular chunk grid and regions;
//! - [`codec`]: the three codec traits and the [`codec::CodecChain`] pipeline;
//! - [`metered`]: a store wrapper counting requests and bytes;
//! - [`plugin`]: registries of codecs (by name) and stores (by URL scheme);
//! - [`array`], [`group`]: creating, opening and reading/writing arrays and groups.
//!
//! zv-core registers no codec or store itself; link `zv-codecs`, `zv-store-fs` and
//! `zv-store-mem` (or use `zv-format`, which does) to get them.
//!
//! ```
//! use zv_core::{data_type::DataType, metadata::ArrayMetadata, metadata::ExtensionMetadata};
//! let meta = ArrayMetadata::new(vec![100, 100], vec![32, 32], DataType::Float32,
//!     vec![ExtensionMetadata::with_configuration("bytes", serde_json::json!({"endian": "little"}))])?;
//! let doc = String::from_utf8(meta.to_json_pretty()).unwrap();
//! assert!(doc.contains("\"chunk_shape\": [\n        32,"));
//! # Ok::<(), zv_core::metadata::MetadataError>(())
//! ```

pub mod array;
pub mod codec;
pub mod data_type;
pub mod error;
pub mod grid;
pub mod group;
pub mod key;
pub mod metadata;
pub mod metered;
pub mod node;
pub mod plugin;
pub mod store;
mod zeroed;

pub use error::{Error, Result};

/// Re-exported so that plugin crates use the same `inventory` as the registries.
pub use inventory;
