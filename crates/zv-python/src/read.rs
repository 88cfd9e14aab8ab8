//! Reading: `open`, the `Store` and `Level` classes, and `validate`. Results are dicts of
//! numpy arrays, wrapped in classes by the Python layer.

use std::collections::BTreeMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{json, Value};
use zv_format::metadata::ChunkKey;
use zv_format::reader::{Level, ZvStore};
use zv_format::Geometry;

use crate::arrays::{from_le, from_positions, from_rows, index_rows, numpy_dtype};
use crate::errors::{input, IntoPy, MissingError};

/// Adds `open`, `validate` and the classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_class::<Store>()?;
    m.add_class::<PyLevel>()?;
    Ok(())
}

/// A JSON value as a Python object (through the `json` module).
fn json_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (v.to_string(),))
}

/// Opens the ZV store at `path` (a path or a `file://` URL); the root metadata is read and
/// checked, the levels listed.
#[pyfunction]
fn open(py: Python<'_>, path: String) -> PyResult<Store> {
    let store = py.detach(|| ZvStore::open_url(&path)).py_err()?;
    Ok(Store { store, path })
}

/// Validates the store at `path` up to conformance level `level` (1–5); returns the report
/// as a dict (`valid`, `errors`, `warnings`, `findings`, …).
#[pyfunction]
#[pyo3(signature = (path, level = 3))]
fn validate<'py>(py: Python<'py>, path: String, level: u8) -> PyResult<Bound<'py, PyAny>> {
    if !(1..=5).contains(&level) {
        return Err(input(format!("validation level {level} (expected 1–5)")));
    }
    let report = py
        .detach(|| zv_format::validate::validate_url(&path, level))
        .py_err()?;
    json_to_py(py, &report.to_json())
}

/// An opened ZV store: its levels by number (`store[k]`).
#[pyclass(module = "zv._zv", frozen)]
pub(crate) struct Store {
    store: ZvStore,
    path: String,
}

#[pymethods]
impl Store {
    /// The levels present, ascending.
    #[getter]
    fn levels(&self) -> Vec<u32> {
        self.store.level_ids().to_vec()
    }

    /// The geometry (`point_cloud`, `streamline`, `graph`, `skeleton`, `mesh`, …).
    #[getter]
    fn geometry(&self) -> String {
        self.store.geometry().name().to_owned()
    }

    /// The number of spatial dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.store.root().ndim()
    }

    /// The path the store was opened from.
    #[getter]
    fn path(&self) -> String {
        self.path.clone()
    }

    /// The root metadata and each level's vertex count, as a dict.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let root = self.store.root();
        let mut levels = serde_json::Map::new();
        for &id in self.store.level_ids() {
            let level = py.detach(|| self.store.level(id)).py_err()?;
            let m = level.metadata();
            levels.insert(
                id.to_string(),
                json!({
                    "vertex_count": m.vertex_count,
                    "chunk_shape": level.chunk_shape(),
                    "bin_shape": level.bin_shape(),
                    "vertex_dtype": level.vertex_type().name(),
                    "arrays_present": m.arrays_present,
                }),
            );
        }
        let info = json!({
            "path": self.path,
            "zv_version": root.zv_version,
            "geometry": self.store.geometry().name(),
            "geometry_types": root.geometry_types,
            "axes": root.axes.iter().map(|a| a.name.clone()).collect::<Vec<_>>(),
            "chunk_shape": root.chunk_shape,
            "bounds": root.bounds,
            "crs": root.crs,
            "levels": levels,
        });
        json_to_py(py, &info)
    }

    /// Level `k`.
    fn __getitem__(&self, py: Python<'_>, k: i64) -> PyResult<PyLevel> {
        let id = u32::try_from(k).map_err(|_| {
            let e = MissingError::new_err(format!(
                "no level {k} (levels: {:?})",
                self.store.level_ids()
            ));
            let _ = e.value(py).setattr("key", format!("{k}/zarr.json"));
            e
        })?;
        let level = py.detach(|| self.store.level(id)).py_err()?;
        Ok(PyLevel { level })
    }

    /// The number of levels.
    fn __len__(&self) -> usize {
        self.store.level_ids().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<zv.Store {:?}: {} in {}-D, levels {:?}>",
            self.path,
            self.store.geometry().name(),
            self.store.root().ndim(),
            self.store.level_ids()
        )
    }
}

/// One level of a store.
#[pyclass(name = "Level", module = "zv._zv", frozen)]
pub(crate) struct PyLevel {
    level: Level,
}

