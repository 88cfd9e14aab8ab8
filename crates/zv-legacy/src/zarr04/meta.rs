//! `__zmeta__`: the configuration of a zarr 0.4 array.

use std::path::Path;

use serde_json::Value;

use crate::array::Compression;
use crate::dtype::NumpyDtype;
use crate::error::{Error, Result};
use crate::files::kind;

/// The metadata file.
pub const META_FILE: &str = "__zmeta__";
/// The attributes file.
pub const ATTRS_FILE: &str = "__zattr__";
/// The chunk directory.
pub const DATA_DIR: &str = "__zdata__";

/// The parsed `__zmeta__`.
#[derive(Debug, Clone)]
pub struct Zarr04Meta {
    /// `shape`.
    pub shape: Vec<u64>,
    /// `chunks`.
    pub chunks: Vec<u64>,
    /// `dtype`.
    pub dtype: NumpyDtype,
    /// `fill_value`, one element in the stored byte order (`null` reads as zero).
    pub fill_value: Vec<u8>,
    /// `cname`, `clevel`, `shuffle`.
    pub compression: Compression,
}

impl Zarr04Meta {
    /// Parses the JSON of `__zmeta__` (`path` names the file in errors).
    pub fn parse(path: &Path, doc: &Value) -> Result<Self> {
        let obj = doc.as_object().ok_or_else(|| {
            Error::invalid(path, format!("expected a JSON object, found {}", kind(doc)))
        })?;
        let field = |name: &str| {
            obj.get(name)
                .ok_or_else(|| Error::invalid(path, format!("missing field `{name}`")))
        };
        let dims = |name: &str| -> Result<Vec<u64>> {
            field(name)?
                .as_array()
                .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
                .ok_or_else(|| Error::invalid(path, format!("`{name}` must be a list of integers")))
        };
        let shape = dims("shape")?;
        let chunks = dims("chunks")?;
        if shape.is_empty() {
            return Err(Error::unsupported(path, "0-dimensional arrays"));
        }
        if chunks.len() != shape.len() {
            return Err(Error::invalid(
                path,
                format!("`chunks` {chunks:?} does not match the dimensions of `shape` {shape:?}"),
            ));
        }
        if chunks.contains(&0) {
            return Err(Error::invalid(
                path,
                format!("`chunks` {chunks:?} has a zero extent"),
            ));
        }
        let dtype_text = field("dtype")?
            .as_str()
            .ok_or_else(|| Error::invalid(path, "`dtype` must be a string"))?;
        let dtype = NumpyDtype::parse(dtype_text).map_err(|w| Error::unsupported(path, w))?;
        let fill_value = dtype
            .fill_from_json(obj.get("fill_value").unwrap_or(&Value::Null))
            .map_err(|r| Error::invalid(path, format!("`fill_value`: {r}")))?;
        let cname = field("cname")?
            .as_str()
            .ok_or_else(|| Error::invalid(path, "`cname` must be a string"))?
            .to_owned();
        let small = |name: &str, max: u64| -> Result<u8> {
            field(name)?
                .as_u64()
                .filter(|&v| v <= max)
                .map(|v| v as u8)
                .ok_or_else(|| {
                    Error::invalid(path, format!("`{name}` must be an integer 0..={max}"))
                })
        };
        let compression = Compression {
            cname,
            clevel: small("clevel", 9)?,
            shuffle: small("shuffle", 2)?,
        };
        Ok(Self {
            shape,
            chunks,
            dtype,
            fill_value,
            compression,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"chunks": [10, 5], "clevel": 3, "cname": "lz4", "dtype": "<i4",
               "fill_value": 42, "shape": [100, 7], "shuffle": 1})
    }

    #[test]
    fn parses_the_seed_example() {
        let m = Zarr04Meta::parse(Path::new("__zmeta__"), &doc()).unwrap();
        assert_eq!((m.shape, m.chunks), (vec![100, 7], vec![10, 5]));
        assert_eq!(m.fill_value, 42i32.to_le_bytes());
        assert_eq!(m.compression.cname, "lz4");
    }

    #[test]
    fn bad_fields_name_the_file() {
        for (k, v) in [
            ("chunks", json!([10])),
            ("chunks", json!([0, 5])),
            ("shape", json!("x")),
            ("dtype", json!("|O")),
            ("shuffle", json!(3)),
            ("fill_value", json!("abc")),
        ] {
            let mut d = doc();
            d[k] = v;
            let e = Zarr04Meta::parse(Path::new("/x/__zmeta__"), &d).unwrap_err();
            assert!(e.to_string().starts_with("/x/__zmeta__: "), "{e}");
        }
    }
}
