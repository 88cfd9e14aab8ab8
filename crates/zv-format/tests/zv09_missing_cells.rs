//! In a ZV 0.9 store a per-chunk blob is a cell of a chunk-grid array: a missing cell is an
//! error naming the store key of the chunk that should hold it (not a 0.7-style
//! `<array>/<chunk>/zarr.json`, which no 0.9 store has).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::key::StoreKey;
use zv_core::store::Store;
use zv_format::metadata::ChunkKey;
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Error, Geometry, ZvStore};
use zv_store_mem::MemoryStore;

#[test]
fn a_missing_cell_names_the_chunk_that_should_hold_it() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![10.0; 3]);
    opts.format_version = FormatVersion::V0_9;
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let flat = [1.0, 1.0, 1.0, 12.0, 1.0, 1.0, 13.0, 2.0, 1.0];
    w.add_vertices_flat(&flat, Some(&[0, 1, 1]), &BTreeMap::new())
        .unwrap();
    w.finish().unwrap();
    // the cell of chunk (1, 0, 0) of the fragment index is deleted
    let cell = StoreKey::new("0/vertex_fragments/c/1/0/0").unwrap();
    store.delete(&cell).unwrap();
    let zv = ZvStore::open(store).unwrap();
    let level = zv.level(0).unwrap();
    let key = ChunkKey(vec![1, 0, 0]);
    match level.chunk(&key) {
        Err(Error::Missing { key, .. }) => assert_eq!(key, "0/vertex_fragments/c/1/0/0"),
        other => panic!("{other:?}"),
    }
}
