//! Root metadata: the `zarr_vectors` attributes and the NGFF `multiscales` block of the root
//! group (`docs/format-decisions.md`, "`zv_version`", "Axis order", "Capabilities").

use serde_json::{Map, Value};

use super::json::{
    bounded_bins, f64_list, opt_enum, opt_i64, positive_extents, string_list, whole_multiples,
};
use super::JsonObject;
use crate::error::{Error, Result};
use crate::names::ROOT_ATTRIBUTE;

/// An NGFF axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// The axis name.
    pub name: String,
    /// `space`, `time`, `channel` or a custom type (absent counts as space).
    pub axis_type: Option<String>,
    /// A UDUNITS-2 unit.
    pub unit: Option<String>,
}

impl Axis {
    /// A space axis with no unit.
    pub fn space(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            axis_type: Some("space".to_owned()),
            unit: None,
        }
    }

    /// The axis of an NGFF axis object (`name`, optional `type` and `unit`); `None` when it
    /// has no string `name`.
    pub(crate) fn from_object(o: &JsonObject) -> Option<Self> {
        Some(Self {
            name: o.get("name").and_then(Value::as_str)?.to_owned(),
            axis_type: o.get("type").and_then(Value::as_str).map(str::to_owned),
            unit: o.get("unit").and_then(Value::as_str).map(str::to_owned),
        })
    }

    /// The NGFF JSON form.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("name".into(), Value::from(self.name.clone()));
        if let Some(t) = &self.axis_type {
            m.insert("type".into(), Value::from(t.clone()));
        }
        if let Some(u) = &self.unit {
            m.insert("unit".into(), Value::from(u.clone()));
        }
        Value::Object(m)
    }
}

/// One NGFF `multiscales` dataset entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The level path (`"0"`, `"1"`, …).
    pub path: String,
    /// The `scale` transformation (bin ratio for levels > 0).
    pub scale: Option<Vec<f64>>,
    /// The `translation` transformation (half the bin shape).
    pub translation: Option<Vec<f64>>,
}

/// Parsed root metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct RootMetadata {
    /// `zv_version`.
    pub zv_version: String,
    /// The axes (`multiscales[0].axes`); vertex columns and chunk-key components follow them.
    pub axes: Vec<Axis>,
    /// The level-0 chunk shape.
    pub chunk_shape: Vec<f64>,
    /// `[min, max]` per axis.
    pub bounds: [Vec<f64>; 2],
    /// The geometry types of the store.
    pub geometry_types: Vec<String>,
    /// The coordinate reference system (opaque).
    pub crs: Option<Value>,
    /// `links_convention` (default `implicit_sequential`).
    pub links_convention: String,
    /// `object_index_convention` (default `standard`).
    pub object_index_convention: String,
    /// `cross_chunk_strategy` (default `explicit_links`).
    pub cross_chunk_strategy: String,
    /// `cross_level_depth` (default 1).
    pub cross_level_depth: i64,
    /// `cross_level_storage` (default `explicit`).
    pub cross_level_storage: String,
    /// `reduction_factor` (default 8).
    pub reduction_factor: i64,
    /// `base_bin_shape`, if given.
    pub base_bin_shape: Option<Vec<f64>>,
    /// `format_capabilities`.
    pub format_capabilities: Vec<String>,
    /// The NGFF dataset entries.
    pub datasets: Vec<Dataset>,
    /// Keys of `zarr_vectors` this crate does not interpret.
    pub extra: JsonObject,
}
/// Parses `"X.Y[.Z]"`.
pub fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let parts: Vec<&str> = v.split('.').collect();
    if !(2..=3).contains(&parts.len()) {
        return None;
    }
    let n: Option<Vec<u64>> = parts.iter().map(|p| p.parse().ok()).collect();
    let n = n?;
    Some((n[0], n[1], n.get(2).copied().unwrap_or(0)))
}

/// How a store lays out its per-chunk data, which follows from `zv_version`
/// (`docs/format-decisions.md`, "ZV 0.9 stores").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// ZV 0.7.x: one single-chunk array node per spatial chunk (`vertices/1.-2.0`).
    PerChunkNodes,
    /// ZV 0.9.x: one rank-D `variable_length_bytes` array over the level's chunk grid per
    /// logical array (`vertices/c/i/j/k`, `chunk_grid_origin`), flat dense arrays.
    ChunkGrid,
}

