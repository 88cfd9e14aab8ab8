//! The exception hierarchy: `ZvError` and one subclass per kind of failure, each with a `key`
//! attribute (the store key or path at fault, or `None`) and, for writer input, an `item`
//! attribute (the input item at fault, e.g. `"vertex 12"`).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use zv_core::store::StoreError;
use zv_format::Error;

create_exception!(
    zv,
    ZvError,
    PyException,
    "Base class of every error zv raises."
);
create_exception!(
    zv,
    StoreIOError,
    ZvError,
    "A store could not be opened, read or written."
);
create_exception!(
    zv,
    FormatError,
    ZvError,
    "Stored data is invalid: metadata, blob, codec or inconsistency."
);
create_exception!(
    zv,
    MissingError,
    ZvError,
    "A node or blob that must exist is missing."
);
create_exception!(
    zv,
    UnsupportedError,
    ZvError,
    "The store uses a feature this build does not support."
);
create_exception!(
    zv,
    InputError,
    ZvError,
    "Invalid input to a writer or a query."
);

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ZvError", py.get_type::<ZvError>())?;
    m.add("StoreIOError", py.get_type::<StoreIOError>())?;
    m.add("FormatError", py.get_type::<FormatError>())?;
    m.add("MissingError", py.get_type::<MissingError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    Ok(())
}

/// The key a store error names.
fn store_key(e: &StoreError) -> Option<String> {
    match e {
        StoreError::Io { key, .. } | StoreError::InvalidRange { key, .. } => Some(key.clone()),
        StoreError::Open { url, .. } => Some(url.clone()),
        _ => None,
    }
}

/// The key a Zarr-layer error names.
fn zarr_key(e: &zv_core::Error) -> Option<String> {
    match e {
        zv_core::Error::Store(s) => store_key(s),
        zv_core::Error::Metadata { key, .. } | zv_core::Error::Chunk { key, .. } => {
            Some(key.clone())
        }
        zv_core::Error::Pipeline { path, .. } => Some(path.clone()),
        _ => None,
    }
}

/// A Python exception for a zv error: its class, message, `key` and `item`.
pub(crate) fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    let (err, key, item) = match &e {
        Error::Store(s) => (StoreIOError::new_err(message), store_key(s), None),
        Error::Io { path, .. } => (
            StoreIOError::new_err(message),
            Some(path.display().to_string()),
            None,
        ),
        Error::Zarr(z) => (FormatError::new_err(message), zarr_key(z), None),
        Error::Metadata { key, .. }
        | Error::Version { key, .. }
        | Error::Blob { key, .. }
        | Error::Codec { key, .. }
        | Error::Inconsistent { key, .. } => {
            (FormatError::new_err(message), Some(key.clone()), None)
        }
        Error::Missing { key, .. } => (MissingError::new_err(message), Some(key.clone()), None),
        Error::Unsupported { key, .. } => {
            (UnsupportedError::new_err(message), Some(key.clone()), None)
        }
        Error::Input { item, .. } => (InputError::new_err(message), None, Some(item.to_string())),
        Error::InvalidInput(_) => (InputError::new_err(message), None, None),
        _ => (ZvError::new_err(message), None, None),
    };
    Python::attach(|py| {
        let value = err.value(py);
        // setting attributes on a fresh exception instance cannot fail
        let _ = value.setattr("key", key);
        let _ = value.setattr("item", item);
    });
    err
}

/// An input error with a message (no key).
pub(crate) fn input(message: impl Into<String>) -> PyErr {
    to_py(Error::InvalidInput(message.into()))
}

/// `Result` of zv → `PyResult`.
pub(crate) trait IntoPy<T> {
    /// Converts the error.
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, Error> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

impl<T> IntoPy<T> for Result<T, StoreError> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(|e| to_py(Error::Store(e)))
    }
}
