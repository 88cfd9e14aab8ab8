//! Distributed writes (`zv_format::parts`): `_prepare_parts` stages a write of N parts,
//! `_part_owners` routes rows to parts and `_polyline_parts` polylines, `_write_part` writes
//! one part's rows or polylines (on any worker), `_missing_parts` and `_commit_parts` finish
//! it. The Python layer's `zv.prepare_parts`, `zv.part_owners`, `zv.polyline_parts`,
//! `zv.write_part`, `zv.missing_parts` and `zv.commit_parts` call them.

use std::sync::Arc;

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zv_core::store::Store;
use zv_format::parts::{self, CommitInputs, PartWriter};

use crate::errors::{input, IntoPy};
use crate::write::{attributes, indices, object_ids_of, options};

/// Adds the functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_prepare_parts, m)?)?;
    m.add_function(wrap_pyfunction!(_part_owners, m)?)?;
    m.add_function(wrap_pyfunction!(_polyline_parts, m)?)?;
    m.add_function(wrap_pyfunction!(_write_part, m)?)?;
    m.add_function(wrap_pyfunction!(_missing_parts, m)?)?;
    m.add_function(wrap_pyfunction!(_commit_parts, m)?)?;
    Ok(())
}

fn open(path: &str) -> PyResult<Arc<dyn Store>> {
    zv_core::plugin::open_store(path).py_err()
}

/// Stages a distributed write of `parts` parts at `path` (a point cloud, or lines, polylines
/// or streamlines); returns `{"run", "parts"}` (the staged one when it has the same options).
#[pyfunction]
#[pyo3(signature = (
    path, parts, *, chunk_shape, geometry = "point_cloud", bin_shape = None, bounds = None,
    dtype = "float32", compression = "spec-default", out_of_bounds = "raise",
    format_version = "0.9", shard_shape = None
))]
#[allow(clippy::too_many_arguments)]
fn _prepare_parts<'py>(
    py: Python<'py>,
    path: String,
    parts: u32,
    chunk_shape: Vec<f64>,
    geometry: &str,
    bin_shape: Option<Vec<f64>>,
    bounds: Option<(Vec<f64>, Vec<f64>)>,
    dtype: &str,
    compression: &str,
    out_of_bounds: &str,
    format_version: &str,
    shard_shape: Option<Vec<u64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut opts = options(
        geometry,
        chunk_shape,
        bin_shape,
        bounds,
        dtype,
        compression,
        format_version,
        out_of_bounds,
        None,
    )?;
    opts.shard_shape = shard_shape;
    let store = open(&path)?;
    let plan = py
        .detach(move || parts::prepare(store, &opts, parts))
        .py_err()?;
    let d = PyDict::new(py);
    d.set_item("run", plan.run)?;
    d.set_item("parts", plan.parts)?;
    Ok(d)
}

/// The flat coordinates of `(N, ndim)` positions, checked against the store's axes.
fn coords<'a>(positions: &'a PyReadonlyArray2<'_, f64>, ndim: usize) -> PyResult<&'a [f64]> {
    let cols = positions.shape()[1];
    if cols != ndim {
        return Err(input(format!(
            "positions have {cols} columns, the store has {ndim} axes"
        )));
    }
    positions
        .as_slice()
        .map_err(|e| input(format!("positions: {e}")))
}

/// The part that owns each row of `positions` (`(N,)` uint32) in the write staged at `path`.
#[pyfunction]
fn _part_owners<'py>(
    py: Python<'py>,
    path: String,
    positions: PyReadonlyArray2<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let store = open(&path)?;
    let w = py.detach(|| PartWriter::open(store, 0)).py_err()?;
    let ndim = positions.shape()[1];
    let flat = coords(&positions, ndim)?;
    let owners = py.detach(|| w.owners(flat));
    Ok(owners.into_pyarray(py))
}

/// The vertex offsets of polylines (`P + 1` int64, none negative).
fn offsets_of(offsets: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<usize>> {
    let o = offsets
        .as_slice()
        .map_err(|e| input(format!("offsets: {e}")))?;
    Ok(indices(o, "offsets")?
        .into_iter()
        .map(|v| v as usize)
        .collect())
}

/// `(polyline index, part)` pairs as two arrays.
type Pairs<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u32>>);

/// The parts each polyline (`positions` cut by `offsets`) goes to in the write staged at
/// `path`: `(polyline index (int64), part (uint32))` pairs, by polyline, parts ascending.
#[pyfunction]
fn _polyline_parts<'py>(
    py: Python<'py>,
    path: String,
    positions: PyReadonlyArray2<'py, f64>,
    offsets: PyReadonlyArray1<'py, i64>,
) -> PyResult<Pairs<'py>> {
    let store = open(&path)?;
    let w = py.detach(|| PartWriter::open(store, 0)).py_err()?;
    let ndim = positions.shape()[1];
    let flat = coords(&positions, ndim)?;
    let offsets = offsets_of(&offsets)?;
    let n = flat.len() / ndim.max(1);
    if offsets.first().is_some_and(|&o| o != 0)
        || offsets.last().is_some_and(|&o| o != n)
        || offsets.windows(2).any(|w| w[0] > w[1])
    {
        return Err(input(format!(
            "offsets must start at 0, never decrease and end at the vertex count ({n})"
        )));
    }
    let pairs = py.detach(|| w.polyline_parts(flat, &offsets));
    let (index, part): (Vec<i64>, Vec<u32>) = pairs.into_iter().map(|(i, p)| (i as i64, p)).unzip();
    Ok((index.into_pyarray(py), part.into_pyarray(py)))
}