/// The `links_convention` values (ZV 0.7 digest §1.12).
pub const LINKS_CONVENTIONS: &[&str] = &[
    "explicit",
    "implicit_sequential",
    "implicit_sequential_with_branches",
];
/// The `object_index_convention` values.
pub const OBJECT_INDEX_CONVENTIONS: &[&str] = &["standard", "identity"];
/// The `cross_chunk_strategy` values.
pub const CROSS_CHUNK_STRATEGIES: &[&str] = &["explicit_links", "boundary_deduplication", "both"];
/// The `cross_level_storage` values.
pub const CROSS_LEVEL_STORAGES: &[&str] = &["none", "implicit", "explicit"];

const ROOT_KEYS: &[&str] = &[
    "zv_version",
    "chunk_shape",
    "bounds",
    "geometry_types",
    "crs",
    "links_convention",
    "object_index_convention",
    "cross_chunk_strategy",
    "cross_level_depth",
    "cross_level_storage",
    "reduction_factor",
    "base_bin_shape",
    "format_capabilities",
];

impl RootMetadata {
    /// The store's layout: [`Layout::ChunkGrid`] for ZV 0.9.x, else [`Layout::PerChunkNodes`]
    /// (parsing accepts only 0.7.x and 0.9.x).
    pub fn layout(&self) -> Layout {
        match parse_version(&self.zv_version) {
            Some((0, 9, _)) => Layout::ChunkGrid,
            _ => Layout::PerChunkNodes,
        }
    }

