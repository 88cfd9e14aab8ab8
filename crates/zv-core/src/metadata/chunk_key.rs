//! Chunk key encodings: how chunk grid coordinates become store keys (`default`, `v2`).

use std::fmt::Write as _;

use serde_json::Value;

use super::{invalid, ExtensionMetadata, MetadataError};

/// How chunk grid coordinates become store keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkKeyEncoding {
    /// `default`: `c` + separator + coordinates joined by the separator (`c/1/2`); `c` for 0-d.
    Default {
        /// `/` or `.`.
        separator: char,
    },
    /// `v2`: coordinates joined by the separator (`1.2`); `0` for 0-d.
    V2 {
        /// `.` or `/`.
        separator: char,
    },
}

impl Default for ChunkKeyEncoding {
    fn default() -> Self {
        ChunkKeyEncoding::Default { separator: '/' }
    }
}

impl ChunkKeyEncoding {
    /// The key of the chunk at grid coordinates `coords`, relative to the array.
    pub fn encode(&self, coords: &[u64]) -> String {
        match *self {
            ChunkKeyEncoding::Default { separator } => {
                let mut key = String::with_capacity(1 + 4 * coords.len());
                key.push('c');
                for c in coords {
                    key.push(separator);
                    // writing to a String cannot fail
                    let _ = write!(key, "{c}");
                }
                key
            }
            ChunkKeyEncoding::V2 { separator } => {
                if coords.is_empty() {
                    return "0".to_owned();
                }
                let parts: Vec<String> = coords.iter().map(u64::to_string).collect();
                parts.join(&separator.to_string())
            }
        }
    }

    /// Parses a chunk key (relative to the array) back into grid coordinates of `ndim`
    /// dimensions; `None` if the key is not a chunk key of this encoding.
    pub fn decode(&self, key: &str, ndim: usize) -> Option<Vec<u64>> {
        let rest = match *self {
            ChunkKeyEncoding::Default { separator } => {
                if ndim == 0 {
                    return (key == "c").then(Vec::new);
                }
                key.strip_prefix('c')?.strip_prefix(separator)?
            }
            ChunkKeyEncoding::V2 { .. } if ndim == 0 => return (key == "0").then(Vec::new),
            ChunkKeyEncoding::V2 { .. } => key,
        };
        let sep = match *self {
            ChunkKeyEncoding::Default { separator } | ChunkKeyEncoding::V2 { separator } => {
                separator
            }
        };
        let coords: Option<Vec<u64>> = rest
            .split(sep)
            .map(|p| {
                if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                    None
                } else {
                    p.parse().ok()
                }
            })
            .collect();
        coords.filter(|c| c.len() == ndim)
    }

    /// The `chunk_key_encoding` entry of an array document.
    pub(super) fn to_metadata(self) -> Value {
        let (name, sep) = match self {
            ChunkKeyEncoding::Default { separator } => ("default", separator),
            ChunkKeyEncoding::V2 { separator } => ("v2", separator),
        };
        serde_json::json!({"name": name, "configuration": {"separator": sep.to_string()}})
    }

    /// Reads a `chunk_key_encoding` entry of an array document.
    pub(super) fn from_metadata(ext: &ExtensionMetadata) -> Result<Self, MetadataError> {
        let sep = match ext.configuration.as_ref().and_then(|c| c.get("separator")) {
            None => None,
            Some(Value::String(s)) if s == "/" || s == "." => s.chars().next(),
            Some(other) => {
                return Err(invalid(format!(
                    "chunk_key_encoding separator must be \"/\" or \".\", got {other}"
                )))
            }
        };
        match ext.name.as_str() {
            "default" => Ok(ChunkKeyEncoding::Default {
                separator: sep.unwrap_or('/'),
            }),
            "v2" => Ok(ChunkKeyEncoding::V2 {
                separator: sep.unwrap_or('.'),
            }),
            other => Err(MetadataError::Unsupported(format!(
                "chunk_key_encoding `{other}` (supported: default, v2)"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_keys() {
        let d = ChunkKeyEncoding::Default { separator: '/' };
        assert_eq!(d.encode(&[1, 23]), "c/1/23");
        assert_eq!(d.encode(&[]), "c");
        assert_eq!(d.decode("c/1/23", 2), Some(vec![1, 23]));
        assert_eq!(d.decode("c/1/23", 3), None);
        assert_eq!(d.decode("c", 0), Some(vec![]));
        let v2 = ChunkKeyEncoding::V2 { separator: '.' };
        assert_eq!(v2.encode(&[1, 23]), "1.23");
        assert_eq!(v2.encode(&[]), "0");
        assert_eq!(v2.decode("1.23", 2), Some(vec![1, 23]));
        assert_eq!(v2.decode("1.-3", 2), None);
    }
}
