//! numpy arrays from zv's buffers and back.
//!
//! Out: a little-endian buffer taken from zv (`Vec<u8>`) becomes a `uint8` numpy array that
//! owns it (no copy), then a view of the stored type and shape (no copy either). In: numpy
//! arrays of a numeric type become zv attribute rows (one copy, to little-endian bytes).

use numpy::{PyArray1, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use zv_core::data_type::DataType;
use zv_format::layout::attributes::AttributeRows;
use zv_format::reader::Positions;

use crate::errors::input;

/// The numpy type string of a zv data type (little-endian).
pub(crate) fn numpy_dtype(dt: DataType) -> PyResult<&'static str> {
    Ok(match dt {
        DataType::Bool => "|b1",
        DataType::Int8 => "|i1",
        DataType::Int16 => "<i2",
        DataType::Int32 => "<i4",
        DataType::Int64 => "<i8",
        DataType::UInt8 => "|u1",
        DataType::UInt16 => "<u2",
        DataType::UInt32 => "<u4",
        DataType::UInt64 => "<u8",
        DataType::Float16 => "<f2",
        DataType::Float32 => "<f4",
        DataType::Float64 => "<f8",
        DataType::Complex64 => "<c8",
        DataType::Complex128 => "<c16",
        other => {
            return Err(input(format!(
                "{} values have no numpy array type",
                other.name()
            )))
        }
    })
}

/// `bytes` (little-endian values of `dt`) as a numpy array of `shape`, owning the buffer.
pub(crate) fn from_le<'py>(
    py: Python<'py>,
    bytes: Vec<u8>,
    dt: DataType,
    shape: &[usize],
) -> PyResult<Bound<'py, PyAny>> {
    let raw = PyArray1::<u8>::from_vec(py, bytes);
    let typed = raw.call_method1("view", (numpy_dtype(dt)?,))?;
    typed.call_method1("reshape", (PyTuple::new(py, shape)?,))
}

/// Attribute rows as a numpy array: `(N,)` for one channel, `(N, C)` for more.
pub(crate) fn from_rows<'py>(py: Python<'py>, rows: AttributeRows) -> PyResult<Bound<'py, PyAny>> {
    let (n, c, dt) = (rows.num_rows(), rows.channels(), rows.data_type());
    let shape: Vec<usize> = if c == 1 { vec![n] } else { vec![n, c] };
    from_le(py, rows.into_le_bytes(), dt, &shape)
}

/// `f64` positions as an `(N, ndim)` array of the stored type `dt` (a conversion when `dt`
/// is not float64).
pub(crate) fn from_positions<'py>(
    py: Python<'py>,
    positions: Positions,
    ndim: usize,
    dt: DataType,
) -> PyResult<Bound<'py, PyAny>> {
    let n = positions.len();
    let flat = PyArray1::<f64>::from_vec(py, positions.into_flat());
    let shaped = flat.call_method1("reshape", ((n, ndim),))?;
    shaped.call_method1("astype", (numpy_dtype(dt)?,))
}

/// An `(M, k)` int64 array from rows of `k` indices.
pub(crate) fn index_rows<'py>(
    py: Python<'py>,
    rows: &[Vec<u64>],
    k: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let mut flat = Vec::with_capacity(rows.len() * k);
    for r in rows {
        if r.len() != k {
            return Err(input(format!(
                "a link of {} vertices among links of {k}",
                r.len()
            )));
        }
        flat.extend(r.iter().map(|&v| v as i64));
    }
    let a = PyArray1::<i64>::from_vec(py, flat);
    a.call_method1("reshape", ((rows.len(), k),))
}

/// Tries each numeric element type in turn: the array's values as little-endian bytes.
macro_rules! le_bytes_of {
    ($obj:expr, $($t:ty => $dt:expr),+ $(,)?) => {{
        let mut out: Option<(DataType, Vec<u8>)> = None;
        $(
            if out.is_none() {
                if let Ok(a) = $obj.cast::<PyArrayDyn<$t>>() {
                    let ro = a.try_readonly()?;
                    let values = ro.as_slice().map_err(|e| input(e.to_string()))?;
                    out = Some(($dt, values.iter().flat_map(|v| v.to_le_bytes()).collect()));
                }
            }
        )+
        out
    }};
}

/// A numpy array (C-contiguous, numeric; `(N,)` or `(N, C)`) as attribute rows; `what` names
/// it in errors.
pub(crate) fn to_rows(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<AttributeRows> {
    let untyped = obj
        .cast::<numpy::PyUntypedArray>()
        .map_err(|_| input(format!("{what} is not a numpy array")))?;
    let shape = untyped.shape().to_vec();
    let channels = match shape.as_slice() {
        [_] => 1,
        [_, c] => *c,
        _ => {
            return Err(input(format!(
                "{what} must have shape (N,) or (N, C), not {shape:?}"
            )))
        }
    };
    if channels == 0 {
        return Err(input(format!("{what} has no channels")));
    }
    let bools = obj.cast::<PyArrayDyn<bool>>().ok();
    let found = match bools {
        Some(a) => {
            let ro = a.try_readonly()?;
            let values = ro.as_slice().map_err(|e| input(e.to_string()))?;
            Some((
                DataType::Bool,
                values.iter().map(|&b| u8::from(b)).collect(),
            ))
        }
        None => le_bytes_of!(obj,
            f32 => DataType::Float32, f64 => DataType::Float64,
            i8 => DataType::Int8, i16 => DataType::Int16, i32 => DataType::Int32, i64 => DataType::Int64,
            u8 => DataType::UInt8, u16 => DataType::UInt16, u32 => DataType::UInt32, u64 => DataType::UInt64,
        ),
    };
    let (dt, bytes) = found.ok_or_else(|| {
        input(format!(
            "{what} has dtype {}; zv stores bool, int8–64, uint8–64, float32 and float64",
            untyped.dtype()
        ))
    })?;
    AttributeRows::from_le(dt, channels, bytes).map_err(|e| input(format!("{what}: {e}")))
}