/// The objects of a level whose ids `ids` (`None`: every object) in one pass, as a dict of
/// CSR columns.
fn objects_csr<'py>(
    py: Python<'py>,
    level: &Level,
    ids: Option<Vec<u64>>,
) -> PyResult<Bound<'py, PyDict>> {
    let geometry = level.geometry().clone();
    let linked = matches!(
        geometry,
        Geometry::Graph | Geometry::Skeleton | Geometry::Mesh
    );
    let (objects, width) = py
        .detach(|| -> zv_format::Result<_> {
            let ids = match ids {
                Some(ids) => ids,
                None => existing_ids(level)?,
            };
            let width = if linked { level.link_width()? } else { 2 };
            Ok((level.objects(&ids)?, width))
        })
        .py_err()?;
    let ndim = level.root().ndim();
    let total: usize = objects.iter().map(|o| o.vertices.len()).sum();
    let mut flat = Vec::with_capacity(total * ndim);
    let mut offsets = Vec::with_capacity(objects.len() + 1);
    offsets.push(0i64);
    let mut links: Vec<Vec<u64>> = Vec::new();
    let mut attributes: BTreeMap<String, zv_format::layout::attributes::AttributeRows> =
        BTreeMap::new();
    let mut object_ids = Vec::with_capacity(objects.len());
    for o in objects {
        let start = flat.len() / ndim.max(1);
        if linked {
            for l in o.links.iter().flatten() {
                links.push(l.iter().map(|v| v + start as u64).collect());
            }
        }
        for (name, rows) in o.vertex_attributes {
            match attributes.get_mut(&name) {
                Some(all) => all
                    .extend(&rows)
                    .map_err(|e| input(format!("vertex attribute `{name}`: {e}")))?,
                None => {
                    attributes.insert(name, rows);
                }
            }
        }
        flat.extend_from_slice(o.vertices.as_flat());
        offsets.push((flat.len() / ndim.max(1)) as i64);
        object_ids.push(o.id as i64);
    }
    let d = PyDict::new(py);
    let positions = zv_format::reader::Positions::from_flat(ndim, flat).py_err()?;
    d.set_item(
        "positions",
        from_positions(py, positions, ndim, level.vertex_type())?,
    )?;
    d.set_item("offsets", numpy::PyArray1::from_vec(py, offsets))?;
    d.set_item("object_ids", numpy::PyArray1::from_vec(py, object_ids))?;
    if linked {
        d.set_item("links", index_rows(py, &links, width)?)?;
    }
    let a = PyDict::new(py);
    for (name, rows) in attributes {
        a.set_item(name, from_rows(py, rows)?)?;
    }
    d.set_item("attributes", a)?;
    Ok(d)
}

/// The ids of the level's objects, ascending (none without an object index).
fn existing_ids(level: &Level) -> zv_format::Result<Vec<u64>> {
    Ok(match level.shared_object_index()? {
        Some(index) => (0..index.num_objects)
            .filter(|&i| index.contains(i))
            .collect(),
        None => Vec::new(),
    })
}

#[pymethods]
impl PyLevel {
    /// The level number.
    #[getter]
    fn index(&self) -> u32 {
        self.level.id()
    }

    /// The geometry.
    #[getter]
    fn geometry(&self) -> String {
        self.level.geometry().name().to_owned()
    }

