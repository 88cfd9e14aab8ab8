//! Writing: one entry point, `_write`, for every geometry; the Python layer's `write_points`,
//! `write_polylines`, `write_graph`, `write_skeleton` and `write_mesh` call it. The whole
//! input goes through `zv_format`'s `ZvWriter` in one batch, with the GIL released; nothing
//! is committed (no root `zarr.json`) unless every check passes.

use std::collections::BTreeMap;

use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use zv_core::data_type::DataType;
use zv_core::key::StorePrefix;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::writer::{CodecChoice, FormatVersion, OutOfBounds, WriterOptions, ZvWriter};
use zv_format::Geometry;

use crate::arrays::to_rows;
use crate::errors::{input, IntoPy};

/// Adds `_write` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_write, m)?)?;
    Ok(())
}

/// Attributes from a dict name → numpy array (`kind` names them in errors).
pub(crate) fn attributes(
    dict: Option<&Bound<'_, PyDict>>,
    kind: &str,
) -> PyResult<BTreeMap<String, Attribute>> {
    let mut out = BTreeMap::new();
    for (k, v) in dict.into_iter().flat_map(|d| d.iter()) {
        let name: String = k.extract()?;
        let rows = to_rows(&v, &format!("{kind} attribute `{name}`"))?;
        out.insert(
            name,
            Attribute {
                values: AttributeValues::Numeric {
                    rows,
                    present: None,
                },
                channel_names: None,
            },
        );
    }
    Ok(out)
}

/// Non-negative int64 values as `u64` (`what` names them in errors).
pub(crate) fn indices(values: &[i64], what: &str) -> PyResult<Vec<u64>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            u64::try_from(v).map_err(|_| input(format!("{what}[{i}] is negative ({v})")))
        })
        .collect()
}

/// The object ids of an int64 array (none may be negative), if given.
pub(crate) fn object_ids_of(a: Option<&PyReadonlyArray1<'_, i64>>) -> PyResult<Option<Vec<u64>>> {
    a.map(|o| {
        let values = o
            .as_slice()
            .map_err(|e| input(format!("object_ids: {e}")))?;
        indices(values, "object_ids")
    })
    .transpose()
}

/// The writer options from the keyword arguments.
#[allow(clippy::too_many_arguments)]
pub(crate) fn options(
    geometry: &str,
    chunk_shape: Vec<f64>,
    bin_shape: Option<Vec<f64>>,
    bounds: Option<(Vec<f64>, Vec<f64>)>,
    dtype: &str,
    compression: &str,
    format_version: &str,
    out_of_bounds: &str,
    memory_budget: Option<u64>,
) -> PyResult<WriterOptions> {
    let g = Geometry::parse(geometry);
    if matches!(g, Geometry::Other(_)) {
        return Err(input(format!("unknown geometry `{geometry}`")));
    }
    let mut o = WriterOptions::new(g, chunk_shape);
    o.bin_shape = bin_shape;
    o.bounds = bounds.map(|(lo, hi)| [lo, hi]);
    o.vertex_type = match dtype {
        "float16" => DataType::Float16,
        "float32" => DataType::Float32,
        "float64" => DataType::Float64,
        other => {
            return Err(input(format!(
                "vertex dtype `{other}` (expected float16, float32 or float64)"
            )))
        }
    };
    o.codecs = CodecChoice::parse(compression).py_err()?;
    o.format_version = FormatVersion::parse(format_version).py_err()?;
    o.out_of_bounds = OutOfBounds::parse(out_of_bounds).py_err()?;
    if let Some(b) = memory_budget {
        o.memory_budget = b;
    }
    Ok(o)
}

