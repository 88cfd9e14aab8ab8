//! Zarr v3 data types and their fill values.
//!
//! In memory, elements of fixed-size types are stored in **native** byte order, C order. A
//! `bool` element is one byte (0 or 1); complex numbers are two floats (real, imaginary).
//! `variable_length_bytes` elements are byte strings of any length.
//!
//! Fill values follow the Zarr v3 JSON forms: numbers, `"NaN"`, `"Infinity"`, `"-Infinity"`,
//! hex bit patterns `"0x7fc00000"` for floats, booleans, `[re, im]` pairs for complex types,
//! and base64 strings for `variable_length_bytes`.
//!
//! ```
//! use zv_core::data_type::{DataType, FillValue};
//! let dt = DataType::from_name("float32").unwrap();
//! let nan = FillValue::from_json(dt, &serde_json::json!("NaN"))?;
//! assert!(f32::from_ne_bytes(nan.as_bytes().try_into().unwrap()).is_nan());
//! let payload = FillValue::from_json(dt, &serde_json::json!("0x7fc00001"))?;
//! assert_eq!(payload.to_json(dt), serde_json::json!("0x7fc00001"));
//! # Ok::<(), zv_core::data_type::FillValueError>(())
//! ```

use std::fmt;

use base64::Engine as _;
use half::f16;
use serde_json::Value;

/// A Zarr v3 data type supported by zv.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DataType {
    /// `bool`: one byte, 0 or 1.
    Bool,
    /// `int8`.
    Int8,
    /// `int16`.
    Int16,
    /// `int32`.
    Int32,
    /// `int64`.
    Int64,
    /// `uint8`.
    UInt8,
    /// `uint16`.
    UInt16,
    /// `uint32`.
    UInt32,
    /// `uint64`.
    UInt64,
    /// `float16` (IEEE 754 half precision).
    Float16,
    /// `float32`.
    Float32,
    /// `float64`.
    Float64,
    /// `complex64`: two `float32`.
    Complex64,
    /// `complex128`: two `float64`.
    Complex128,
    /// `variable_length_bytes`: byte strings (zarr-python's `VariableLengthBytes`).
    VariableLengthBytes,
}

/// Every data type, in a stable order.
pub const ALL_DATA_TYPES: [DataType; 15] = [
    DataType::Bool,
    DataType::Int8,
    DataType::Int16,
    DataType::Int32,
    DataType::Int64,
    DataType::UInt8,
    DataType::UInt16,
    DataType::UInt32,
    DataType::UInt64,
    DataType::Float16,
    DataType::Float32,
    DataType::Float64,
    DataType::Complex64,
    DataType::Complex128,
    DataType::VariableLengthBytes,
];

impl DataType {
    /// The name used in `zarr.json`.
    pub fn name(self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::Int8 => "int8",
            DataType::Int16 => "int16",
            DataType::Int32 => "int32",
            DataType::Int64 => "int64",
            DataType::UInt8 => "uint8",
            DataType::UInt16 => "uint16",
            DataType::UInt32 => "uint32",
            DataType::UInt64 => "uint64",
            DataType::Float16 => "float16",
            DataType::Float32 => "float32",
            DataType::Float64 => "float64",
            DataType::Complex64 => "complex64",
            DataType::Complex128 => "complex128",
            DataType::VariableLengthBytes => "variable_length_bytes",
        }
    }

    /// Parses a `zarr.json` data type name. `"bytes"` is accepted as an alias of
    /// `variable_length_bytes` (zarr-python 3.0).
    pub fn from_name(name: &str) -> Option<Self> {
        if name == "bytes" {
            return Some(DataType::VariableLengthBytes);
        }
        ALL_DATA_TYPES.iter().copied().find(|d| d.name() == name)
    }

    /// The element size in bytes, or `None` for variable-length types.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            DataType::Bool | DataType::Int8 | DataType::UInt8 => 1,
            DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
            DataType::Int32 | DataType::UInt32 | DataType::Float32 => 4,
            DataType::Int64 | DataType::UInt64 | DataType::Float64 | DataType::Complex64 => 8,
            DataType::Complex128 => 16,
            DataType::VariableLengthBytes => return None,
        })
    }

    /// The size of one scalar component (the float of a complex type, else the element);
    /// byte swapping works per component. `None` for variable-length types.
    pub fn component_size(self) -> Option<usize> {
        match self {
            DataType::Complex64 => Some(4),
            DataType::Complex128 => Some(8),
            other => other.size(),
        }
    }

    /// Whether elements have variable length.
    pub fn is_variable(self) -> bool {
        self.size().is_none()
    }

    /// Whether this is a floating-point (or complex) type.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DataType::Float16
                | DataType::Float32
                | DataType::Float64
                | DataType::Complex64
                | DataType::Complex128
        )
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for DataType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for DataType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        let name = match &v {
            Value::String(s) => s.as_str(),
            Value::Object(m) => match m.get("name") {
                Some(Value::String(s)) => s.as_str(),
                _ => return Err(D::Error::custom("data_type object without a string `name`")),
            },
            _ => return Err(D::Error::custom("data_type must be a string or an object")),
        };
        DataType::from_name(name)
            .ok_or_else(|| D::Error::custom(format!("unsupported data type `{name}`")))
    }
}

