//! numpy data type strings (`<i4`, `>f8`, `|b1`, `<c16`, `|S12`, `int32`, `float64`, …) as
//! written by zarr 0.4 (`__zmeta__`) and bcolz (`meta/storage`), mapped to Zarr v3 data types
//! with their byte order; fill values in the stored byte order.
//!
//! ```
//! use zv_legacy::dtype::{ByteOrder, ElementType, NumpyDtype};
//! let dt = NumpyDtype::parse(">f8").unwrap();
//! assert_eq!(dt.element, ElementType::Zarr(zv_core::data_type::DataType::Float64));
//! assert_eq!(dt.order, ByteOrder::Big);
//! assert_eq!(NumpyDtype::parse("|S12").unwrap().size(), 12);
//! assert!(NumpyDtype::parse("O").is_err()); // object arrays hold pickles: refused
//! ```

use base64::Engine as _;
use serde_json::{json, Value};
use zv_core::data_type::{element_to_json, DataType, FillValue};

/// The byte order of stored elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Little-endian (`<`).
    Little,
    /// Big-endian (`>`).
    Big,
    /// Single bytes or byte strings: no order (`|`).
    NotApplicable,
}

impl ByteOrder {
    fn native() -> Self {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }

    /// The `endian` of a Zarr v3 `bytes` codec, if it has one.
    pub fn v3_endian(self) -> Option<&'static str> {
        match self {
            ByteOrder::Little => Some("little"),
            ByteOrder::Big => Some("big"),
            ByteOrder::NotApplicable => None,
        }
    }
}

/// What one element is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementType {
    /// A Zarr v3 core data type.
    Zarr(DataType),
    /// A fixed-size byte string of this many bytes (numpy `S<n>`), zero-padded.
    FixedBytes(usize),
}

/// A parsed numpy data type string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumpyDtype {
    /// The element type.
    pub element: ElementType,
    /// The stored byte order.
    pub order: ByteOrder,
}

/// The largest fixed-size byte string accepted (`S<n>`).
const MAX_BYTES_LEN: usize = 1 << 20;

impl NumpyDtype {
    /// Parses a numpy type string or name. Object (`O`), unicode (`U`), void (`V`),
    /// date-time and structured types are refused with a message saying why.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        if let Some(dt) = DataType::from_name(t).filter(|d| !d.is_variable()) {
            return Ok(Self::native(dt));
        }
        let (order, rest) = match t.chars().next() {
            Some('<') => (Some(ByteOrder::Little), &t[1..]),
            Some('>') => (Some(ByteOrder::Big), &t[1..]),
            Some('=') => (Some(ByteOrder::native()), &t[1..]),
            Some('|') => (None, &t[1..]),
            _ => (None, t),
        };
        let mut chars = rest.chars();
        let kind = chars
            .next()
            .ok_or_else(|| format!("empty data type `{text}`"))?;
        let size_text = chars.as_str();
        if matches!(kind, 'O') || t == "object" {
            return Err(format!(
                "object data type `{text}` (its elements are Python pickles, which zv does not run)"
            ));
        }
        let size: usize = if size_text.is_empty() && kind == '?' {
            1
        } else {
            size_text
                .parse()
                .map_err(|_| format!("unknown data type `{text}`"))?
        };
        let dt = match (kind, size) {
            ('b', 1) | ('?', 1) => DataType::Bool,
            ('i', 1) => DataType::Int8,
            ('i', 2) => DataType::Int16,
            ('i', 4) => DataType::Int32,
            ('i', 8) => DataType::Int64,
            ('u', 1) => DataType::UInt8,
            ('u', 2) => DataType::UInt16,
            ('u', 4) => DataType::UInt32,
            ('u', 8) => DataType::UInt64,
            ('f', 2) => DataType::Float16,
            ('f', 4) => DataType::Float32,
            ('f', 8) => DataType::Float64,
            ('c', 8) => DataType::Complex64,
            ('c', 16) => DataType::Complex128,
            ('S' | 'a', n) => {
                if n == 0 || n > MAX_BYTES_LEN {
                    return Err(format!(
                        "byte strings of {n} bytes (`{text}`; 1..={MAX_BYTES_LEN} supported)"
                    ));
                }
                return Ok(Self {
                    element: ElementType::FixedBytes(n),
                    order: ByteOrder::NotApplicable,
                });
            }
            ('U', _) => return Err(format!("unicode strings (`{text}`)")),
            ('V', _) => return Err(format!("void/structured data type `{text}`")),
            ('M' | 'm', _) => return Err(format!("date-time data type `{text}`")),
            _ => return Err(format!("unknown data type `{text}`")),
        };
        let order = if dt.size() == Some(1) {
            ByteOrder::NotApplicable
        } else {
            order.unwrap_or_else(ByteOrder::native)
        };
        Ok(Self {
            element: ElementType::Zarr(dt),
            order,
        })
    }

    fn native(dt: DataType) -> Self {
        Self {
            element: ElementType::Zarr(dt),
            order: if dt.size() == Some(1) {
                ByteOrder::NotApplicable
            } else {
                ByteOrder::native()
            },
        }
    }

    /// The element size in bytes.
    pub fn size(&self) -> usize {
        match self.element {
            ElementType::Zarr(dt) => dt.size().unwrap_or(1),
            ElementType::FixedBytes(n) => n,
        }
    }

    /// Whether stored elements must be byte-swapped to native order.
    pub fn needs_swap(&self) -> bool {
        self.order != ByteOrder::NotApplicable && self.order != ByteOrder::native()
    }

    /// Converts stored elements to native byte order (and back: the swap is its own inverse).
    pub fn swap_to_native(&self, bytes: &mut [u8]) {
        if let (true, ElementType::Zarr(dt)) = (self.needs_swap(), self.element) {
            if let Some(w) = dt.component_size().filter(|&w| w > 1) {
                zv_codecs::bytes::swap_in_place(bytes, w);
            }
        }
    }

    /// One element of fill value, in the stored byte order, from its JSON form in the legacy
    /// metadata (`null` is zero; numbers, booleans, `"NaN"`, `[re, im]`, strings for bytes).
    pub fn fill_from_json(&self, value: &Value) -> Result<Vec<u8>, String> {
        let mut bytes = match self.element {
            ElementType::Zarr(dt) => {
                let value = match (value, dt) {
                    (Value::Null, _) => return Ok(vec![0; self.size()]),
                    (Value::Number(_) | Value::String(_), DataType::Complex64)
                    | (Value::Number(_) | Value::String(_), DataType::Complex128) => {
                        json!([value, 0.0])
                    }
                    _ => value.clone(),
                };
                FillValue::from_json(dt, &value)
                    .map_err(|e| e.to_string())?
                    .as_bytes()
                    .to_vec()
            }
            ElementType::FixedBytes(n) => {
                let raw: Vec<u8> = match value {
                    Value::Null => Vec::new(),
                    Value::Number(x) if x.as_f64() == Some(0.0) => Vec::new(),
                    Value::String(s) => s.as_bytes().to_vec(),
                    other => return Err(format!("fill value {other} for byte strings")),
                };
                if raw.len() > n {
                    return Err(format!("fill value of {} bytes for S{n}", raw.len()));
                }
                let mut out = raw;
                out.resize(n, 0);
                out
            }
        };
        self.swap_to_native(&mut bytes);
        Ok(bytes)
    }

    /// The Zarr v3 `data_type` (fixed-size byte strings as zarr-python's
    /// `null_terminated_bytes`, the type numpy `S<n>` maps to).
    pub fn v3_data_type(&self) -> Value {
        match self.element {
            ElementType::Zarr(dt) => json!(dt.name()),
            ElementType::FixedBytes(n) => {
                json!({"name": "null_terminated_bytes", "configuration": {"length_bytes": n}})
            }
        }
    }

    /// The JSON form of one element given in **native** byte order: the Zarr v3 fill value
    /// form for core types, base64 for byte strings.
    pub fn element_json(&self, native: &[u8]) -> Value {
        match self.element {
            ElementType::Zarr(dt) => element_to_json(dt, native),
            ElementType::FixedBytes(_) => {
                json!(base64::engine::general_purpose::STANDARD.encode(native))
            }
        }
    }
}

