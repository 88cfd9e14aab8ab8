//! ZV metadata: the root (`zarr_vectors` + NGFF `multiscales`), levels (`zarr_vectors_level`)
//! and chunk keys (§4).
//!
//! Parsing follows "read liberally" (DECISIONS.md): optional fields take the reference's
//! defaults, integer and float JSON numbers are both accepted, unknown keys are kept; but a
//! missing required field, a value of the wrong type, or a `zv_version` outside 0.7.x is an
//! error that names the document.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// A JSON object.
pub type JsonObject = Map<String, Value>;

/// The `zv_version` this crate writes.
pub const ZV_VERSION: &str = "0.7.0";

/// Chunk coordinates (one integer per chunk-key component; may be negative).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ChunkKey(pub Vec<i64>);

impl ChunkKey {
    /// The coordinates.
    pub fn coords(&self) -> &[i64] {
        &self.0
    }

    /// The number of components.
    pub fn arity(&self) -> usize {
        self.0.len()
    }
}

impl fmt::Display for ChunkKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

impl FromStr for ChunkKey {
    type Err = String;

    /// Parses `"1.-2.3"`; every component must be a decimal integer.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s.is_empty() {
            return Err("empty chunk key".into());
        }
        s.split('.')
            .map(|p| {
                let digits = p.strip_prefix('-').unwrap_or(p);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(format!("`{s}` is not a chunk key"));
                }
                p.parse::<i64>()
                    .map_err(|_| format!("`{s}`: component out of range"))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(ChunkKey)
    }
}

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

fn f64_list(v: &Value, what: &str) -> std::result::Result<Vec<f64>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what} is not a list"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| format!("{what} has a non-number {x}"))
        })
        .collect()
}

fn string_list(v: &Value, what: &str) -> std::result::Result<Vec<String>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what} is not a list"))?
        .iter()
        .map(|x| {
            x.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("{what} has a non-string {x}"))
        })
        .collect()
}

fn opt_str(m: &JsonObject, key: &str, default: &str) -> std::result::Result<String, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default.to_owned()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!("`{key}` is {other}, not a string")),
    }
}

fn opt_i64(m: &JsonObject, key: &str, default: i64) -> std::result::Result<i64, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| format!("`{key}` is {v}, not an integer")),
    }
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
    /// Parses the root group's attributes. `key` names the document in errors.
    pub fn from_attributes(attrs: &JsonObject, key: &str) -> Result<Self> {
        let err = |reason: String| Error::metadata(key, reason);
        let zv = attrs
            .get("zarr_vectors")
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
            Some((0, 7, _)) => {}
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
                Value::Object(o) => Ok(Axis {
                    name: o
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| err(format!("axis {a} has no name")))?
                        .to_owned(),
                    axis_type: o.get("type").and_then(Value::as_str).map(str::to_owned),
                    unit: o.get("unit").and_then(Value::as_str).map(str::to_owned),
                }),
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
        if chunk_shape.len() != ndim || chunk_shape.iter().any(|&c| !(c > 0.0 && c.is_finite())) {
            return Err(err(format!(
                "chunk_shape {chunk_shape:?} must have {ndim} positive values (one per axis)"
            )));
        }
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
                if b.len() != ndim || b.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
                    return Err(err(format!(
                        "base_bin_shape {b:?} must have {ndim} positive values"
                    )));
                }
                for (c, bb) in chunk_shape.iter().zip(&b) {
                    let r = c / bb;
                    if (r - r.round()).abs() > 1e-9 || r.round() < 1.0 {
                        return Err(err(format!(
                            "base_bin_shape {b:?} does not divide chunk_shape {chunk_shape:?}"
                        )));
                    }
                }
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
            links_convention: opt_str(zv, "links_convention", "implicit_sequential")
                .map_err(&err)?,
            object_index_convention: opt_str(zv, "object_index_convention", "standard")
                .map_err(&err)?,
            cross_chunk_strategy: opt_str(zv, "cross_chunk_strategy", "explicit_links")
                .map_err(&err)?,
            cross_level_depth: opt_i64(zv, "cross_level_depth", 1).map_err(&err)?,
            cross_level_storage: opt_str(zv, "cross_level_storage", "explicit").map_err(&err)?,
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