/// Why a fill value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fill_value {value} for data type {data_type}: {reason}")]
pub struct FillValueError {
    /// The data type.
    pub data_type: DataType,
    /// The JSON value (as text).
    pub value: String,
    /// Why.
    pub reason: &'static str,
}

/// A fill value: the element bytes (native byte order), or the byte string of a
/// variable-length type.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FillValue(Vec<u8>);

impl FillValue {
    /// A fill value from raw element bytes (native order).
    pub fn new(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The all-zero fill value of `data_type` (empty for variable-length types).
    pub fn zero(data_type: DataType) -> Self {
        Self(vec![0; data_type.size().unwrap_or(0)])
    }

    /// The element bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Parses the JSON form of a fill value for `data_type`.
    pub fn from_json(data_type: DataType, value: &Value) -> Result<Self, FillValueError> {
        let err = |reason| FillValueError {
            data_type,
            value: value.to_string(),
            reason,
        };
        let bytes = match data_type {
            DataType::Bool => match value {
                Value::Bool(b) => vec![u8::from(*b)],
                Value::Number(n) if n.as_u64() == Some(0) || n.as_u64() == Some(1) => {
                    vec![n.as_u64().map_or(0, |v| v as u8)]
                }
                _ => return Err(err("expected true or false")),
            },
            DataType::Int8 => int_fill::<i8>(value).ok_or_else(|| err("out of range"))?,
            DataType::Int16 => int_fill::<i16>(value).ok_or_else(|| err("out of range"))?,
            DataType::Int32 => int_fill::<i32>(value).ok_or_else(|| err("out of range"))?,
            DataType::Int64 => int_fill::<i64>(value).ok_or_else(|| err("out of range"))?,
            DataType::UInt8 => int_fill::<u8>(value).ok_or_else(|| err("out of range"))?,
            DataType::UInt16 => int_fill::<u16>(value).ok_or_else(|| err("out of range"))?,
            DataType::UInt32 => int_fill::<u32>(value).ok_or_else(|| err("out of range"))?,
            DataType::UInt64 => int_fill::<u64>(value).ok_or_else(|| err("out of range"))?,
            DataType::Float16 | DataType::Float32 | DataType::Float64 => {
                float_fill(data_type, value).map_err(err)?
            }
            DataType::Complex64 | DataType::Complex128 => {
                let component = if data_type == DataType::Complex64 {
                    DataType::Float32
                } else {
                    DataType::Float64
                };
                match value {
                    Value::Array(pair) if pair.len() == 2 => {
                        let mut out = float_fill(component, &pair[0]).map_err(err)?;
                        out.extend(float_fill(component, &pair[1]).map_err(err)?);
                        out
                    }
                    _ => return Err(err("expected a [real, imaginary] pair")),
                }
            }
            DataType::VariableLengthBytes => match value {
                Value::String(s) => base64::engine::general_purpose::STANDARD
                    .decode(s.as_bytes())
                    .map_err(|_| err("expected a base64 string"))?,
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_u64().and_then(|v| u8::try_from(v).ok()))
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(|| err("expected a list of bytes"))?,
                _ => return Err(err("expected a base64 string")),
            },
        };
        Ok(Self(bytes))
    }

