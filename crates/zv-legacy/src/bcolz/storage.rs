//! The `meta/storage` and `meta/sizes` files of a carray.

use std::path::Path;

use serde_json::{Map, Value};

use crate::array::Compression;
use crate::dtype::NumpyDtype;
use crate::error::{Error, Result};
use crate::files::kind;

/// `meta/storage`, relative to the carray's root.
pub const STORAGE_FILE: &str = "meta/storage";
/// `meta/sizes`, relative to the carray's root.
pub const SIZES_FILE: &str = "meta/sizes";
/// The attributes file, relative to the carray's (or ctable's) root.
pub const ATTRS_FILE: &str = "__attrs__";

/// The parsed `meta/storage`.
#[derive(Debug, Clone)]
pub struct Storage {
    /// `dtype` (of one element of a row).
    pub dtype: NumpyDtype,
    /// `cparams`: `cname` (`blosclz` when absent), `clevel`, `shuffle`.
    pub compression: Compression,
    /// `cparams.quantize` (significant digits kept by a lossy float filter; 0 = off).
    pub quantize: i64,
    /// `chunklen`: rows per chunk.
    pub chunklen: u64,
    /// `expectedlen` (a sizing hint).
    pub expectedlen: Option<u64>,
    /// `dflt`: the default value of one element, stored byte order.
    pub dflt: Vec<u8>,
}

fn object<'a>(path: &Path, doc: &'a Value) -> Result<&'a Map<String, Value>> {
    doc.as_object()
        .ok_or_else(|| Error::invalid(path, format!("expected a JSON object, found {}", kind(doc))))
}

impl Storage {
    /// Parses the JSON of `meta/storage` (`path` names the file in errors).
    pub fn parse(path: &Path, doc: &Value) -> Result<Self> {
        let obj = object(path, doc)?;
        let dtype_text = obj
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::invalid(path, "`dtype` must be a string"))?;
        let dtype = NumpyDtype::parse(dtype_text).map_err(|w| Error::unsupported(path, w))?;
        let empty = Map::new();
        let cparams = match obj.get("cparams") {
            None => &empty,
            Some(Value::Object(m)) => m,
            Some(other) => {
                return Err(Error::invalid(
                    path,
                    format!("`cparams` must be an object, found {}", kind(other)),
                ))
            }
        };
        let cname = match cparams.get("cname") {
            None | Some(Value::Null) => "blosclz".to_owned(),
            Some(Value::String(s)) => s.clone(),
            Some(_) => return Err(Error::invalid(path, "`cparams.cname` must be a string")),
        };
        let clevel = match cparams.get("clevel") {
            None => 5,
            Some(v) => v
                .as_u64()
                .filter(|&c| c <= 9)
                .ok_or_else(|| Error::invalid(path, "`cparams.clevel` must be 0..=9"))?
                as u8,
        };
        let shuffle = match cparams.get("shuffle") {
            None => 1,
            Some(Value::Bool(b)) => u8::from(*b),
            Some(v) => v
                .as_u64()
                .filter(|&s| s <= 2)
                .ok_or_else(|| Error::invalid(path, "`cparams.shuffle` must be 0, 1 or 2"))?
                as u8,
        };
        let quantize = match cparams.get("quantize") {
            None | Some(Value::Null) => 0,
            Some(v) => v
                .as_i64()
                .ok_or_else(|| Error::invalid(path, "`cparams.quantize` must be an integer"))?,
        };
        let chunklen = obj
            .get("chunklen")
            .and_then(Value::as_u64)
            .filter(|&c| c > 0)
            .ok_or_else(|| Error::invalid(path, "`chunklen` must be a positive integer"))?;
        let expectedlen = obj.get("expectedlen").and_then(Value::as_u64);
        let dflt = match obj.get("dflt") {
            // A default of several values (one per element of a row) is accepted when they
            // are all equal; anything else has no Zarr v3 fill value.
            Some(Value::Array(items)) if !items.is_empty() => {
                let first = &items[0];
                if items.iter().any(|i| i != first) {
                    return Err(Error::unsupported(
                        path,
                        "`dflt` with different values per element of a row",
                    ));
                }
                first.clone()
            }
            Some(v) => v.clone(),
            None => Value::Null,
        };
        let dflt = dtype
            .fill_from_json(&dflt)
            .map_err(|r| Error::invalid(path, format!("`dflt`: {r}")))?;
        Ok(Self {
            dtype,
            compression: Compression {
                cname,
                clevel,
                shuffle,
            },
            quantize,
            chunklen,
            expectedlen,
            dflt,
        })
    }
}

/// The parsed `meta/sizes`.
#[derive(Debug, Clone)]
pub struct Sizes {
    /// `shape`: rows, then the shape of one row.
    pub shape: Vec<u64>,
    /// `nbytes` (decoded size), if present.
    pub nbytes: Option<u64>,
    /// `cbytes` (compressed size), if present.
    pub cbytes: Option<u64>,
}

impl Sizes {
    /// Parses the JSON of `meta/sizes`.
    pub fn parse(path: &Path, doc: &Value) -> Result<Self> {
        let obj = object(path, doc)?;
        let shape = obj
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::invalid(path, "`shape` must be a non-empty list of integers"))?;
        Ok(Self {
            shape,
            nbytes: obj.get("nbytes").and_then(Value::as_u64),
            cbytes: obj.get("cbytes").and_then(Value::as_u64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn real_bcolz_storage_and_defaults() {
        let p = Path::new("meta/storage");
        let s = Storage::parse(
            p,
            &json!({"dtype": ">f8", "cparams": {"clevel": 5, "shuffle": 1, "cname": "lz4", "quantize": 0},
                    "chunklen": 3, "expectedlen": 8, "dflt": 7.5}),
        )
        .unwrap();
        assert_eq!(s.dflt, 7.5f64.to_be_bytes());
        assert_eq!(s.chunklen, 3);
        // The seed document's example: shuffle as a boolean, no cname.
        let s = Storage::parse(
            p,
            &json!({"dtype": "int32", "cparams": {"shuffle": true, "clevel": 5}, "chunklen": 65536, "dflt": 0, "expectedlen": 100000}),
        )
        .unwrap();
        assert_eq!(
            (s.compression.cname.as_str(), s.compression.shuffle),
            ("blosclz", 1)
        );
        for bad in [
            json!({"dtype": "object", "chunklen": 1}),
            json!({"dtype": "int32", "chunklen": 0}),
            json!({"dtype": "int32", "chunklen": 4, "dflt": [1, 2]}),
            json!({"dtype": "int32", "chunklen": 4, "cparams": {"shuffle": 7}}),
            json!([1]),
        ] {
            assert!(Storage::parse(p, &bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        let p = Path::new("meta/sizes");
        let s = Sizes::parse(
            p,
            &json!({"shape": [100000], "nbytes": 400000, "cbytes": 266904}),
        )
        .unwrap();
        assert_eq!(s.shape, vec![100000]);
        assert!(Sizes::parse(p, &json!({"shape": []})).is_err());
        assert!(Sizes::parse(p, &json!({"shape": [-1]})).is_err());
    }
}