/// Parsed level metadata (`zarr_vectors_level`), with the bin grid taken from the NGFF block.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelMetadata {
    /// The level number.
    pub level: u32,
    /// Total vertex rows of the level.
    pub vertex_count: u64,
    /// `arrays_present` (informational; incomplete in 0.7.0 stores).
    pub arrays_present: Vec<String>,
    /// The per-level chunk shape override.
    pub chunk_shape: Option<Vec<f64>>,
    /// Fraction of the parent's objects kept.
    pub object_sparsity: f64,
    /// `coarsening_method` (default `none`).
    pub coarsening_method: String,
    /// The parent level.
    pub parent_level: Option<u32>,
    /// Attribute chunking: chunk-key dimension names.
    pub chunk_dims: Option<Vec<String>>,
    /// Attribute chunking: the attribute.
    pub chunk_attribute_name: Option<String>,
    /// Attribute chunking: bin index → value.
    pub chunk_attribute_values: Option<Vec<Value>>,
    /// Whether object ids are those of the parent level.
    pub preserves_object_ids: bool,
    /// The parent's object count, on id-preserving levels.
    pub inherited_num_objects: Option<u64>,
    /// Whether fragments may be shared by several objects.
    pub shared_fragments: bool,
    /// The bin shape (levels > 0; from NGFF `translation × 2`, else legacy keys).
    pub bin_shape: Option<Vec<f64>>,
    /// The bin ratio (levels > 0; from NGFF `scale`, else legacy keys).
    pub bin_ratio: Option<Vec<i64>>,
    /// Keys not interpreted here.
    pub extra: JsonObject,
}

const LEVEL_KEYS: &[&str] = &[
    "level",
    "vertex_count",
    "arrays_present",
    "chunk_shape",
    "object_sparsity",
    "coarsening_method",
    "parent_level",
    "chunk_dims",
    "chunk_attribute_name",
    "chunk_attribute_values",
    "preserves_object_ids",
    "inherited_num_objects",
    "shared_fragments",
    "bin_shape",
    "bin_ratio",
    "bin_size",
];