/// Writes part `part` of the write staged at `path` and stores its receipt; returns
/// `{"part", "vertices", "chunks"}`. Points: the rows it owns (`owned_only`: other rows are
/// left; else they are an error). Polylines (`offsets`, `P + 1`): whole polylines with their
/// ids in the write (`polyline_ids`, increasing; default: 0, 1, …), of which the part keeps
/// the pieces in its chunks.
#[pyfunction]
#[pyo3(signature = (
    path, part, positions, *, object_ids = None, vertex_attributes = None, owned_only = true,
    memory_budget = None, offsets = None, polyline_ids = None
))]
#[allow(clippy::too_many_arguments)]
fn _write_part<'py>(
    py: Python<'py>,
    path: String,
    part: u32,
    positions: PyReadonlyArray2<'py, f64>,
    object_ids: Option<PyReadonlyArray1<'py, i64>>,
    vertex_attributes: Option<Bound<'py, PyDict>>,
    owned_only: bool,
    memory_budget: Option<u64>,
    offsets: Option<PyReadonlyArray1<'py, i64>>,
    polyline_ids: Option<PyReadonlyArray1<'py, i64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let ids = object_ids_of(object_ids.as_ref())?;
    let offsets = offsets.as_ref().map(offsets_of).transpose()?;
    let polyline_ids = polyline_ids
        .as_ref()
        .map(|p| {
            let v = p
                .as_slice()
                .map_err(|e| input(format!("polyline_ids: {e}")))?;
            indices(v, "polyline_ids")
        })
        .transpose()?;
    if offsets.is_none() && polyline_ids.is_some() {
        return Err(input("polyline_ids go with offsets (polylines)"));
    }
    if offsets.is_some() && ids.is_some() {
        return Err(input(
            "polylines are their own objects: pass offsets or object_ids, not both",
        ));
    }
    let vattrs = attributes(vertex_attributes.as_ref(), "vertex")?;
    let store = open(&path)?;
    let budget = memory_budget.unwrap_or(zv_format::writer::DEFAULT_MEMORY_BUDGET);
    let mut w = py
        .detach(|| PartWriter::open_with_budget(store, part, budget))
        .py_err()?;
    let ndim = positions.shape()[1];
    let flat = coords(&positions, ndim)?;
    let receipt = py
        .detach(move || -> zv_format::Result<_> {
            if let Some(offsets) = &offsets {
                w.add_polylines_flat(flat, offsets, polyline_ids.as_deref(), &vattrs)?;
            } else if owned_only {
                w.add_owned_vertices_flat(flat, ids.as_deref(), &vattrs)?;
            } else {
                w.add_vertices_flat(flat, ids.as_deref(), &vattrs)?;
            }
            w.finish()
        })
        .py_err()?;
    let d = PyDict::new(py);
    d.set_item("part", receipt.part)?;
    d.set_item("vertices", receipt.vertices)?;
    d.set_item("chunks", receipt.chunks.len())?;
    Ok(d)
}

/// The parts of the write staged at `path` without a receipt yet.
#[pyfunction]
fn _missing_parts(py: Python<'_>, path: String) -> PyResult<Vec<u32>> {
    let store = open(&path)?;
    py.detach(|| parts::missing_parts(store.as_ref())).py_err()
}

/// Commits the write staged at `path` once every part has its receipt; returns the summary.
#[pyfunction]
#[pyo3(signature = (path, *, object_attributes = None, groups = None, group_attributes = None, num_objects = 0))]
fn _commit_parts<'py>(
    py: Python<'py>,
    path: String,
    object_attributes: Option<Bound<'py, PyDict>>,
    groups: Option<std::collections::BTreeMap<u64, Vec<u64>>>,
    group_attributes: Option<Bound<'py, PyDict>>,
    num_objects: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let inputs = CommitInputs {
        object_attributes: attributes(object_attributes.as_ref(), "object")?,
        groups: groups.unwrap_or_default(),
        group_attributes: attributes(group_attributes.as_ref(), "group")?,
        num_objects,
    };
    let store = open(&path)?;
    let summary = py.detach(move || parts::commit(store, inputs)).py_err()?;
    let d = PyDict::new(py);
    d.set_item("vertices", summary.vertices)?;
    d.set_item("chunks", summary.chunks)?;
    d.set_item("objects", summary.objects)?;
    d.set_item("groups", summary.groups)?;
    Ok(d)
}
