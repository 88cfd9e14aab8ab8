//! `zv._zv`: the native module of the Python package `zv` (PyO3). The Python layer
//! (`python/zv/`) wraps what this returns — dicts of numpy arrays — in result classes; see
//! `docs/python.md`.
//!
//! - [`errors`]: the `zv.ZvError` hierarchy, each exception carrying the store key (or input
//!   item) at fault;
//! - [`arrays`]: numpy arrays from zv's buffers (taken, not copied) and to zv's attribute rows;
//! - [`read`]: `open`, the store and level classes, points, objects, polylines, graphs,
//!   meshes, groups, validation;
//! - [`write`]: one writer entry point for every geometry;
//! - [`parts`]: distributed writes (prepare, route, write a part, commit);
//! - [`pyramid`]: pyramids, in one process or a point cloud's levels in parts;
//! - [`storage`]: the object stores' options (every path may be an `s3://`, `gs://`, `az://`
//!   or `http(s)://` URL).
//!
//! Every call that reads or writes releases the GIL (`Python::detach`) around zv's work.

use pyo3::prelude::*;

mod arrays;
mod errors;
mod parts;
mod pyramid;
mod read;
mod storage;
mod write;

/// The native module.
#[pymodule]
fn _zv(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    read::register(m)?;
    write::register(m)?;
    parts::register(m)?;
    pyramid::register(m)?;
    storage::register(m)?;
    Ok(())
}
