//! Level metadata: the `zarr_vectors_level` attributes of a level group, with the bin grid
//! taken from the root's NGFF block (`docs/format-decisions.md`, "`bin_shape` / `bin_ratio`").

use serde_json::Value;

use super::json::{
    bounded_bins, f64_list, opt_str, positive_extents, string_list, whole_multiples,
};
use super::{JsonObject, RootMetadata};
use crate::error::{Error, Result};
use crate::names::LEVEL_ATTRIBUTE;

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
        let lv = match attrs.get(LEVEL_ATTRIBUTE) {
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
                positive_extents(&c, ndim, "level chunk_shape").map_err(&err)?;
                if !whole_multiples(&c, &root.chunk_shape) {
                    return Err(err(format!(
                        "level chunk_shape {c:?} is not an integer multiple of the root chunk_shape {:?}",
                        root.chunk_shape
                    )));
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
            let chunk = chunk_shape.as_ref().unwrap_or(&root.chunk_shape);
            bounded_bins(chunk, b, "the level's bin shape").map_err(&err)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::{JsonObject, RootMetadata};
    use serde_json::json;

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
        for v in ["0.6.0", "0.8.0", "0.10.0", "1.0", "x"] {
            let e = RootMetadata::from_attributes(&root_attrs(v), "zarr.json")
                .unwrap_err()
                .to_string();
            assert!(e.contains("this build reads 0.7.x and 0.9.x"), "{e}");
        }
        let r9 = RootMetadata::from_attributes(&root_attrs("0.9.2"), "zarr.json").unwrap();
        assert_eq!(r9.layout(), crate::metadata::Layout::ChunkGrid);
        assert_eq!(r.layout(), crate::metadata::Layout::PerChunkNodes);
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