    /// The canonical JSON form of this fill value for `data_type`. NaNs with the canonical
    /// quiet-NaN bit pattern are written `"NaN"`; other NaNs as hex bit patterns.
    pub fn to_json(&self, data_type: DataType) -> Value {
        element_to_json(data_type, &self.0)
    }
}

fn int_fill<T>(value: &Value) -> Option<Vec<u8>>
where
    T: TryFrom<i64> + TryFrom<u64> + NeBytes,
{
    let Value::Number(n) = value else {
        return None;
    };
    let v: T = if let Some(u) = n.as_u64() {
        T::try_from(u).ok()?
    } else if let Some(i) = n.as_i64() {
        T::try_from(i).ok()?
    } else {
        // A float with an integral value (e.g. `0.0`) is accepted.
        let f = n.as_f64()?;
        if f.fract() != 0.0 || !f.is_finite() || f.abs() > 9.007_199_254_740_992e15 {
            return None;
        }
        T::try_from(f as i64).ok()?
    };
    Some(v.ne_bytes())
}

/// Native-endian byte conversion for the integer fill types.
trait NeBytes {
    fn ne_bytes(self) -> Vec<u8>;
}

macro_rules! ne_bytes {
    ($($t:ty),*) => {$(
        impl NeBytes for $t {
            fn ne_bytes(self) -> Vec<u8> { self.to_ne_bytes().to_vec() }
        }
    )*};
}
ne_bytes!(i8, i16, i32, i64, u8, u16, u32, u64);

fn float_fill(data_type: DataType, value: &Value) -> Result<Vec<u8>, &'static str> {
    let size = data_type.size().unwrap_or(0);
    let f: f64 = match value {
        Value::Number(n) => n.as_f64().ok_or("not a number")?,
        Value::String(s) => match s.as_str() {
            "NaN" => f64::NAN,
            "Infinity" => f64::INFINITY,
            "-Infinity" => f64::NEG_INFINITY,
            hex if hex.starts_with("0x") || hex.starts_with("0X") => {
                let digits = &hex[2..];
                if digits.len() != size * 2 {
                    return Err("hex fill value must have two digits per byte of the type");
                }
                let bits = u64::from_str_radix(digits, 16).map_err(|_| "invalid hex digits")?;
                return Ok(match size {
                    2 => (bits as u16).to_ne_bytes().to_vec(),
                    4 => (bits as u32).to_ne_bytes().to_vec(),
                    _ => bits.to_ne_bytes().to_vec(),
                });
            }
            _ => return Err("expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or hex"),
        },
        _ => return Err("expected a number or string"),
    };
    Ok(match data_type {
        DataType::Float16 => {
            if f.is_nan() {
                f16::NAN.to_ne_bytes().to_vec()
            } else {
                f16::from_f64(f).to_ne_bytes().to_vec()
            }
        }
        DataType::Float32 => {
            if f.is_nan() {
                f32::NAN.to_ne_bytes().to_vec()
            } else {
                (f as f32).to_ne_bytes().to_vec()
            }
        }
        _ => f.to_ne_bytes().to_vec(),
    })
}