impl LevelMetadata {
    /// Parses a level group's attributes; `id` is the level's group name, `root` supplies the
    /// NGFF bin grid. `key` names the document in errors.
    pub fn from_attributes(
        attrs: &JsonObject,
        id: u32,
        root: &RootMetadata,
        key: &str,
    ) -> Result<Self> {
        let err = |reason: String| Error::metadata(key, reason);
        let empty = JsonObject::new();
        let lv = match attrs.get("zarr_vectors_level") {
            Some(Value::Object(o)) => o,
            Some(other) => {
                return Err(err(format!(
                    "`zarr_vectors_level` is {other}, not an object"
                )))
            }
            None => &empty,
        };
        let level = match lv.get("level") {
            None => id,
            Some(v) => v
                .as_u64()
                .and_then(|l| u32::try_from(l).ok())
                .ok_or_else(|| err(format!("`level` is {v}, not a level number")))?,
        };
        if level != id {
            return Err(err(format!(
                "`level` is {level} but the group is named {id}"
            )));
        }
        let vertex_count = match lv.get("vertex_count") {
            None | Some(Value::Null) => 0,
            Some(v) => v
                .as_u64()
                .ok_or_else(|| err(format!("`vertex_count` is {v}")))?,
        };
        let ndim = root.ndim();
        let chunk_shape = match lv.get("chunk_shape") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let c = f64_list(v, "chunk_shape").map_err(&err)?;
                if c.len() != ndim || c.iter().any(|&x| !(x > 0.0 && x.is_finite())) {
                    return Err(err(format!(
                        "level chunk_shape {c:?} must have {ndim} positive values"
                    )));
                }
                for (lc, rc) in c.iter().zip(&root.chunk_shape) {
                    let r = lc / rc;
                    if (r - r.round()).abs() > 1e-9 || r.round() < 1.0 {
                        return Err(err(format!(
                            "level chunk_shape {c:?} is not an integer multiple of the root chunk_shape {:?}",
                            root.chunk_shape
                        )));
                    }
                }
                Some(c)
            }
        };
        let parent_level = match lv.get("parent_level") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .and_then(|l| u32::try_from(l).ok())
                    .ok_or_else(|| err(format!("`parent_level` is {v}")))?,
            ),
        };
        let opt_strings = |k: &str| -> Result<Option<Vec<String>>> {
            match lv.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => string_list(v, k).map(Some).map_err(&err),
            }
        };
        let bool_key = |k: &str| -> Result<bool> {
            match lv.get(k) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(v) => Err(err(format!("`{k}` is {v}, not a boolean"))),
            }
        };
        // bin grid: NGFF first (levels > 0), then legacy keys
        let (mut bin_shape, mut bin_ratio) = (None, None);
        if level > 0 {
            if let Some(ds) = root.dataset(level) {
                bin_ratio = ds
                    .scale
                    .as_ref()
                    .map(|s| s.iter().map(|x| x.round() as i64).collect());
                bin_shape = ds
                    .translation
                    .as_ref()
                    .map(|t| t.iter().map(|x| 2.0 * x).collect());
            }
            if bin_shape.is_none() {
                if let Some(v) = lv
                    .get("bin_shape")
                    .or_else(|| lv.get("bin_size"))
                    .filter(|v| !v.is_null())
                {
                    bin_shape = Some(f64_list(v, "bin_shape").map_err(&err)?);
                }
            }
            if bin_ratio.is_none() {
                if let Some(v) = lv.get("bin_ratio").filter(|v| !v.is_null()) {
                    bin_ratio = Some(
                        f64_list(v, "bin_ratio")
                            .map_err(&err)?
                            .iter()
                            .map(|x| x.round() as i64)
                            .collect(),
                    );
                }
            }
        }
        if let Some(b) = &bin_shape {
            if b.len() != root.ndim() || b.iter().any(|x| !(x.is_finite() && *x > 0.0)) {
                return Err(err(format!(
                    "the level's bin shape {b:?} (from the NGFF translation or `bin_shape`) must have {} positive, finite values",
                    root.ndim()
                )));
            }
        }
        let object_sparsity = match lv.get("object_sparsity") {
            None | Some(Value::Null) => 1.0,
            Some(v) => v
                .as_f64()
                .ok_or_else(|| err(format!("`object_sparsity` is {v}")))?,
        };
        Ok(Self {
            level,
            vertex_count,
            arrays_present: opt_strings("arrays_present")?.unwrap_or_default(),
            chunk_shape,
            object_sparsity,
            coarsening_method: opt_str(lv, "coarsening_method", "none").map_err(&err)?,
            parent_level,
            chunk_dims: opt_strings("chunk_dims")?,
            chunk_attribute_name: match lv.get("chunk_attribute_name") {
                Some(Value::String(s)) => Some(s.clone()),
                _ => None,
            },
            chunk_attribute_values: lv
                .get("chunk_attribute_values")
                .and_then(Value::as_array)
                .cloned(),
            preserves_object_ids: bool_key("preserves_object_ids")?,
            inherited_num_objects: lv.get("inherited_num_objects").and_then(Value::as_u64),
            shared_fragments: bool_key("shared_fragments")?,
            bin_shape,
            bin_ratio,
            extra: lv
                .iter()
                .filter(|(k, _)| !LEVEL_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        })
    }

    /// The chunk shape of the level: the override, or the root's.
    pub fn effective_chunk_shape(&self, root: &RootMetadata) -> Vec<f64> {
        self.chunk_shape
            .clone()
            .unwrap_or_else(|| root.chunk_shape.clone())
    }

    /// The bin shape of the level (level 0: the root's effective bin shape).
    pub fn effective_bin_shape(&self, root: &RootMetadata) -> Vec<f64> {
        match (&self.bin_shape, self.level) {
            (Some(b), l) if l > 0 => b.clone(),
            _ => root.effective_bin_shape(),
        }
    }

    /// The chunk-key arity: the axes, plus one with attribute chunking.
    pub fn key_arity(&self, root: &RootMetadata) -> usize {
        root.ndim() + usize::from(self.chunk_attribute_name.is_some())
    }
}

