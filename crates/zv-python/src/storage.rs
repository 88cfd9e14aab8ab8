//! `_set_storage_options`: the options of the object stores (`s3://`, `gs://`, `az://`,
//! `http(s)://`) opened from now on in this process, over the standard environment variables
//! (`AWS_*`, `GOOGLE_*`, `AZURE_*`); the CLI's `--storage-option KEY=VALUE`.

use std::collections::BTreeMap;

use pyo3::prelude::*;

/// Adds `_set_storage_options` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_storage_options, m)?)?;
    Ok(())
}

/// Sets the options of the object stores opened from now on (keys as `zv --storage-option`:
/// `aws_endpoint`, `region`, `allow_http`, `concurrency`, …; an unknown key is an error when a
/// store is opened).
#[pyfunction]
fn _set_storage_options(options: BTreeMap<String, String>) {
    zv_store_object::set_default_options(options);
}
