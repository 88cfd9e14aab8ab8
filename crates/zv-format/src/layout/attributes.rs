//! Attribute payloads: row-aligned rows, dense arrays and dictionary encoding.
//!
//! - **Row-aligned typed rows** (`vertex_attributes/<n>/<key>`, `link_attributes/…`,
//!   `fragment_attributes/…`): `N × C` values of the attribute's data type, little-endian, row
//!   `r` belonging to row `r` of the vertices (or links, or fragments). `C` is the number of
//!   channels (1 for a scalar attribute).
//! - **Dense arrays** (`object_attributes/<n>/data`, `group_attributes/<n>/data`): a C-order
//!   `(B,)` or `(B, C)` array; `present_mask` is `uint8[B]` (1 = the row is real).
//! - **Dictionary encoding** (categorical attributes): the payload holds integer codes into a
//!   sorted `categories` list kept in the array's attributes; the code type is the smallest
//!   unsigned type (`uint8`, `uint16`, `uint32`) or, when values are missing, the smallest
//!   signed one with `_FillValue: -1`.
//!
//! ```text
//! rows:      v[0,0] v[0,1] … v[0,C-1] v[1,0] …          (N × C values, LE, no header)
//! dense:     v[0]   v[1]   … (B,)  or  v[0,0] … (B, C)
//! mask:      u8[B]  (0 or 1)
//! ```
//!
//! ```
//! use zv_format::layout::attributes::{AttributeRows, Dictionary};
//! use zv_core::data_type::DataType;
//! let rows = AttributeRows::from_f64s(DataType::Float32, 3, &[1.0, 0.0, 0.0, 0.5, 0.5, 0.0])?;
//! assert_eq!(AttributeRows::decode(&rows.encode(), DataType::Float32, 2, None)?, rows);
//! let (dict, codes) = Dictionary::encode(&[Some("soma"), Some("axon"), Some("soma")])?;
//! assert_eq!(codes.data_type(), DataType::UInt8);
//! assert_eq!(dict.decode(&codes)?, vec![Some("soma".into()), Some("axon".into()), Some("soma".into())]);
//! # Ok::<(), zv_format::layout::LayoutError>(())
//! ```

use half::f16;
use serde_json::{Map, Value};
use zv_core::data_type::{element_to_json, DataType};

use super::{invalid, LayoutError};

const WHAT: &str = "attribute";

fn element_size(data_type: DataType) -> Result<usize, LayoutError> {
    data_type.size().ok_or_else(|| {
        invalid(
            WHAT,
            format!("data type {data_type} is not a fixed-size numeric type"),
        )
    })
}

/// Converts one little-endian element to native order.
fn le_to_ne(data_type: DataType, bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if cfg!(target_endian = "big") {
        if let Some(w) = data_type.component_size().filter(|&w| w > 1) {
            v.chunks_exact_mut(w).for_each(<[u8]>::reverse);
        }
    }
    v
}