/// `floor(p / chunk_shape)` per axis, the chunk of a position (absolute origin).
pub fn chunk_of(position: &[f64], chunk_shape: &[f64]) -> Vec<i64> {
    position
        .iter()
        .zip(chunk_shape)
        .map(|(p, c)| (p / c).floor() as i64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn chunk_keys() {
        let k: ChunkKey = "1.-2.30".parse().unwrap();
        assert_eq!(k.0, vec![1, -2, 30]);
        assert_eq!(k.to_string(), "1.-2.30");
        for bad in ["", "1..2", "a.1", "1.2.", "-", "1.+2", "c"] {
            assert!(bad.parse::<ChunkKey>().is_err(), "{bad}");
        }
        assert!(ChunkKey(vec![0, 1]) < ChunkKey(vec![1, -5]));
        assert_eq!(
            chunk_of(&[10.0, -0.5, 9.99], &[10.0, 10.0, 10.0]),
            vec![1, -1, 0]
        );
    }

    fn root_attrs(version: &str) -> JsonObject {
        json!({"zarr_vectors": {"zv_version": version, "chunk_shape": [10, 10.0], "bounds": [[0, 0], [20, 20]],
            "geometry_types": ["graph"]},
            "multiscales": [{"axes": [{"name": "x", "type": "space"}, {"name": "y", "type": "space"}],
            "datasets": [{"path": "0", "coordinateTransformations": [{"type": "scale", "scale": [1.0, 1.0]}]},
                         {"path": "1", "coordinateTransformations": [{"type": "scale", "scale": [2.0, 2.0]}, {"type": "translation", "translation": [10.0, 10.0]}]}]}]})
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn root_defaults_and_versions() {
        let r = RootMetadata::from_attributes(&root_attrs("0.7.0"), "zarr.json").unwrap();
        assert_eq!(r.ndim(), 2);
        assert_eq!(r.reduction_factor, 8);
        assert_eq!(r.cross_level_storage, "explicit");
        assert_eq!(r.bins_per_chunk(), vec![1, 1]);
        assert!(RootMetadata::from_attributes(&root_attrs("0.7.3"), "zarr.json").is_ok());
        for v in ["0.6.0", "0.8.0", "1.0", "x"] {
            let e = RootMetadata::from_attributes(&root_attrs(v), "zarr.json")
                .unwrap_err()
                .to_string();
            assert!(e.contains("this build reads 0.7.x"), "{e}");
        }
        let mut bad = root_attrs("0.7.0");
        bad["zarr_vectors"]["chunk_shape"] = json!([10]);
        assert!(RootMetadata::from_attributes(&bad, "zarr.json").is_err());
        let lvl = json!({"zarr_vectors_level": {"level": 1, "vertex_count": 3, "parent_level": 0}});
        let r = RootMetadata::from_attributes(&root_attrs("0.7.0"), "zarr.json").unwrap();
        let l =
            LevelMetadata::from_attributes(lvl.as_object().unwrap(), 1, &r, "1/zarr.json").unwrap();
        assert_eq!(l.bin_shape, Some(vec![20.0, 20.0]));
        assert_eq!(l.bin_ratio, Some(vec![2, 2]));
        assert!(
            LevelMetadata::from_attributes(lvl.as_object().unwrap(), 2, &r, "2/zarr.json").is_err()
        );
    }
}
