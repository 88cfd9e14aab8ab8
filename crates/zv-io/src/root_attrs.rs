//! Root-group attributes a converter keeps beside the geometry (SWC comment lines, the TRK and
//! TCK headers): added to the root `zarr.json` the writer committed.

use zv_core::store::Store;

use crate::error::{FileName, Result};

/// Adds `name: value` to the root group's attributes, rewriting the root `zarr.json` the
/// writer committed, and syncs the store.
pub(crate) fn add_root_attribute(
    file: &FileName,
    store: &dyn Store,
    name: &str,
    value: serde_json::Value,
) -> Result<()> {
    let key = zv_core::key::StoreKey::new(zv_core::node::METADATA_NAME)
        .map_err(|e| file.unsupported(e.to_string()))?;
    let store_err = |e: zv_core::store::StoreError| file.format(e.into());
    let bytes = store
        .get(&key)
        .map_err(store_err)?
        .ok_or_else(|| file.unsupported("the root zarr.json is missing after the write"))?;
    let mut doc: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| file.unsupported(format!("root zarr.json: {e}")))?;
    if let Some(root) = doc.as_object_mut() {
        let attrs = root
            .entry("attributes")
            .or_insert_with(|| serde_json::json!({}));
        if let Some(a) = attrs.as_object_mut() {
            a.insert(name.to_owned(), value);
        }
    }
    let text = serde_json::to_vec_pretty(&doc).map_err(|e| file.unsupported(e.to_string()))?;
    store.set(&key, text.into()).map_err(store_err)?;
    store.sync().map_err(store_err)
}