impl NumpyDtype {
    /// The numpy type string (`<i4`, `>f8`, `|b1`, `|S12`), byte order always explicit.
    pub fn to_numpy(&self) -> String {
        let order = match self.order {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        };
        let kind = match self.element {
            ElementType::FixedBytes(n) => return format!("|S{n}"),
            ElementType::Zarr(DataType::Bool) => 'b',
            ElementType::Zarr(
                DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64,
            ) => 'i',
            ElementType::Zarr(
                DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64,
            ) => 'u',
            ElementType::Zarr(DataType::Complex64 | DataType::Complex128) => 'c',
            ElementType::Zarr(_) => 'f',
        };
        format!("{order}{kind}{}", self.size())
    }
}

impl std::fmt::Display for NumpyDtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_numpy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_strings_and_names() {
        let cases = [
            ("<i4", DataType::Int32, ByteOrder::Little),
            (">f8", DataType::Float64, ByteOrder::Big),
            ("|b1", DataType::Bool, ByteOrder::NotApplicable),
            ("bool", DataType::Bool, ByteOrder::NotApplicable),
            ("|u1", DataType::UInt8, ByteOrder::NotApplicable),
            ("<c16", DataType::Complex128, ByteOrder::Little),
            (">c8", DataType::Complex64, ByteOrder::Big),
            ("<f2", DataType::Float16, ByteOrder::Little),
            ("int64", DataType::Int64, ByteOrder::native()),
        ];
        for (text, dt, order) in cases {
            let parsed = NumpyDtype::parse(text).unwrap();
            assert_eq!(
                (parsed.element, parsed.order),
                (ElementType::Zarr(dt), order)
            );
        }
        assert_eq!(
            NumpyDtype::parse("|S12").unwrap().element,
            ElementType::FixedBytes(12)
        );
        for bad in [
            "O",
            "|O",
            "object",
            "<U5",
            "|V8",
            "<M8[ns]",
            "<i3",
            "",
            "S0",
            "S99999999",
        ] {
            assert!(NumpyDtype::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fill_values_in_stored_order() {
        let be = NumpyDtype::parse(">i4").unwrap();
        assert_eq!(be.fill_from_json(&json!(1)).unwrap(), vec![0, 0, 0, 1]);
        assert_eq!(be.fill_from_json(&Value::Null).unwrap(), vec![0; 4]);
        let c = NumpyDtype::parse("<c8").unwrap();
        assert_eq!(
            c.fill_from_json(&json!(1.0)).unwrap()[..4],
            1f32.to_le_bytes()
        );
        let s = NumpyDtype::parse("|S3").unwrap();
        assert_eq!(s.fill_from_json(&json!("ab")).unwrap(), b"ab\0");
        assert!(s.fill_from_json(&json!("abcd")).is_err());
        let b = NumpyDtype::parse("|b1").unwrap();
        assert_eq!(b.fill_from_json(&json!(true)).unwrap(), vec![1]);
        let f = NumpyDtype::parse(">f4").unwrap();
        assert_eq!(
            f.fill_from_json(&json!("NaN")).unwrap(),
            f32::NAN.to_be_bytes()
        );
    }
}
