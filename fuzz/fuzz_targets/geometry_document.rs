//! The zv-geometry/1 document (`zv import`): the input is parsed by
//! `GeometryDocument::from_json`, written through `import::write_document` into an in-memory
//! store (batches of 7 rows, so batching is exercised), and a store that was written opens,
//! dumps and exports.
#![no_main]
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use zv_core::store::Store;
use zv_format::document::GeometryDocument;
use zv_format::ZvStore;

fuzz_target!(|data: &[u8]| {
    zv_format::link_plugins();
    let Ok(doc) = GeometryDocument::from_json(data) else {
        return;
    };
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    if zv_format::import::write_document(store.clone(), &doc, 7).is_err() {
        return;
    }
    let zv = ZvStore::open(store).unwrap_or_else(|e| panic!("a store zv wrote does not open: {e}"));
    if let Err(e) = zv_format::dump::dump(&zv) {
        panic!("a store zv wrote does not dump: {e}");
    }
    if let Err(e) = zv_format::export::export_geometry(&zv) {
        panic!("a store zv wrote does not export: {e}");
    }
});