/// Writes a new store at `path` (which must be empty or absent) and returns the summary
/// (`vertices`, `chunks`, `objects`, `intra_chunk_links`, `cross_chunk_links`, `groups`).
///
/// `positions` is `(N, ndim)` float64 (C order). `offsets` (`P + 1` int64) makes polylines
/// of it (polyline geometries); `object_ids` (`N` int64) assigns vertices to objects; `links`
/// is `(M, 2)` edges (graphs: `[source, target]`; skeletons: `[child, parent]`) or `(F, k)`
/// faces (meshes), as int64 indices into `positions`.
#[pyfunction]
#[pyo3(signature = (
    path, geometry, positions, *, chunk_shape, offsets = None, object_ids = None, links = None,
    vertex_attributes = None, link_attributes = None, object_attributes = None, groups = None,
    group_attributes = None, bin_shape = None, bounds = None, dtype = "float32",
    compression = "spec-default", format_version = "0.9", out_of_bounds = "raise",
    memory_budget = None, shard_shape = None
))]
#[allow(clippy::too_many_arguments)]
fn _write<'py>(
    py: Python<'py>,
    path: String,
    geometry: &str,
    positions: PyReadonlyArray2<'py, f64>,
    chunk_shape: Vec<f64>,
    offsets: Option<PyReadonlyArray1<'py, i64>>,
    object_ids: Option<PyReadonlyArray1<'py, i64>>,
    links: Option<PyReadonlyArray2<'py, i64>>,
    vertex_attributes: Option<Bound<'py, PyDict>>,
    link_attributes: Option<Bound<'py, PyDict>>,
    object_attributes: Option<Bound<'py, PyDict>>,
    groups: Option<BTreeMap<u64, Vec<u64>>>,
    group_attributes: Option<Bound<'py, PyDict>>,
    bin_shape: Option<Vec<f64>>,
    bounds: Option<(Vec<f64>, Vec<f64>)>,
    dtype: &str,
    compression: &str,
    format_version: &str,
    out_of_bounds: &str,
    memory_budget: Option<u64>,
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
        memory_budget,
    )?;
    opts.shard_shape = shard_shape;
    let ndim = positions.shape()[1];
    if ndim != opts.chunk_shape.len() {
        return Err(input(format!(
            "positions have {ndim} columns but chunk_shape has {} values",
            opts.chunk_shape.len()
        )));
    }
    let coords = positions
        .as_slice()
        .map_err(|e| input(format!("positions: {e}")))?;
    let offsets = match &offsets {
        Some(o) => {
            let o = o.as_slice().map_err(|e| input(format!("offsets: {e}")))?;
            Some(
                indices(o, "offsets")?
                    .into_iter()
                    .map(|v| v as usize)
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let ids = object_ids_of(object_ids.as_ref())?;
    let links = match &links {
        Some(l) => {
            let k = l.shape()[1];
            let flat = indices(
                l.as_slice().map_err(|e| input(format!("links: {e}")))?,
                "links",
            )?;
            Some((k, flat))
        }
        None => None,
    };
    let vattrs = attributes(vertex_attributes.as_ref(), "vertex")?;
    let lattrs = attributes(link_attributes.as_ref(), "link")?;
    let oattrs = attributes(object_attributes.as_ref(), "object")?;
    let gattrs = attributes(group_attributes.as_ref(), "group")?;
    let store = zv_core::plugin::open_store(&path).py_err()?;
    let empty = py
        .detach(|| store.list_prefix(&StorePrefix::root()))
        .py_err()?
        .is_empty();
    if !empty {
        return Err(input(format!(
            "{path} is not empty (write into a new store)"
        )));
    }
    let geometry = opts.geometry.clone();
    let summary = py
        .detach(move || -> zv_format::Result<_> {
            let mut w = ZvWriter::create(store, opts)?;
            match &offsets {
                Some(offsets) => {
                    if ids.is_some() {
                        return Err(zv_format::Error::InvalidInput(
                            "polylines are their own objects: pass offsets or object_ids, not both"
                                .into(),
                        ));
                    }
                    w.add_polylines_flat(coords, offsets, &vattrs)?;
                }
                None => {
                    w.add_vertices_flat(coords, ids.as_deref(), &vattrs)?;
                }
            }
            match (&links, &geometry) {
                (Some((k, flat)), Geometry::Mesh) => {
                    let faces: Vec<Vec<u64>> = flat
                        .chunks_exact((*k).max(1))
                        .map(<[u64]>::to_vec)
                        .collect();
                    w.add_faces(&faces, &lattrs)?;
                }
                (Some((2, flat)), _) => {
                    let edges: Vec<[u64; 2]> = flat.chunks_exact(2).map(|e| [e[0], e[1]]).collect();
                    w.add_edges(&edges, &lattrs)?;
                }
                (Some((k, _)), _) => {
                    return Err(zv_format::Error::InvalidInput(format!(
                        "edges must have shape (M, 2), not (M, {k})"
                    )))
                }
                (None, _) => {}
            }
            if !oattrs.is_empty() {
                w.set_object_attributes(oattrs);
            }
            if groups.is_some() || !gattrs.is_empty() {
                w.set_groups(groups.unwrap_or_default(), gattrs);
            }
            w.finish()
        })
        .py_err()?;
    let d = PyDict::new(py);
    d.set_item("vertices", summary.vertices)?;
    d.set_item("chunks", summary.chunks)?;
    d.set_item("objects", summary.objects)?;
    d.set_item("intra_chunk_links", summary.intra_links)?;
    d.set_item("cross_chunk_links", summary.cross_chunk_links)?;
    d.set_item("groups", summary.groups)?;
    Ok(d)
}
