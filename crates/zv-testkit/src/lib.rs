//! # zv-testkit — conformance suites for zv plugins
//!
//! Public test helpers, so that third-party plugin authors can run the same checks as zv's own
//! crates:
//!
//! - [`store::check_store`]: a model-based property test (random sequences of `set`, `get`,
//!   ranged `get`, `delete`, `list`, `list_prefix`, `list_dir`, `delete_prefix` compared with a
//!   `BTreeMap`) plus concurrency checks, for any [`zv_core::store::Store`];
//! - [`codec::check_codec`]: round trips over random sizes and type sizes (0 and sizes that
//!   are not multiples of the type size included) and "arbitrary or damaged bytes never make
//!   `decode` panic", for any registered codec;
//! - [`fault::FaultyStore`]: a store whose k-th `set`, `get`, `list` or `sync` fails;
//! - [`alloc`]: a counting global allocator for "decoders allocate a bounded amount" checks;
//! - [`fixtures`]: the reference fixtures' writer arguments as zv-geometry/1 documents;
//! - [`data`]: a deterministic generator and a store's keys with their bytes;
//! - [`env`](mod@env): the workspace, fixtures and a zarr-python interpreter for integration
//!   tests;
//! - [`servers`]: an S3 server, a read-only HTTP server, a fault-injecting proxy and the
//!   Azure and GCS emulators on the loopback address, for object store tests;
//! - [`store::check_read_only_store`]: the read side of the store suite, for stores that
//!   cannot write (HTTP); [`store::check_reads`] without the refused writes.
//!
//! This crate depends on `zv-core` only, so store and codec plugins can run these suites
//! without pulling in `zv-format`. Random ZV geometry and the write → read round-trip check
//! live in `zv-testkit-geometry`.
//!
//! These are test helpers: they panic (through `assert!` and proptest) when a check fails.
//!
//! ```text
//! // in a store plugin's tests:
//! zv_testkit::store::check_store("my-store", || std::sync::Arc::new(MyStore::new()));
//! // in a codec plugin's tests:
//! zv_testkit::codec::check_codec(serde_json::json!({"name": "my-codec", "configuration": {}}));
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod alloc;
pub mod codec;
pub mod data;
pub mod env;
pub mod fault;
pub mod fixtures;
pub mod servers;
pub mod store;
