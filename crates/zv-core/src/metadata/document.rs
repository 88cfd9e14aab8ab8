//! Shared steps of reading and writing a `zarr.json` document: the header, typed field
//! extraction and the rule for unknown top-level keys (kept for the round trip).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{invalid, JsonObject, MetadataError};

/// Keys that are not part of the core specification but are written by common
/// implementations; kept as they are.
const TOLERATED_KEYS: &[&str] = &["consolidated_metadata"];

pub(super) fn split_extra(
    map: &mut JsonObject,
    known: &[&str],
) -> Result<BTreeMap<String, Value>, MetadataError> {
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| !known.contains(&k.as_str()))
        .cloned()
        .collect();
    let mut extra = BTreeMap::new();
    for key in unknown {
        let Some(value) = map.remove(&key) else {
            continue;
        };
        let may_ignore = TOLERATED_KEYS.contains(&key.as_str())
            || value
                .as_object()
                .and_then(|o| o.get("must_understand"))
                .and_then(Value::as_bool)
                == Some(false);
        if !may_ignore {
            return Err(MetadataError::Unsupported(format!(
                "unknown key `{key}` (an unknown key must be an object with \"must_understand\": false)"
            )));
        }
        extra.insert(key, value);
    }
    Ok(extra)
}

pub(super) fn take<T: serde::de::DeserializeOwned>(
    map: &mut JsonObject,
    key: &str,
) -> Result<T, MetadataError> {
    let value = map
        .remove(key)
        .ok_or_else(|| invalid(format!("missing field `{key}`")))?;
    serde_json::from_value(value).map_err(|e| invalid(format!("field `{key}`: {e}")))
}

pub(super) fn take_opt<T: serde::de::DeserializeOwned>(
    map: &mut JsonObject,
    key: &str,
) -> Result<Option<T>, MetadataError> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|e| invalid(format!("field `{key}`: {e}"))),
    }
}

pub(super) fn check_header(map: &mut JsonObject, node_type: &str) -> Result<(), MetadataError> {
    match map.remove("zarr_format") {
        Some(Value::Number(n)) if n.as_u64() == Some(3) => {}
        Some(other) => {
            return Err(MetadataError::Unsupported(format!(
                "zarr_format {other} (this build reads Zarr v3)"
            )))
        }
        None => return Err(invalid("missing field `zarr_format`")),
    }
    match map.remove("node_type") {
        Some(Value::String(s)) if s == node_type => Ok(()),
        Some(other) => Err(invalid(format!(
            "node_type is {other}, expected \"{node_type}\""
        ))),
        None => Err(invalid("missing field `node_type`")),
    }
}

pub(super) fn parse_object(bytes: &[u8]) -> Result<JsonObject, MetadataError> {
    match serde_json::from_slice::<Value>(bytes)? {
        Value::Object(m) => Ok(m),
        _ => Err(invalid("the document is not a JSON object")),
    }
}

/// The first keys of a written document: `zarr_format` and `node_type`.
pub(super) fn header(node_type: &str) -> JsonObject {
    let mut m = Map::new();
    m.insert("zarr_format".into(), Value::from(3));
    m.insert("node_type".into(), Value::from(node_type));
    m
}

/// The written document `m` followed by the kept unknown keys.
pub(super) fn with_extra(mut m: JsonObject, extra: &BTreeMap<String, Value>) -> Value {
    for (k, v) in extra {
        m.insert(k.clone(), v.clone());
    }
    Value::Object(m)
}
