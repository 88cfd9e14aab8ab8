//! JSON helpers of the dump: numbers (non-finite floats as strings), rows, fragments,
//! attribute rows, dense arrays nested like numpy's `tolist()`, and the total order of rows
//! that the canonical view sorts by.

use std::cmp::Ordering;

use serde_json::{json, Value};

use crate::layout::attributes::{AttributeRows, DenseArray};
use crate::layout::fragment_index::{FragmentIndex, FragmentRows};
use crate::metadata::{ChunkKey, JsonObject};

/// A float as JSON (`"NaN"`, `"Infinity"`, `"-Infinity"` for non-finite values).
pub fn num(v: f64) -> Value {
    if v.is_nan() {
        Value::from("NaN")
    } else if v == f64::INFINITY {
        Value::from("Infinity")
    } else if v == f64::NEG_INFINITY {
        Value::from("-Infinity")
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// A row of floats.
pub(super) fn row_json(row: &[f64]) -> Value {
    Value::Array(row.iter().map(|&v| num(v)).collect())
}

/// Rows of floats.
pub(super) fn rows_json<R: AsRef<[f64]>>(rows: impl IntoIterator<Item = R>) -> Value {
    Value::Array(rows.into_iter().map(|r| row_json(r.as_ref())).collect())
}

/// Chunk keys as strings.
pub(super) fn keys_json<'a>(keys: impl IntoIterator<Item = &'a ChunkKey>) -> Value {
    json!(keys
        .into_iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>())
}

/// A fragment index: `[start, count]` per range, `{"indices": […]}` per explicit fragment.
pub(super) fn fragments_json(f: &FragmentIndex) -> Value {
    Value::Array(
        f.iter()
            .map(|r| match r {
                FragmentRows::Range(r) => json!([r.start, r.end - r.start]),
                FragmentRows::Explicit(rows) => json!({"indices": rows}),
            })
            .collect(),
    )
}

/// The rows `which` of attribute rows.
pub(super) fn attr_rows_json(rows: &AttributeRows, which: impl Iterator<Item = u64>) -> Value {
    Value::Array(which.filter_map(|r| rows.row_json(r as usize)).collect())
}

/// Every row of attribute rows.
pub(super) fn all_rows_json(rows: &AttributeRows) -> Value {
    attr_rows_json(rows, 0..rows.num_rows() as u64)
}

/// A dense array as numpy's `tolist()` gives it.
pub(super) fn dense_values(a: &DenseArray) -> Value {
    let n = a.rows.num_rows();
    let rows: Vec<Value> = (0..n).filter_map(|r| a.rows.row_json(r)).collect();
    if a.shape.len() > 1 {
        // numpy tolist(): nested by the trailing dimensions
        let tail = &a.shape[1..];
        Value::Array(rows.into_iter().map(|r| nest(r, tail)).collect())
    } else {
        Value::Array(rows)
    }
}

fn nest(row: Value, dims: &[u64]) -> Value {
    if dims.len() <= 1 {
        return match row {
            Value::Array(_) => row,
            scalar => Value::Array(vec![scalar]),
        };
    }
    let Value::Array(items) = row else { return row };
    let inner: u64 = dims[1..].iter().product();
    let chunks: Vec<Value> = items
        .chunks(inner.max(1) as usize)
        .map(|c| nest(Value::Array(c.to_vec()), &dims[1..]))
        .collect();
    Value::Array(chunks)
}

/// The object attribute `name` of a group's attributes (empty if absent).
pub(super) fn object_attribute(attributes: &JsonObject, name: &str) -> JsonObject {
    attributes
        .get(name)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// The total order of rows of floats: element by element, then by length.
pub(super) fn cmp_rows(a: &[f64], b: &[f64]) -> Ordering {
    cmp_values(a.iter().copied(), b.iter().copied())
}

/// [`cmp_rows`] of two rows given as their values (a row made of several, say, without
/// concatenating them).
pub(super) fn cmp_values(
    mut a: impl Iterator<Item = f64>,
    mut b: impl Iterator<Item = f64>,
) -> Ordering {
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) => match x.total_cmp(&y) {
                Ordering::Equal => continue,
                o => return o,
            },
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
        }
    }
}
