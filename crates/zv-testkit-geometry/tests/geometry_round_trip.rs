//! Write → read round trips of random geometry of every type, on the memory and filesystem
//! stores: vertices bit-exact, links, attributes, groups.
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::Arc;

use proptest::prelude::*;
use zv_testkit_geometry::{check_round_trip, geometry_document};

fn cases() -> u32 {
    std::env::var("ZV_GEOMETRY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_on_the_memory_store(doc in geometry_document(), batch in 1usize..12) {
        let store = Arc::new(zv_store_mem::MemoryStore::new());
        check_round_trip(&doc, store, batch).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn round_trip_on_the_filesystem_store(doc in geometry_document(), batch in 1usize..12) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(zv_store_fs::FilesystemStore::new(dir.path().join("s.zarr")).unwrap());
        check_round_trip(&doc, store, batch).map_err(TestCaseError::fail)?;
    }
}