/// The value of one little-endian element as `f64` (complex: the real part; bool: 0 or 1).
pub fn le_to_f64(data_type: DataType, b: &[u8]) -> f64 {
    let a = |n: usize| -> [u8; 8] {
        let mut x = [0u8; 8];
        x[..n.min(b.len())].copy_from_slice(&b[..n.min(b.len())]);
        x
    };
    let x = a(8);
    match data_type {
        DataType::Bool => f64::from(u8::from(b.first().copied().unwrap_or(0) != 0)),
        DataType::Int8 => f64::from(x[0] as i8),
        DataType::UInt8 => f64::from(x[0]),
        DataType::Int16 => f64::from(i16::from_le_bytes([x[0], x[1]])),
        DataType::UInt16 => f64::from(u16::from_le_bytes([x[0], x[1]])),
        DataType::Float16 => f16::from_le_bytes([x[0], x[1]]).to_f64(),
        DataType::Int32 => f64::from(i32::from_le_bytes([x[0], x[1], x[2], x[3]])),
        DataType::UInt32 => f64::from(u32::from_le_bytes([x[0], x[1], x[2], x[3]])),
        DataType::Float32 | DataType::Complex64 => {
            f64::from(f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
        }
        DataType::Int64 => i64::from_le_bytes(x) as f64,
        DataType::UInt64 => u64::from_le_bytes(x) as f64,
        _ => f64::from_le_bytes(x),
    }
}

/// Encodes `v` as one little-endian element of `data_type` (rounding and saturating as `as`
/// casts do).
pub fn f64_to_le(data_type: DataType, v: f64, out: &mut Vec<u8>) {
    match data_type {
        DataType::Bool => out.push(u8::from(v != 0.0)),
        DataType::Int8 => out.push(v as i8 as u8),
        DataType::UInt8 => out.push(v as u8),
        DataType::Int16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
        DataType::UInt16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
        DataType::Float16 => out.extend_from_slice(&f16::from_f64(v).to_le_bytes()),
        DataType::Int32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
        DataType::UInt32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
        DataType::Float32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
        DataType::Int64 => out.extend_from_slice(&(v as i64).to_le_bytes()),
        DataType::UInt64 => out.extend_from_slice(&(v as u64).to_le_bytes()),
        DataType::Complex64 => {
            out.extend_from_slice(&(v as f32).to_le_bytes());
            out.extend_from_slice(&0f32.to_le_bytes());
        }
        DataType::Complex128 => {
            out.extend_from_slice(&v.to_le_bytes());
            out.extend_from_slice(&0f64.to_le_bytes());
        }
        _ => out.extend_from_slice(&v.to_le_bytes()),
    }
}

/// Row-aligned typed rows: `N × C` little-endian values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeRows {
    data_type: DataType,
    channels: usize,
    bytes: Vec<u8>,
}

impl AttributeRows {
    /// Rows from little-endian bytes (`bytes.len()` must be whole rows of `channels`).
    pub fn from_le(
        data_type: DataType,
        channels: usize,
        bytes: Vec<u8>,
    ) -> Result<Self, LayoutError> {
        let size = element_size(data_type)?;
        if channels == 0 || bytes.len() % (size * channels) != 0 {
            return Err(invalid(
                WHAT,
                format!(
                    "{} bytes are not whole rows of {channels} × {data_type}",
                    bytes.len()
                ),
            ));
        }
        Ok(Self {
            data_type,
            channels,
            bytes,
        })
    }

    /// Rows from `f64` values (row-major), converted to `data_type`.
    pub fn from_f64s(
        data_type: DataType,
        channels: usize,
        values: &[f64],
    ) -> Result<Self, LayoutError> {
        let mut bytes = Vec::with_capacity(values.len() * data_type.size().unwrap_or(8));
        for &v in values {
            f64_to_le(data_type, v, &mut bytes);
        }
        Self::from_le(data_type, channels, bytes)
    }

    /// No rows.
    pub fn empty(data_type: DataType, channels: usize) -> Self {
        Self {
            data_type,
            channels: channels.max(1),
            bytes: Vec::new(),
        }
    }

    /// Decodes the rows of a blob that belongs to `rows` rows. With `channels`, the length must
    /// be exactly `rows × channels × size`; without, the channel count is inferred from the
    /// length (as for the reference's multi-channel attributes without `channel_names`).
    pub fn decode(
        bytes: &[u8],
        data_type: DataType,
        rows: u64,
        channels: Option<usize>,
    ) -> Result<Self, LayoutError> {
        let size = element_size(data_type)? as u64;
        let len = bytes.len() as u64;
        let channels = match channels {
            Some(c) => {
                let want = (rows as u128)
                    .checked_mul(c as u128)
                    .and_then(|v| v.checked_mul(size as u128));
                if want != Some(len as u128) || c == 0 {
                    return Err(invalid(
                        WHAT,
                        format!("{len} bytes, expected {rows} rows × {c} channels × {size} bytes"),
                    ));
                }
                c
            }
            None if rows == 0 => {
                if len != 0 {
                    return Err(invalid(WHAT, format!("{len} bytes for 0 rows")));
                }
                1
            }
            None => {
                let per_row = rows.saturating_mul(size);
                if len == 0 || len % per_row != 0 {
                    return Err(invalid(
                        WHAT,
                        format!("{len} bytes are not whole rows of {rows} × {data_type}"),
                    ));
                }
                (len / per_row) as usize
            }
        };
        Ok(Self {
            data_type,
            channels,
            bytes: bytes.to_vec(),
        })
    }