fn float_json(bits_hex: String, value: f64, canonical_nan: bool) -> Value {
    if value.is_nan() {
        if canonical_nan {
            Value::from("NaN")
        } else {
            Value::from(bits_hex)
        }
    } else if value == f64::INFINITY {
        Value::from("Infinity")
    } else if value == f64::NEG_INFINITY {
        Value::from("-Infinity")
    } else {
        serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

fn arr<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let n = bytes.len().min(N);
    out[..n].copy_from_slice(&bytes[..n]);
    out
}

/// The JSON value of one element (native-order bytes) of `data_type`, in the fill-value
/// forms of Zarr v3 (floats that are not finite become `"NaN"`, `"Infinity"`, `"-Infinity"`,
/// or a hex bit pattern for non-canonical NaNs; variable-length bytes become base64).
/// Missing bytes read as zero.
pub fn element_to_json(data_type: DataType, bytes: &[u8]) -> Value {
    match data_type {
        DataType::Bool => Value::Bool(bytes.first().copied().unwrap_or(0) != 0),
        DataType::Int8 => Value::from(i8::from_ne_bytes(arr(bytes))),
        DataType::Int16 => Value::from(i16::from_ne_bytes(arr(bytes))),
        DataType::Int32 => Value::from(i32::from_ne_bytes(arr(bytes))),
        DataType::Int64 => Value::from(i64::from_ne_bytes(arr(bytes))),
        DataType::UInt8 => Value::from(u8::from_ne_bytes(arr(bytes))),
        DataType::UInt16 => Value::from(u16::from_ne_bytes(arr(bytes))),
        DataType::UInt32 => Value::from(u32::from_ne_bytes(arr(bytes))),
        DataType::UInt64 => Value::from(u64::from_ne_bytes(arr(bytes))),
        DataType::Float16 => {
            let v = f16::from_ne_bytes(arr(bytes));
            float_json(
                format!("0x{:04x}", v.to_bits()),
                v.to_f64(),
                v.to_bits() == f16::NAN.to_bits(),
            )
        }
        DataType::Float32 => {
            let v = f32::from_ne_bytes(arr(bytes));
            float_json(
                format!("0x{:08x}", v.to_bits()),
                f64::from(v),
                v.to_bits() == f32::NAN.to_bits(),
            )
        }
        DataType::Float64 => {
            let v = f64::from_ne_bytes(arr(bytes));
            float_json(
                format!("0x{:016x}", v.to_bits()),
                v,
                v.to_bits() == f64::NAN.to_bits(),
            )
        }
        DataType::Complex64 => {
            let (re, im) = bytes.split_at(bytes.len().min(4));
            Value::Array(vec![
                element_to_json(DataType::Float32, re),
                element_to_json(DataType::Float32, im),
            ])
        }
        DataType::Complex128 => {
            let (re, im) = bytes.split_at(bytes.len().min(8));
            Value::Array(vec![
                element_to_json(DataType::Float64, re),
                element_to_json(DataType::Float64, im),
            ])
        }
        DataType::VariableLengthBytes => {
            Value::from(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
    }
}

/// A Rust type whose values are elements of a Zarr data type (for typed array access).
pub trait Element: Copy + Send + Sync + 'static {
    /// The data types whose elements have this Rust representation.
    const DATA_TYPES: &'static [DataType];
    /// Appends the native-order bytes of `self` to `out`.
    fn write_ne(self, out: &mut Vec<u8>);
    /// Reads one element from exactly `size_of::<Self>()` native-order bytes.
    fn read_ne(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, [$($dt:ident),*]) => {
        impl Element for $t {
            const DATA_TYPES: &'static [DataType] = &[$(DataType::$dt),*];
            fn write_ne(self, out: &mut Vec<u8>) { out.extend_from_slice(&self.to_ne_bytes()); }
            fn read_ne(bytes: &[u8]) -> Self { <$t>::from_ne_bytes(arr(bytes)) }
        }
    };
}
element!(i8, [Int8]);
element!(i16, [Int16]);
element!(i32, [Int32]);
element!(i64, [Int64]);
element!(u8, [UInt8, Bool]);
element!(u16, [UInt16]);
element!(u32, [UInt32]);
element!(u64, [UInt64]);
element!(f16, [Float16]);
element!(f32, [Float32]);
element!(f64, [Float64]);

impl Element for bool {
    const DATA_TYPES: &'static [DataType] = &[DataType::Bool];
    fn write_ne(self, out: &mut Vec<u8>) {
        out.push(u8::from(self));
    }
    fn read_ne(bytes: &[u8]) -> Self {
        bytes.first().copied().unwrap_or(0) != 0
    }
}

/// A complex element: a `[real, imaginary]` pair of `$t`.
macro_rules! complex_element {
    ($t:ty, $dt:ident) => {
        impl Element for [$t; 2] {
            const DATA_TYPES: &'static [DataType] = &[DataType::$dt];
            fn write_ne(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self[0].to_ne_bytes());
                out.extend_from_slice(&self[1].to_ne_bytes());
            }
            fn read_ne(bytes: &[u8]) -> Self {
                let (a, b) = bytes.split_at(bytes.len().min(std::mem::size_of::<$t>()));
                [<$t>::from_ne_bytes(arr(a)), <$t>::from_ne_bytes(arr(b))]
            }
        }
    };
}
complex_element!(f32, Complex64);
complex_element!(f64, Complex128);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_round_trip() {
        for dt in ALL_DATA_TYPES {
            assert_eq!(DataType::from_name(dt.name()), Some(dt));
        }
        assert_eq!(
            DataType::from_name("bytes"),
            Some(DataType::VariableLengthBytes)
        );
        assert_eq!(DataType::from_name("float8"), None);
    }

    #[test]
    fn fill_values_in_every_json_form() {
        let f = |dt, v: Value| FillValue::from_json(dt, &v);
        assert_eq!(f(DataType::Bool, json!(true)).unwrap().as_bytes(), &[1]);
        assert!(f(DataType::Bool, json!("x")).is_err());
        assert_eq!(
            f(DataType::Int16, json!(-2)).unwrap().as_bytes(),
            &(-2i16).to_ne_bytes()
        );
        assert!(f(DataType::Int8, json!(200)).is_err());
        assert!(f(DataType::UInt8, json!(-1)).is_err());
        assert_eq!(
            f(DataType::UInt64, json!(u64::MAX)).unwrap().as_bytes(),
            &u64::MAX.to_ne_bytes()
        );
        let nan = f(DataType::Float64, json!("NaN")).unwrap();
        assert!(f64::from_ne_bytes(nan.as_bytes().try_into().unwrap()).is_nan());
        assert_eq!(nan.to_json(DataType::Float64), json!("NaN"));
        let inf = f(DataType::Float32, json!("-Infinity")).unwrap();
        assert_eq!(inf.to_json(DataType::Float32), json!("-Infinity"));
        let hex = f(DataType::Float32, json!("0x3f800000")).unwrap();
        assert_eq!(hex.to_json(DataType::Float32), json!(1.0));
        assert!(f(DataType::Float32, json!("0x3f80")).is_err());
        let h = f(DataType::Float16, json!(1.5)).unwrap();
        assert_eq!(h.to_json(DataType::Float16), json!(1.5));
        let c = f(DataType::Complex64, json!([1.0, "NaN"])).unwrap();
        assert_eq!(c.to_json(DataType::Complex64), json!([1.0, "NaN"]));
        assert!(f(DataType::Complex64, json!(1.0)).is_err());
        let v = f(DataType::VariableLengthBytes, json!("")).unwrap();
        assert!(v.as_bytes().is_empty());
        let v = f(DataType::VariableLengthBytes, json!("AQI=")).unwrap();
        assert_eq!(v.as_bytes(), &[1, 2]);
        assert_eq!(v.to_json(DataType::VariableLengthBytes), json!("AQI="));
        let z = f(DataType::Int32, json!(0.0)).unwrap();
        assert_eq!(z.as_bytes(), &[0, 0, 0, 0]);
    }

    #[test]
    fn elements() {
        let mut out = Vec::new();
        1.5f32.write_ne(&mut out);
        assert_eq!(f32::read_ne(&out), 1.5);
        assert_eq!(
            element_to_json(DataType::Float32, &f32::INFINITY.to_ne_bytes()),
            json!("Infinity")
        );
    }
}
