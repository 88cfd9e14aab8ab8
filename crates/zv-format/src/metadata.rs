//! ZV metadata: the root (`zarr_vectors` + NGFF `multiscales`), levels (`zarr_vectors_level`),
//! chunk keys and the per-array group attributes.
//!
//! Parsing follows "read liberally" (`docs/format-decisions.md`): optional fields take the
//! reference's defaults, integer and float JSON numbers are both accepted, unknown keys are
//! kept; but a missing required field, a value of the wrong type, or a `zv_version` outside
//! 0.7.x is an error that names the document.
//!
//! | module | what |
//! |---|---|
//! | `chunk_key` | [`ChunkKey`], [`chunk_of`] |
//! | `root` | [`RootMetadata`], [`Axis`], [`Dataset`], [`parse_version`] |
//! | `level` | [`LevelMetadata`] |
//! | [`arrays`] | typed models of the per-array group attributes (`vertices`, `links/<d>`, …) |

pub mod arrays;
mod chunk_key;
pub(crate) mod json;
mod level;
mod root;

use serde_json::{Map, Value};

pub use chunk_key::{chunk_of, ChunkKey};
pub use json::MAX_BINS_PER_CHUNK;
pub use level::LevelMetadata;
pub use root::{
    parse_version, Axis, Dataset, Layout, RootMetadata, CROSS_CHUNK_STRATEGIES,
    CROSS_LEVEL_STORAGES, LINKS_CONVENTIONS, OBJECT_INDEX_CONVENTIONS,
};

/// A JSON object.
pub type JsonObject = Map<String, Value>;

/// The `zv_version` this crate writes.
pub const ZV_VERSION: &str = "0.7.0";

/// The `zv_version` of stores this crate writes in the ZV 0.9 layout: the zarr-vectors
/// release whose reading they follow.
pub const ZV09_VERSION: &str = "0.9.2";
