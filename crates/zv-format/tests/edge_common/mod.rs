//! Helpers of the edge-case tests (`edge_cases.rs`, `writer_edge_cases.rs`): stores in memory,
//! writing a document, editing a stored document, brute-force box counts.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use zv_core::data_type::DataType;
use zv_core::key::StoreKey;
use zv_core::metadata::ExtensionMetadata;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues, GeometryDocument};
use zv_format::import::write_document_in;
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::FormatVersion;
use zv_format::ZvStore;
use zv_store_mem::MemoryStore;

pub fn mem() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

pub fn write(doc: Value) -> zv_format::Result<Arc<dyn Store>> {
    let store = mem();
    write_document_in(
        store.clone(),
        &GeometryDocument::from_value(&doc)?,
        3,
        FormatVersion::V0_7,
    )?;
    Ok(store)
}

pub fn level0(store: &Arc<dyn Store>) -> zv_format::reader::Level {
    ZvStore::open(store.clone()).unwrap().level(0).unwrap()
}

pub fn none() -> BTreeMap<String, Attribute> {
    BTreeMap::new()
}

pub fn f32attr(v: &[f64]) -> Attribute {
    Attribute {
        values: AttributeValues::Numeric {
            rows: AttributeRows::from_f64s(DataType::Float32, 1, v).unwrap(),
            present: None,
        },
        channel_names: None,
    }
}

pub fn raw() -> [ExtensionMetadata; 1] {
    [ExtensionMetadata::new("bytes")]
}

pub fn set_json(store: &Arc<dyn Store>, key: &str, f: impl FnOnce(&mut Value)) {
    let k = StoreKey::new(key).unwrap();
    let mut v: Value = serde_json::from_slice(&store.get(&k).unwrap().unwrap()).unwrap();
    f(&mut v);
    store
        .set(&k, bytes::Bytes::from(serde_json::to_vec(&v).unwrap()))
        .unwrap();
}

pub fn all_points(level: &zv_format::reader::Level) -> Vec<Vec<f64>> {
    level
        .chunk_keys()
        .unwrap()
        .iter()
        .flat_map(|k| level.vertices(k).unwrap().unwrap().rows())
        .collect()
}

pub fn brute_force(points: &[Vec<f64>], lo: &[f64], hi: &[f64]) -> usize {
    points
        .iter()
        .filter(|p| {
            p.iter()
                .zip(lo.iter().zip(hi))
                .all(|(x, (a, b))| a <= x && x <= b)
        })
        .count()
}

// ---- box queries over bins ----

pub fn assert_refused(r: zv_format::Result<impl std::fmt::Debug>, needle: &str) {
    let err = r.expect_err("refused").to_string();
    assert!(err.contains(needle), "`{err}` does not mention `{needle}`");
}
