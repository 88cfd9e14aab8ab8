//! # zv-testkit-geometry — random geometry and the write → read round-trip check
//!
//! Test helpers for the ZV format (`zv-format`), kept apart from `zv-testkit` so that the
//! store and codec conformance suites depend on `zv-core` only:
//!
//! - [`strategy`]: [`geometry_document`], a proptest strategy for random "zv-geometry/1"
//!   documents of every geometry type;
//! - [`round_trip`]: [`check_round_trip`], which writes a document through the streaming
//!   writer and compares what the reader and the exporter give back.
//!
//! This crate depends on `zv-format` without its default features, so it never turns plugins
//! on by itself: the crate that runs the checks chooses them. The generated documents use the
//! `blosc`, `zstd`, `gzip` and `crc32c` codecs, so [`check_round_trip`] needs a build of
//! `zv-format` with those features (its default features include them).
//!
//! These are test helpers: [`check_round_trip`] reports a difference as an `Err` description
//! (for `TestCaseError::fail`), and may panic on a document it was not built for (one that
//! [`geometry_document`] does not generate).
//!
//! ```text
//! // in a test crate with zv-format's default features:
//! proptest! {
//!     #[test]
//!     fn round_trip(doc in zv_testkit_geometry::geometry_document(), batch in 1usize..12) {
//!         let store = std::sync::Arc::new(zv_store_mem::MemoryStore::new());
//!         zv_testkit_geometry::check_round_trip(&doc, store, batch).map_err(TestCaseError::fail)?;
//!     }
//! }
//! ```

pub mod round_trip;
pub mod strategy;

pub use round_trip::check_round_trip;
pub use strategy::geometry_document;