    /// The element data type.
    pub fn data_type(&self) -> DataType {
        self.data_type
    }

    /// Values per row.
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// The number of rows.
    pub fn num_rows(&self) -> usize {
        let row = self.data_type.size().unwrap_or(1) * self.channels;
        self.bytes.len() / row.max(1)
    }

    /// The little-endian bytes.
    pub fn as_le_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The encoding (the little-endian bytes).
    pub fn encode(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// The little-endian bytes of row `r`.
    pub fn row_bytes(&self, r: usize) -> Option<&[u8]> {
        let w = self.data_type.size().unwrap_or(1) * self.channels;
        self.bytes.get(r * w..(r + 1) * w)
    }

    /// Element `(row, channel)` as `f64`.
    pub fn get_f64(&self, row: usize, channel: usize) -> Option<f64> {
        let s = self.data_type.size()?;
        let b = self.row_bytes(row)?.get(channel * s..(channel + 1) * s)?;
        Some(le_to_f64(self.data_type, b))
    }

    /// Row `r` as JSON: a scalar for one channel, a list otherwise (floats that are not
    /// finite as `"NaN"`, `"Infinity"`, `"-Infinity"`).
    pub fn row_json(&self, r: usize) -> Option<Value> {
        let s = self.data_type.size()?;
        let row = self.row_bytes(r)?;
        let vals: Vec<Value> = row
            .chunks_exact(s)
            .map(|b| element_to_json(self.data_type, &le_to_ne(self.data_type, b)))
            .collect();
        Some(if self.channels == 1 {
            vals.into_iter().next().unwrap_or(Value::Null)
        } else {
            Value::Array(vals)
        })
    }

    /// The rows `rows` (in that order) as new rows; out-of-range rows are an error.
    pub fn gather(&self, rows: impl IntoIterator<Item = u64>) -> Result<Self, LayoutError> {
        let mut bytes = Vec::new();
        let n = self.num_rows();
        for r in rows {
            let b = usize::try_from(r)
                .ok()
                .and_then(|r| self.row_bytes(r))
                .ok_or_else(|| invalid(WHAT, format!("row {r} is outside the {n} rows")))?;
            bytes.extend_from_slice(b);
        }
        Ok(Self {
            data_type: self.data_type,
            channels: self.channels,
            bytes,
        })
    }

    /// Appends the rows of `other` (same type and channels).
    pub fn extend(&mut self, other: &AttributeRows) -> Result<(), LayoutError> {
        if other.data_type != self.data_type || other.channels != self.channels {
            return Err(invalid(WHAT, "appending rows of another type or width"));
        }
        self.bytes.extend_from_slice(&other.bytes);
        Ok(())
    }
}

/// A dense `(B,)` or `(B, C, …)` array (object and group attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenseArray {
    /// The shape; `shape[0]` is the number of objects or groups.
    pub shape: Vec<u64>,
    /// The rows (`C` = product of `shape[1..]`).
    pub rows: AttributeRows,
}

impl DenseArray {
    /// Decodes a dense array of `shape` (length must be exactly the product × element size).
    pub fn decode(bytes: &[u8], data_type: DataType, shape: &[u64]) -> Result<Self, LayoutError> {
        let Some((&n, rest)) = shape.split_first() else {
            return Err(invalid(
                WHAT,
                "a dense attribute needs a shape of at least one dimension",
            ));
        };
        let channels = rest
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .unwrap_or(u64::MAX);
        let channels = usize::try_from(channels)
            .map_err(|_| invalid(WHAT, format!("shape {shape:?} is too large")))?;
        if channels == 0 {
            if !bytes.is_empty() {
                return Err(invalid(
                    WHAT,
                    format!("{} bytes for shape {shape:?}", bytes.len()),
                ));
            }
            return Ok(Self {
                shape: shape.to_vec(),
                rows: AttributeRows::empty(data_type, 1),
            });
        }
        let rows = AttributeRows::decode(bytes, data_type, n, Some(channels))?;
        Ok(Self {
            shape: shape.to_vec(),
            rows,
        })
    }