    /// Parses the root group's attributes (ZV 0.7.x or 0.9.x). `key` names the document in
    /// errors.
    pub fn from_attributes(attrs: &JsonObject, key: &str) -> Result<Self> {
        let err = |reason: String| Error::metadata(key, reason);
        let zv = attrs
            .get(ROOT_ATTRIBUTE)
            .and_then(Value::as_object)
            .ok_or_else(|| {
                err("no `zarr_vectors` object in the root attributes (not a ZV store)".into())
            })?;
        let version = match zv.get("zv_version") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => return Err(err(format!("`zv_version` is {other}, not a string"))),
            None => return Err(err("`zarr_vectors` has no `zv_version`".into())),
        };
        match parse_version(&version) {
            Some((0, 7 | 9, _)) => {}
            _ => {
                return Err(Error::Version {
                    key: key.to_owned(),
                    found: version,
                })
            }
        }
        let ms = attrs
            .get("multiscales")
            .and_then(Value::as_array)
            .and_then(|l| l.first())
            .and_then(Value::as_object)
            .ok_or_else(|| err("no `multiscales[0]` in the root attributes".into()))?;
        let axes: Vec<Axis> = ms
            .get("axes")
            .and_then(Value::as_array)
            .ok_or_else(|| err("`multiscales[0].axes` is missing".into()))?
            .iter()
            .map(|a| match a {
                Value::Object(o) => {
                    Axis::from_object(o).ok_or_else(|| err(format!("axis {a} has no name")))
                }
                Value::String(s) => Ok(Axis {
                    name: s.clone(),
                    axis_type: None,
                    unit: None,
                }),
                other => Err(err(format!("axis {other} is not an object"))),
            })
            .collect::<Result<_>>()?;
        if axes.is_empty() {
            return Err(err("`multiscales[0].axes` is empty".into()));
        }
        let ndim = axes.len();
        let datasets = ms
            .get("datasets")
            .and_then(Value::as_array)
            .map(|ds| ds.iter().filter_map(parse_dataset).collect())
            .unwrap_or_default();
        let chunk_shape = f64_list(
            zv.get("chunk_shape")
                .ok_or_else(|| err("`chunk_shape` is missing".into()))?,
            "chunk_shape",
        )
        .map_err(&err)?;
        positive_extents(&chunk_shape, ndim, "chunk_shape")
            .map_err(|e| err(format!("{e} (one per axis)")))?;
        let bounds_v = zv
            .get("bounds")
            .ok_or_else(|| err("`bounds` is missing".into()))?;
        let bl = bounds_v
            .as_array()
            .filter(|b| b.len() == 2)
            .ok_or_else(|| err(format!("bounds {bounds_v} is not [min, max]")))?;
        let lo = f64_list(&bl[0], "bounds[0]").map_err(&err)?;
        let hi = f64_list(&bl[1], "bounds[1]").map_err(&err)?;
        if lo.len() != ndim || hi.len() != ndim {
            return Err(err(format!("bounds must have {ndim} values per side")));
        }
        let geometry_types = match zv.get("geometry_types") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => string_list(v, "geometry_types").map_err(&err)?,
        };
        let base_bin_shape = match zv.get("base_bin_shape") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let b = f64_list(v, "base_bin_shape").map_err(&err)?;
                positive_extents(&b, ndim, "base_bin_shape").map_err(&err)?;
                if !whole_multiples(&chunk_shape, &b) {
                    return Err(err(format!(
                        "base_bin_shape {b:?} does not divide chunk_shape {chunk_shape:?}"
                    )));
                }
                bounded_bins(&chunk_shape, &b, "base_bin_shape").map_err(&err)?;
                Some(b)
            }
        };
        let format_capabilities = match zv.get("format_capabilities") {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => string_list(v, "format_capabilities").map_err(&err)?,
        };
        let extra: JsonObject = zv
            .iter()
            .filter(|(k, _)| !ROOT_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        Ok(Self {
            zv_version: version,
            axes,
            chunk_shape,
            bounds: [lo, hi],
            geometry_types,
            crs: zv.get("crs").filter(|v| !v.is_null()).cloned(),
            links_convention: opt_enum(
                zv,
                "links_convention",
                "implicit_sequential",
                LINKS_CONVENTIONS,
            )
            .map_err(&err)?,
            object_index_convention: opt_enum(
                zv,
                "object_index_convention",
                "standard",
                OBJECT_INDEX_CONVENTIONS,
            )
            .map_err(&err)?,
            cross_chunk_strategy: opt_enum(
                zv,
                "cross_chunk_strategy",
                "explicit_links",
                CROSS_CHUNK_STRATEGIES,
            )
            .map_err(&err)?,
            cross_level_depth: opt_i64(zv, "cross_level_depth", 1).map_err(&err)?,
            cross_level_storage: opt_enum(
                zv,
                "cross_level_storage",
                "explicit",
                CROSS_LEVEL_STORAGES,
            )
            .map_err(&err)?,
            reduction_factor: opt_i64(zv, "reduction_factor", 8).map_err(&err)?,
            base_bin_shape,
            format_capabilities,
            datasets,
            extra,
        })
    }

    /// The number of axes (= vertex columns = chunk-key arity without attribute chunking).
    pub fn ndim(&self) -> usize {
        self.axes.len()
    }

    /// The level-0 bin shape: `base_bin_shape`, or the chunk shape.
    pub fn effective_bin_shape(&self) -> Vec<f64> {
        self.base_bin_shape
            .clone()
            .unwrap_or_else(|| self.chunk_shape.clone())
    }

    /// Bins per level-0 chunk along each axis.
    pub fn bins_per_chunk(&self) -> Vec<u64> {
        self.chunk_shape
            .iter()
            .zip(self.effective_bin_shape())
            .map(|(c, b)| (c / b).round().max(1.0) as u64)
            .collect()
    }

    /// The dataset entry of level `level`.
    pub fn dataset(&self, level: u32) -> Option<&Dataset> {
        let name = level.to_string();
        self.datasets.iter().find(|d| d.path == name)
    }

    /// Whether the store has the capability token.
    pub fn has_capability(&self, token: &str) -> bool {
        self.format_capabilities.iter().any(|c| c == token)
    }
}

fn parse_dataset(v: &Value) -> Option<Dataset> {
    let o = v.as_object()?;
    let path = match o.get("path")? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let mut scale = None;
    let mut translation = None;
    for t in o
        .get("coordinateTransformations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match t.get("type").and_then(Value::as_str) {
            Some("scale") => scale = t.get("scale").and_then(|s| f64_list(s, "scale").ok()),
            Some("translation") => {
                translation = t
                    .get("translation")
                    .and_then(|s| f64_list(s, "translation").ok())
            }
            _ => {}
        }
    }
    Some(Dataset {
        path,
        scale,
        translation,
    })
}
