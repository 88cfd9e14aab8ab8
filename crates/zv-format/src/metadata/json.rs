//! Readers of JSON values shared by the metadata models: "read liberally" (see
//! `docs/format-decisions.md`), integer and float numbers are both accepted where the value
//! is integral; errors are plain descriptions that the caller attaches to a key.

use serde_json::Value;

use super::JsonObject;

pub(super) fn f64_list(v: &Value, what: &str) -> std::result::Result<Vec<f64>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what} is not a list"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| format!("{what} has a non-number {x}"))
        })
        .collect()
}

pub(super) fn string_list(v: &Value, what: &str) -> std::result::Result<Vec<String>, String> {
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

pub(super) fn opt_str(
    m: &JsonObject,
    key: &str,
    default: &str,
) -> std::result::Result<String, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default.to_owned()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!("`{key}` is {other}, not a string")),
    }
}

pub(super) fn opt_i64(m: &JsonObject, key: &str, default: i64) -> std::result::Result<i64, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
            .ok_or_else(|| format!("`{key}` is {v}, not an integer")),
    }
}