    /// The encoding.
    pub fn encode(&self) -> Vec<u8> {
        self.rows.encode()
    }
}

/// Decodes a `present_mask` of `n` rows (`uint8`, 0 or 1).
pub fn decode_present_mask(bytes: &[u8], n: u64) -> Result<Vec<bool>, LayoutError> {
    if bytes.len() as u64 != n {
        return Err(invalid(
            "present_mask",
            format!("{} bytes for {n} rows", bytes.len()),
        ));
    }
    bytes
        .iter()
        .enumerate()
        .map(|(i, &b)| match b {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(invalid(
                "present_mask",
                format!("row {i} has value {v} (expected 0 or 1)"),
            )),
        })
        .collect()
}

/// Encodes a `present_mask`.
pub fn encode_present_mask(mask: &[bool]) -> Vec<u8> {
    mask.iter().map(|&b| u8::from(b)).collect()
}

/// A dictionary (categorical) encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct Dictionary {
    /// The categories; code `i` means `categories[i]`.
    pub categories: Vec<Value>,
    /// The code of a missing value (`_FillValue`, -1 when written by the reference), if any.
    pub missing_code: Option<i64>,
    /// Whether the categories are ordered.
    pub ordered: bool,
}

impl Dictionary {
    /// Encodes strings (`None` = missing) as codes: categories sorted, code type the smallest
    /// unsigned type, or the smallest signed type with `-1` for missing values.
    pub fn encode(values: &[Option<&str>]) -> Result<(Self, AttributeRows), LayoutError> {
        let mut cats: Vec<&str> = values.iter().flatten().copied().collect();
        cats.sort_unstable();
        cats.dedup();
        let missing = values.iter().any(Option::is_none);
        let n = cats.len();
        let data_type = if missing {
            if n <= 128 {
                DataType::Int8
            } else if n <= 32768 {
                DataType::Int16
            } else {
                DataType::Int32
            }
        } else if n <= 256 {
            DataType::UInt8
        } else if n <= 65536 {
            DataType::UInt16
        } else {
            DataType::UInt32
        };
        let mut codes = Vec::with_capacity(values.len());
        for v in values {
            let code = match v {
                None => -1.0,
                Some(s) => cats.binary_search(s).map_or(-1.0, |i| i as f64),
            };
            codes.push(code);
        }
        let rows = AttributeRows::from_f64s(data_type, 1, &codes)?;
        Ok((
            Self {
                categories: cats
                    .into_iter()
                    .map(|s| Value::from(s.to_owned()))
                    .collect(),
                missing_code: missing.then_some(-1),
                ordered: false,
            },
            rows,
        ))
    }

