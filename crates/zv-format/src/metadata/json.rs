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

/// [`opt_str`] for an enumeration: the value (or `default`) must be one of `allowed`
/// (an unknown value is an error naming the values read, never kept silently).
pub(super) fn opt_enum(
    m: &JsonObject,
    key: &str,
    default: &str,
    allowed: &[&str],
) -> std::result::Result<String, String> {
    let v = opt_str(m, key, default)?;
    if allowed.contains(&v.as_str()) {
        return Ok(v);
    }
    Err(format!(
        "`{key}` is `{v}`; this build reads {}",
        allowed
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
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

/// The most bins a chunk may have when read: a fragment index counts its fragments in a u32,
/// and a point cloud without objects stores one fragment per bin (`docs/format-decisions.md`,
/// "Metadata that contradicts the layout").
pub const MAX_BINS_PER_CHUNK: u64 = u32::MAX as u64;

/// Checks that `bin` cuts `chunk` into at most [`MAX_BINS_PER_CHUNK`] bins (`what` names the
/// bin shape in the error). Nothing is allocated from the count.
pub(super) fn bounded_bins(
    chunk: &[f64],
    bin: &[f64],
    what: &str,
) -> std::result::Result<(), String> {
    let per_axis: Vec<f64> = chunk
        .iter()
        .zip(bin)
        .map(|(c, b)| (c / b).round())
        .collect();
    let total = per_axis.iter().try_fold(1u64, |acc, &n| {
        if n.is_finite() && (1.0..=MAX_BINS_PER_CHUNK as f64).contains(&n) {
            acc.checked_mul(n as u64)
        } else {
            None
        }
    });
    match total {
        Some(t) if t <= MAX_BINS_PER_CHUNK => Ok(()),
        _ => Err(format!(
            "{what} {bin:?} cuts chunk_shape {chunk:?} into {per_axis:?} bins per axis, more than {MAX_BINS_PER_CHUNK} bins per chunk"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_per_chunk_are_bounded() {
        assert!(bounded_bins(&[40.0, 40.0], &[20.0, 20.0], "b").is_ok());
        // 2^16 × 2^16 = 2^32 > u32::MAX
        let e = bounded_bins(&[65536.0, 65536.0], &[1.0, 1.0], "b").unwrap_err();
        assert!(e.contains("bins per chunk"), "{e}");
        assert!(bounded_bins(&[65536.0, 65535.0], &[1.0, 1.0], "b").is_ok());
        assert!(bounded_bins(&[1.0, 1.0], &[1e-300, 1.0], "b").is_err());
    }

    #[test]
    fn enumerations_refuse_unknown_values() {
        let m: JsonObject = serde_json::from_str(r#"{"a": "x", "b": 1}"#).unwrap();
        assert_eq!(opt_enum(&m, "a", "y", &["x", "y"]).unwrap(), "x");
        assert_eq!(opt_enum(&m, "c", "y", &["x", "y"]).unwrap(), "y");
        assert!(opt_enum(&m, "a", "y", &["y"]).unwrap_err().contains("`x`"));
        assert!(opt_enum(&m, "b", "y", &["y"]).is_err());
    }
}
