//! Reading JSON numbers, rows of numbers and lists of ids, and typed scalars into
//! little-endian element bytes.

use serde_json::Value;
use zv_core::data_type::DataType;

use super::bad;
use crate::error::Result;
use crate::layout::attributes::f64_to_le;

/// Parses a JSON number (or `"NaN"`, `"Infinity"`, `"-Infinity"`).
pub fn parse_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

/// A list of numbers (see [`parse_number`]); `what` names it in errors.
pub(super) fn f64_row(v: &Value, what: &str) -> Result<Vec<f64>> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what} is not a list")))?
        .iter()
        .map(|x| parse_number(x).ok_or_else(|| bad(format!("{what}: {x} is not a number"))))
        .collect()
}

/// A list of non-negative integers; `what` names it in errors.
pub(super) fn u64_list(v: &Value, what: &str) -> Result<Vec<u64>> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what} is not a list")))?
        .iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| bad(format!("{what}: {x} is not a non-negative integer")))
        })
        .collect()
}

/// `v` as an integer of type `T`, when it is an integer that fits.
fn int<T: TryFrom<i64> + TryFrom<u64>>(v: &Value) -> Option<T> {
    match (v.as_u64(), v.as_i64()) {
        (Some(u), _) => T::try_from(u).ok(),
        (None, Some(i)) => T::try_from(i).ok(),
        (None, None) => None,
    }
}

/// Appends one JSON scalar as a little-endian element of `dt`.
pub(super) fn push_element(dt: DataType, v: &Value, out: &mut Vec<u8>, what: &str) -> Result<()> {
    let err = || bad(format!("{what}: {v} is not a valid {dt}"));
    match dt {
        DataType::Bool => out.push(match v {
            Value::Bool(b) => u8::from(*b),
            Value::Number(n) if n.as_u64() == Some(0) || n.as_u64() == Some(1) => {
                n.as_u64().unwrap_or(0) as u8
            }
            _ => return Err(err()),
        }),
        DataType::Int8 => out.extend_from_slice(&int::<i8>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::Int16 => out.extend_from_slice(&int::<i16>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::Int32 => out.extend_from_slice(&int::<i32>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::Int64 => out.extend_from_slice(&int::<i64>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::UInt8 => out.extend_from_slice(&int::<u8>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::UInt16 => out.extend_from_slice(&int::<u16>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::UInt32 => out.extend_from_slice(&int::<u32>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::UInt64 => out.extend_from_slice(&int::<u64>(v).ok_or_else(err)?.to_le_bytes()),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            let x = parse_number(v).ok_or_else(err)?;
            f64_to_le(dt, x, out);
        }
        DataType::Complex64 | DataType::Complex128 => {
            let pair = v.as_array().filter(|p| p.len() == 2).ok_or_else(err)?;
            let comp = if dt == DataType::Complex64 {
                DataType::Float32
            } else {
                DataType::Float64
            };
            for c in pair {
                f64_to_le(comp, parse_number(c).ok_or_else(err)?, out);
            }
        }
        _ => return Err(err()),
    }
    Ok(())
}