    /// Reads the dictionary from an array's attributes (`"encoding": "dictionary"`), or
    /// `None` if the attribute is not dictionary-encoded.
    pub fn from_attributes(attributes: &Map<String, Value>) -> Result<Option<Self>, LayoutError> {
        if attributes.get("encoding").and_then(Value::as_str) != Some("dictionary") {
            return Ok(None);
        }
        let categories = attributes
            .get("categories")
            .and_then(Value::as_array)
            .ok_or_else(|| invalid(WHAT, "dictionary encoding without a `categories` list"))?
            .clone();
        let missing_code = match attributes.get("_FillValue") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_i64()
                    .ok_or_else(|| invalid(WHAT, format!("_FillValue {v} is not an integer")))?,
            ),
        };
        let ordered = attributes
            .get("ordered")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        Ok(Some(Self {
            categories,
            missing_code,
            ordered,
        }))
    }

    /// The attribute keys describing this dictionary.
    pub fn to_attributes(&self, attributes: &mut Map<String, Value>) {
        attributes.insert("encoding".into(), Value::from("dictionary"));
        attributes.insert("categories".into(), Value::Array(self.categories.clone()));
        attributes.insert("ordered".into(), Value::Bool(self.ordered));
        if let Some(m) = self.missing_code {
            attributes.insert("_FillValue".into(), Value::from(m));
        }
    }

    /// Decodes codes into category values (`None` for the missing code). A code that is
    /// neither a category nor the missing code is an error.
    pub fn decode_values(&self, codes: &AttributeRows) -> Result<Vec<Option<Value>>, LayoutError> {
        if codes.channels() != 1 || codes.data_type().is_float() {
            return Err(invalid(
                WHAT,
                "dictionary codes must be one integer channel",
            ));
        }
        (0..codes.num_rows())
            .map(|r| {
                let code = codes.get_f64(r, 0).unwrap_or(-1.0) as i64;
                if Some(code) == self.missing_code {
                    return Ok(None);
                }
                usize::try_from(code)
                    .ok()
                    .and_then(|i| self.categories.get(i))
                    .cloned()
                    .map(Some)
                    .ok_or_else(|| {
                        invalid(
                            WHAT,
                            format!(
                                "row {r}: code {code} is not one of {} categories",
                                self.categories.len()
                            ),
                        )
                    })
            })
            .collect()
    }

    /// Decodes codes into strings (categories that are not strings are shown as JSON).
    pub fn decode(&self, codes: &AttributeRows) -> Result<Vec<Option<String>>, LayoutError> {
        Ok(self
            .decode_values(codes)?
            .into_iter()
            .map(|v| {
                v.map(|v| match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_channels() {
        let r =
            AttributeRows::from_f64s(DataType::UInt8, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert_eq!(r.num_rows(), 2);
        let d = AttributeRows::decode(&r.encode(), DataType::UInt8, 2, None).unwrap();
        assert_eq!(d.channels(), 3);
        assert_eq!(d.row_json(1), Some(serde_json::json!([4, 5, 6])));
        assert!(AttributeRows::decode(&r.encode(), DataType::UInt8, 4, None).is_err());
        assert!(AttributeRows::decode(&r.encode(), DataType::UInt8, 2, Some(2)).is_err());
        assert!(
            AttributeRows::decode(&r.encode(), DataType::VariableLengthBytes, 2, None).is_err()
        );
        assert_eq!(r.gather([1, 0]).unwrap().get_f64(0, 2), Some(6.0));
        assert!(r.gather([2]).is_err());
        let f = AttributeRows::from_f64s(DataType::Float32, 1, &[f64::NAN]).unwrap();
        assert_eq!(f.row_json(0), Some(serde_json::json!("NaN")));
    }

    #[test]
    fn dense_and_mask() {
        let d = DenseArray::decode(&[0u8; 24], DataType::Float64, &[3]).unwrap();
        assert_eq!(d.rows.num_rows(), 3);
        assert!(DenseArray::decode(&[0u8; 24], DataType::Float64, &[2, 2]).is_err());
        assert_eq!(
            DenseArray::decode(&[0u8; 32], DataType::Float64, &[2, 2])
                .unwrap()
                .rows
                .channels(),
            2
        );
        assert_eq!(
            decode_present_mask(&[1, 0, 1], 3).unwrap(),
            vec![true, false, true]
        );
        assert!(decode_present_mask(&[1, 2], 2).is_err());
        assert!(decode_present_mask(&[1], 2).is_err());
    }

    #[test]
    fn dictionaries() {
        let (d, codes) = Dictionary::encode(&[Some("soma"), None, Some("axon")]).unwrap();
        assert_eq!(codes.data_type(), DataType::Int8);
        assert_eq!(d.missing_code, Some(-1));
        assert_eq!(d.categories, vec![Value::from("axon"), Value::from("soma")]);
        assert_eq!(
            d.decode(&codes).unwrap(),
            vec![Some("soma".to_owned()), None, Some("axon".to_owned())]
        );
        let mut attrs = Map::new();
        d.to_attributes(&mut attrs);
        assert_eq!(
            Dictionary::from_attributes(&attrs).unwrap(),
            Some(d.clone())
        );
        let bad = AttributeRows::from_f64s(DataType::Int8, 1, &[5.0]).unwrap();
        assert!(d.decode(&bad).is_err());
        let many: Vec<String> = (0..300).map(|i| format!("c{i:03}")).collect();
        let refs: Vec<Option<&str>> = many.iter().map(|s| Some(s.as_str())).collect();
        assert_eq!(
            Dictionary::encode(&refs).unwrap().1.data_type(),
            DataType::UInt16
        );
    }
}
