//! File access shared by both formats: reads bounded by what the metadata justifies, and the
//! JSON of metadata files (as Python's `json` writes it: bare `NaN`, `Infinity` and
//! `-Infinity` are accepted and become the strings Zarr v3 uses for them).

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};

/// The largest metadata file read (`__zmeta__`, `meta/storage`, attributes, …).
pub const MAX_METADATA_BYTES: u64 = 16 << 20;

/// The size of a file, or `None` if it does not exist.
pub(crate) fn size_if_exists(path: &Path) -> Result<Option<u64>> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(Some(m.len())),
        Ok(_) => Err(Error::invalid(path, "not a regular file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::Io {
            path: path.to_path_buf(),
            source: e,
        }),
    }
}

/// Reads a file of at most `cap` bytes, or `None` if it does not exist. The size is checked
/// before anything is allocated, and the read stops at `cap + 1` bytes whatever the file
/// grows to meanwhile.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<Option<Vec<u8>>> {
    let Some(size) = size_if_exists(path)? else {
        return Ok(None);
    };
    if size > cap {
        return Err(Error::invalid(
            path,
            format!("file of {size} bytes is larger than the {cap} bytes the metadata allows"),
        ));
    }
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(io)?;
    if out.len() as u64 > cap {
        return Err(Error::invalid(
            path,
            "file grew beyond its allowed size while read",
        ));
    }
    Ok(Some(out))
}

/// Reads a JSON metadata file, or `None` if it does not exist.
pub(crate) fn read_json_opt(path: &Path) -> Result<Option<Value>> {
    let Some(bytes) = read_capped(path, MAX_METADATA_BYTES)? else {
        return Ok(None);
    };
    parse_json(&bytes).map(Some).map_err(|source| Error::Json {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a JSON metadata file that must exist.
pub(crate) fn read_json(path: &Path) -> Result<Value> {
    read_json_opt(path)?.ok_or_else(|| Error::invalid(path, "missing metadata file"))
}

/// Reads an optional JSON object of user attributes (a missing file is no attributes).
pub(crate) fn read_attributes(path: &Path) -> Result<serde_json::Map<String, Value>> {
    match read_json_opt(path)? {
        None => Ok(serde_json::Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(Error::invalid(
            path,
            format!("attributes must be a JSON object, found {}", kind(&other)),
        )),
    }
}

/// The JSON kind of a value, for messages.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Parses JSON, accepting the bare `NaN`, `Infinity` and `-Infinity` of Python's `json`
/// (outside strings) as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`.
pub fn parse_json(bytes: &[u8]) -> serde_json::Result<Value> {
    match serde_json::from_slice(bytes) {
        Ok(v) => Ok(v),
        Err(first) => {
            let rewritten = quote_non_finite(bytes);
            if rewritten.as_slice() == bytes {
                return Err(first);
            }
            serde_json::from_slice(&rewritten).map_err(|_| first)
        }
    }
}

fn quote_non_finite(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        let b = bytes[i];
        if in_string {
            out.push(b);
            if b == b'\\' {
                if let Some(&next) = bytes.get(i + 1) {
                    out.push(next);
                    i += 1;
                }
            } else if b == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            out.push(b);
            i += 1;
            continue;
        }
        let rest = &bytes[i..];
        let token = [&b"-Infinity"[..], b"Infinity", b"NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t));
        if let Some(t) = token {
            out.push(b'"');
            out.extend_from_slice(t);
            out.push(b'"');
            i += t.len();
        } else {
            out.push(b);
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_non_finite_numbers_become_strings() {
        let v =
            parse_json(br#"{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN -Infinity"}"#).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a": "NaN", "b": ["Infinity", "-Infinity"], "c": "NaN -Infinity"})
        );
    }

    #[test]
    fn invalid_json_reports_the_first_error() {
        assert!(parse_json(b"{\"a\": nope}").is_err());
        assert!(parse_json(b"{\"a\": \"\\\"NaN}").is_err());
    }
}
