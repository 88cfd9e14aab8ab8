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

mod dense;
mod dictionary;

use half::f16;
use serde_json::Value;
use zv_core::data_type::{element_to_json, DataType};

use super::{invalid, LayoutError};

pub use dense::{decode_present_mask, encode_present_mask, DenseArray};
pub use dictionary::Dictionary;

/// What errors of attribute payloads name.
const WHAT: &str = "attribute";

/// Rows `rows` (in that order) of `bytes`, rows of `width` bytes back to back; `None` if a
/// row is outside them (or the width is 0).
pub(crate) fn gather_rows(bytes: &[u8], width: usize, rows: &[u64]) -> Option<Vec<u8>> {
    if width == 0 {
        return None;
    }
    let mut out = Vec::with_capacity(rows.len().checked_mul(width)?);
    for &r in rows {
        let a = usize::try_from(r).ok()?.checked_mul(width)?;
        out.extend_from_slice(bytes.get(a..a.checked_add(width)?)?);
    }
    Some(out)
}

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

    /// The rows as little-endian bytes, taken (no copy).
    pub fn into_le_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// The encoding (the little-endian bytes).
    pub fn encode(&self) -> Vec<u8> {
        self.bytes.clone()
    }

    /// Rows `rows` of these (in that order, repeats allowed), `None` if one is outside them.
    pub fn select(&self, rows: &[u64]) -> Option<Self> {
        let w = self.data_type.size().unwrap_or(1) * self.channels;
        Some(Self {
            data_type: self.data_type,
            channels: self.channels,
            bytes: gather_rows(&self.bytes, w, rows)?,
        })
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
}