    /// The numpy type string of the stored vertices (`<f4`, `<f8`, `<f2`).
    #[getter]
    fn dtype(&self) -> PyResult<&'static str> {
        numpy_dtype(self.level.vertex_type())
    }

    /// The number of spatial dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.level.root().ndim()
    }

    /// The vertex count the level metadata records.
    #[getter]
    fn vertex_count(&self) -> u64 {
        self.level.metadata().vertex_count
    }

    /// The level's chunk shape.
    #[getter]
    fn chunk_shape(&self) -> Vec<f64> {
        self.level.chunk_shape()
    }

    /// The vertex attribute names.
    fn vertex_attribute_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        py.detach(|| self.level.vertex_attribute_names()).py_err()
    }

    /// The ids of the level's objects (int64), or `None` without an object index.
    fn object_ids<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let has = py
            .detach(|| self.level.shared_object_index())
            .py_err()?
            .is_some();
        if !has {
            return Ok(None);
        }
        let ids = py.detach(|| existing_ids(&self.level)).py_err()?;
        let ids: Vec<i64> = ids.into_iter().map(|i| i as i64).collect();
        Ok(Some(numpy::PyArray1::from_vec(py, ids).into_any()))
    }

    /// The keys of the level's chunks (coordinate tuples), in key order.
    fn chunk_keys(&self, py: Python<'_>) -> PyResult<Vec<Vec<i64>>> {
        let keys = py.detach(|| self.level.chunk_keys()).py_err()?;
        Ok(keys.into_iter().map(|k| k.0).collect())
    }

    /// Points as columns: `positions` `(N, ndim)` in the stored type, `object_ids` (int64, or
    /// `None`), `attributes` (name → array). `box` is `(lo, hi)`; `attributes=None` reads
    /// every vertex attribute; `chunks` (coordinate tuples) reads those chunks only.
    #[pyo3(signature = (r#box = None, attributes = None, object_ids = true, chunks = None))]
    fn _points<'py>(
        &self,
        py: Python<'py>,
        r#box: Option<(Vec<f64>, Vec<f64>)>,
        attributes: Option<Vec<String>>,
        object_ids: bool,
        chunks: Option<Vec<Vec<i64>>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let level = &self.level;
        let columns = py
            .detach(|| -> zv_format::Result<_> {
                let names = match attributes {
                    Some(n) => n,
                    None => level.vertex_attribute_names()?,
                };
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                let bbox = r#box
                    .as_ref()
                    .map(|(lo, hi)| (lo.as_slice(), hi.as_slice()));
                let chunks: Option<Vec<ChunkKey>> =
                    chunks.map(|c| c.into_iter().map(ChunkKey).collect());
                level.point_columns_in(chunks.as_deref(), bbox, &names, object_ids)
            })
            .py_err()?;
        let n = columns.len();
        let d = PyDict::new(py);
        d.set_item(
            "positions",
            from_le(
                py,
                columns.positions,
                columns.vertex_type,
                &[n, columns.ndim],
            )?,
        )?;
        match columns.object_ids {
            Some(ids) => d.set_item("object_ids", numpy::PyArray1::from_vec(py, ids))?,
            None => d.set_item("object_ids", py.None())?,
        }
        let a = PyDict::new(py);
        for (name, rows) in columns.attributes {
            a.set_item(name, from_rows(py, rows)?)?;
        }
        d.set_item("attributes", a)?;
        Ok(d)
    }

    /// Object `id`: `positions` in manifest order, `links` (`(M, k)` indices into them, or
    /// `None`), `vertex_attributes`, and `attributes` (its object attribute values).
    fn _object<'py>(&self, py: Python<'py>, id: u64) -> PyResult<Bound<'py, PyDict>> {
        let level = &self.level;
        let (o, width) = py
            .detach(|| -> zv_format::Result<_> {
                let o = level.object(id)?;
                let width = match o.links.as_ref().and_then(|l| l.first()) {
                    Some(l) => l.len(),
                    None if *level.geometry() == Geometry::Mesh => level.link_width()?,
                    None => 2,
                };
                Ok((o, width))
            })
            .py_err()?;
        let ndim = level.root().ndim();
        let d = PyDict::new(py);
        d.set_item("id", o.id)?;
        d.set_item(
            "positions",
            from_positions(py, o.vertices, ndim, level.vertex_type())?,
        )?;
        match &o.links {
            Some(l) => d.set_item("links", index_rows(py, l, width)?)?,
            None => d.set_item("links", py.None())?,
        }
        let va = PyDict::new(py);
        for (name, rows) in o.vertex_attributes {
            va.set_item(name, from_rows(py, rows)?)?;
        }
        d.set_item("vertex_attributes", va)?;
        let oa = PyDict::new(py);
        for (name, value) in &o.attributes {
            match value {
                Some(v) => oa.set_item(name, json_to_py(py, v)?)?,
                None => oa.set_item(name, py.None())?,
            }
        }
        d.set_item("attributes", oa)?;
        Ok(d)
    }

    /// Objects `ids` (`None`: every object) in one pass as CSR columns: `positions`
    /// (concatenated in object order, each in manifest order), `offsets` (`P + 1`),
    /// `object_ids`, `links` (graphs, skeletons, meshes: `(M, k)` indices into `positions`)
    /// and `attributes` (vertex attributes, row-aligned with `positions`).
    #[pyo3(signature = (ids = None))]
    fn _objects<'py>(
        &self,
        py: Python<'py>,
        ids: Option<Vec<u64>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        objects_csr(py, &self.level, ids)
    }

    /// The groups: one int64 array of object ids per group, or `None` without groups.
    fn groups<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let Some(groups) = py.detach(|| self.level.groups()).py_err()? else {
            return Ok(None);
        };
        let list = PyList::empty(py);
        for members in groups.members {
            let ids: Vec<i64> = members.into_iter().map(|i| i as i64).collect();
            list.append(numpy::PyArray1::from_vec(py, ids))?;
        }
        Ok(Some(list))
    }

    /// Object attributes: name → `(values, present)`; `values` has one row per object
    /// (shape as stored), `present` is a bool array when the store records which rows have
    /// a value (`present_mask`), else `None`.
    fn _object_attributes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let attrs = py.detach(|| self.level.object_attributes()).py_err()?;
        dense(py, attrs)
    }

    /// Group attributes: name → `(values, None)`, one row per group.
    fn _group_attributes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let attrs = py.detach(|| self.level.group_attributes()).py_err()?;
        dense(py, attrs)
    }

    fn __repr__(&self) -> String {
        format!(
            "<zv.Level {} of a {}: {} vertices, chunk shape {:?}>",
            self.level.id(),
            self.level.geometry().name(),
            self.level.metadata().vertex_count,
            self.level.chunk_shape()
        )
    }
}

/// Dense attributes as name → `(values, present)`.
fn dense<'py>(
    py: Python<'py>,
    attrs: BTreeMap<String, zv_format::reader::DenseAttribute>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, a) in attrs {
        let shape = a
            .values
            .shape
            .iter()
            .map(|&s| usize::try_from(s))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| {
                input(format!(
                    "attribute `{name}` has a shape {:?} too large",
                    a.values.shape
                ))
            })?;
        let values = from_le(py, a.values.rows.into_le_bytes(), a.data_type, &shape)?;
        let present = match a.present_mask {
            Some(m) => numpy::PyArray1::from_vec(py, m).into_any(),
            None => py.None().into_bound(py),
        };
        d.set_item(name, (values, present))?;
    }
    Ok(d)
}
