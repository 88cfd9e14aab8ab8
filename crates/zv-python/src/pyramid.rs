//! Pyramids: `_build_pyramid` adds levels `1..N` in one process (`zv.build_pyramid`), and a
//! point cloud's levels are built in parts on many workers (`zv_format::pyramid::parts`):
//! `_pyramid_prepare_level`, `_pyramid_write_part`, `_pyramid_missing_parts` and
//! `_pyramid_commit_level`, which `zv.dask.build_pyramid` runs.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use zv_core::store::Store;
use zv_format::pyramid::parts;
use zv_format::pyramid::{CrossLevel, LevelSummary, PyramidOptions, SparsityStrategy, Step};
use zv_format::writer::CodecChoice;

use crate::errors::IntoPy;

/// Adds the functions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_build_pyramid, m)?)?;
    m.add_function(wrap_pyfunction!(_pyramid_prepare_level, m)?)?;
    m.add_function(wrap_pyfunction!(_pyramid_write_part, m)?)?;
    m.add_function(wrap_pyfunction!(_pyramid_missing_parts, m)?)?;
    m.add_function(wrap_pyfunction!(_pyramid_staged_step, m)?)?;
    m.add_function(wrap_pyfunction!(_pyramid_commit_level, m)?)?;
    Ok(())
}

fn open(path: &str) -> PyResult<Arc<dyn Store>> {
    zv_core::plugin::open_store(path).py_err()
}

/// The pyramid options of the keyword arguments (`levels` as `zv pyramid --levels`).
fn options(
    levels: &str,
    chunk_scale: Vec<u32>,
    sparsity: &str,
    seed: u64,
    cross_level: &str,
    depth: i64,
    compression: &str,
) -> PyResult<PyramidOptions> {
    let mut o = PyramidOptions::new(Step::parse_list(levels).py_err()?);
    o.chunk_scale = chunk_scale;
    o.strategy = SparsityStrategy::parse(sparsity).py_err()?;
    o.seed = seed;
    o.cross_level = CrossLevel::parse(cross_level).py_err()?;
    o.depth = depth;
    o.codecs = CodecChoice::parse(compression).py_err()?;
    Ok(o)
}

/// A level's summary as a dict.
fn summary<'py>(py: Python<'py>, s: &LevelSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("level", s.level)?;
    d.set_item("vertices", s.vertices)?;
    d.set_item("chunks", s.chunks)?;
    d.set_item("objects_kept", s.objects_kept)?;
    d.set_item("cross_level_links", s.cross_level_links)?;
    Ok(d)
}

/// Adds levels `1..N` to the store at `path` (level 0 only); returns each new level's
/// summary.
#[pyfunction]
#[pyo3(signature = (
    path, levels, *, chunk_scale = vec![], sparsity = "random", seed = 0,
    cross_level = "explicit", depth = 1, compression = "spec-default", memory_budget = None
))]
#[allow(clippy::too_many_arguments)]
fn _build_pyramid<'py>(
    py: Python<'py>,
    path: String,
    levels: &str,
    chunk_scale: Vec<u32>,
    sparsity: &str,
    seed: u64,
    cross_level: &str,
    depth: i64,
    compression: &str,
    memory_budget: Option<u64>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut opts = options(
        levels,
        chunk_scale,
        sparsity,
        seed,
        cross_level,
        depth,
        compression,
    )?;
    if let Some(budget) = memory_budget {
        opts.memory_budget = budget;
    }
    let store = open(&path)?;
    let built = py
        .detach(move || zv_format::pyramid::build_pyramid(store, &opts))
        .py_err()?;
    built.levels.iter().map(|s| summary(py, s)).collect()
}

/// Stages step `step` of a pyramid built in `parts` parts; returns `{"run", "parts",
/// "step", "steps"}` (the staged plan when it is the same).
#[pyfunction]
#[pyo3(signature = (
    path, step, parts, *, levels, chunk_scale = vec![], sparsity = "random", seed = 0,
    cross_level = "explicit", depth = 1, compression = "spec-default"
))]
#[allow(clippy::too_many_arguments)]
fn _pyramid_prepare_level<'py>(
    py: Python<'py>,
    path: String,
    step: usize,
    parts: u32,
    levels: &str,
    chunk_scale: Vec<u32>,
    sparsity: &str,
    seed: u64,
    cross_level: &str,
    depth: i64,
    compression: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = options(
        levels,
        chunk_scale,
        sparsity,
        seed,
        cross_level,
        depth,
        compression,
    )?;
    let store = open(&path)?;
    let plan = py
        .detach(move || parts::prepare_level(store, &opts, step, parts))
        .py_err()?;
    let d = PyDict::new(py);
    d.set_item("run", plan.run)?;
    d.set_item("parts", plan.parts)?;
    d.set_item("step", plan.step)?;
    d.set_item("steps", plan.options.steps.len())?;
    Ok(d)
}

/// Writes part `part` of the staged level and stores its receipt; returns the metavertices
/// it wrote.
#[pyfunction]
fn _pyramid_write_part(py: Python<'_>, path: String, part: u32) -> PyResult<u64> {
    let store = open(&path)?;
    py.detach(move || parts::write_level_part(store, part))
        .py_err()
}

/// The parts of the staged level without a receipt yet.
#[pyfunction]
fn _pyramid_missing_parts(py: Python<'_>, path: String) -> PyResult<Vec<u32>> {
    let store = open(&path)?;
    py.detach(move || parts::missing_level_parts(store.as_ref()))
        .py_err()
}

/// The step staged at `path`, if any (a build that stopped resumes there).
#[pyfunction]
fn _pyramid_staged_step(py: Python<'_>, path: String) -> PyResult<Option<usize>> {
    let store = open(&path)?;
    let plan = py
        .detach(move || parts::read_level_plan(store.as_ref()))
        .py_err()?;
    Ok(plan.map(|p| p.step))
}

/// Commits the staged level (the root too after the last step); returns its summary.
#[pyfunction]
fn _pyramid_commit_level<'py>(py: Python<'py>, path: String) -> PyResult<Bound<'py, PyDict>> {
    let store = open(&path)?;
    let s = py.detach(move || parts::commit_level(store)).py_err()?;
    summary(py, &s)
}
