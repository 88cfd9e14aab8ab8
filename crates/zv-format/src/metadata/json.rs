//! Readers of JSON values shared by the metadata models: "read liberally" (see
//! `docs/format-decisions.md`), integer and float numbers are both accepted where the value
//! is integral; errors are plain descriptions that the caller attaches to a key.

use serde_json::Value;

use super::JsonObject;

pub(crate) fn f64_list(v: &Value, what: &str) -> std::result::Result<Vec<f64>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what} is not a list"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| format!("{what} has a non-number {x}"))
        })
        .collect()
}

pub(crate) fn string_list(v: &Value, what: &str) -> std::result::Result<Vec<String>, String> {
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

pub(crate) fn opt_str(
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

pub(crate) fn opt_i64(m: &JsonObject, key: &str, default: i64) -> std::result::Result<i64, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => as_int(v).ok_or_else(|| format!("`{key}` is {v}, not an integer")),
    }
}

/// Checks that `extents` (named `what`) has `ndim` values, each positive and finite.
pub(crate) fn positive_extents(
    extents: &[f64],
    ndim: usize,
    what: &str,
) -> std::result::Result<(), String> {
    if extents.len() == ndim && extents.iter().all(|&x| x > 0.0 && x.is_finite()) {
        Ok(())
    } else {
        Err(format!(
            "{what} {extents:?} must have {ndim} positive values"
        ))
    }
}

/// Whether each of `outer` is a whole multiple (1 or more, to within 1e-9) of the matching
/// value of `inner`.
pub(crate) fn whole_multiples(outer: &[f64], inner: &[f64]) -> bool {
    !outer.iter().zip(inner).any(|(o, i)| {
        let r = o / i;
        (r - r.round()).abs() > 1e-9 || r.round() < 1.0
    })
}

/// An integer, written as an integer or as an integral float.
pub(crate) fn as_int(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
}

/// A non-negative integer, written as an integer or as an integral float.
pub(crate) fn as_uint(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < u64::MAX as f64)
            .map(|f| f as u64)
    })
}

/// `m[key]` read by `read`; absent or `null` is `None`, a value `read` refuses is the error
/// "`<key> <value> is invalid`".
pub(crate) fn opt_value<T>(
    m: &JsonObject,
    key: &str,
    read: impl FnOnce(&Value) -> Option<T>,
) -> std::result::Result<Option<T>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v)
            .map(Some)
            .ok_or_else(|| format!("{key} {v} is invalid")),
    }
}

/// A list of non-negative integers (integral floats accepted).
pub(crate) fn uint_list(v: &Value) -> Option<Vec<u64>> {
    v.as_array()?.iter().map(as_uint).collect()
}

/// The keys of `m` not in `known`, in their order.
pub(crate) fn unknown_keys(m: &JsonObject, known: impl Fn(&str) -> bool) -> JsonObject {
    m.iter()
        .filter(|(k, _)| !known(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
