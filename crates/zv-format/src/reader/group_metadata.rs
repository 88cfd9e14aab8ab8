//! The attributes of an array group (the `zarr.json` of `vertices/`, `links/<delta>/`,
//! `object_index/`, an attribute's folder, …) that say how its blobs are typed: `dtype`,
//! `shape`, `link_width`, `sid_ndim`, `channel_names`. One parser each, used by every reader.

use serde_json::Value;
use zv_core::data_type::DataType;

use crate::error::{Error, Result};
use crate::metadata::JsonObject;

/// The `dtype` attribute (Zarr names, or numpy names such as `<f4`), `default` when absent.
/// Variable-length types are refused. `key` names the group document in errors.
pub(crate) fn data_type(attrs: &JsonObject, key: &str, default: DataType) -> Result<DataType> {
    match attrs.get("dtype") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(s)) => {
            let name = s.trim_start_matches(['<', '>', '|', '=']);
            let name = match name {
                "f4" => "float32",
                "f8" => "float64",
                "f2" => "float16",
                "i1" => "int8",
                "i2" => "int16",
                "i4" => "int32",
                "i8" => "int64",
                "u1" => "uint8",
                "u2" => "uint16",
                "u4" => "uint32",
                "u8" => "uint64",
                "b1" => "bool",
                other => other,
            };
            DataType::from_name(name)
                .filter(|d| !d.is_variable())
                .ok_or_else(|| Error::metadata(key, format!("unsupported dtype `{s}`")))
        }
        Some(other) => Err(Error::metadata(
            key,
            format!("dtype {other} is not a string"),
        )),
    }
}

/// The `shape` attribute of a dense attribute, if it is a list of integers.
pub(crate) fn shape(attrs: &JsonObject) -> Option<Vec<u64>> {
    attrs
        .get("shape")?
        .as_array()?
        .iter()
        .map(Value::as_u64)
        .collect()
}

/// The `link_width` attribute: 2 when absent, else an integer in `1..=64`.
pub(crate) fn link_width(attrs: &JsonObject, key: &str) -> Result<usize> {
    bounded(attrs, "link_width", key, 2, 1..=64)
}

/// The `sid_ndim` attribute (chunk-coordinate arity): `default` when absent, else at most 64.
pub(crate) fn sid_ndim(attrs: &JsonObject, key: &str, default: usize) -> Result<usize> {
    bounded(attrs, "sid_ndim", key, default, 0..=64)
}

/// An integer attribute `name` in `range`, `default` when absent or null.
fn bounded(
    attrs: &JsonObject,
    name: &str,
    key: &str,
    default: usize,
    range: std::ops::RangeInclusive<u64>,
) -> Result<usize> {
    match attrs.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .filter(|n| range.contains(n))
            .map(|n| n as usize)
            .ok_or_else(|| Error::metadata(key, format!("{name} {v} is invalid"))),
    }
}

/// The `channel_names` attribute: `None` when absent, each name as a string.
pub(crate) fn channel_names(attrs: &JsonObject, key: &str) -> Result<Option<Vec<String>>> {
    match attrs.get("channel_names") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => Ok(Some(
            a.iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| v.to_string())
                })
                .collect(),
        )),
        Some(other) => Err(Error::metadata(
            key,
            format!("channel_names {other} is not a list"),
        )),
    }
}
