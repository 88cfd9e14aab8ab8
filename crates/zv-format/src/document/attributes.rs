//! Attributes of a document: their values ([`Attribute`], [`AttributeValues`]), parsing the
//! `*_attributes` objects and writing them back ([`attribute_json`]).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use zv_core::data_type::DataType;

use super::values::push_element;
use super::{bad, entries};
use crate::error::Result;
use crate::layout::attributes::AttributeRows;

/// Values of one attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeValues {
    /// Numbers (row-major, `channels` per row), in `data_type`. `present` marks rows that
    /// have a value (`None`: all rows do).
    Numeric {
        /// The rows.
        rows: AttributeRows,
        /// Rows that are present (object attributes with missing rows).
        present: Option<Vec<bool>>,
    },
    /// Strings (a categorical attribute; `None` = missing).
    Categorical(Vec<Option<String>>),
}

impl AttributeValues {
    /// The number of rows.
    pub fn len(&self) -> usize {
        match self {
            AttributeValues::Numeric { rows, .. } => rows.num_rows(),
            AttributeValues::Categorical(v) => v.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// The values.
    pub values: AttributeValues,
    /// Channel names of a multi-channel attribute.
    pub channel_names: Option<Vec<String>>,
}

/// Parses `{"dtype", "values", "channel_names"?}`; `per_item` flattens one level of lists
/// (polyline vertex attributes: a list per polyline). Null values make missing rows.
fn parse_attribute(name: &str, v: &Value, per_item: bool) -> Result<Attribute> {
    let what = format!("attribute `{name}`");
    let o = v
        .as_object()
        .ok_or_else(|| bad(format!("{what} is not an object")))?;
    let dtype = o
        .get("dtype")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("{what} has no dtype")))?;
    let mut values: Vec<Value> = o
        .get("values")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(format!("{what} has no values list")))?
        .clone();
    if per_item {
        let mut flat = Vec::new();
        for (i, item) in values.iter().enumerate() {
            flat.extend(
                item.as_array()
                    .ok_or_else(|| {
                        bad(format!(
                            "{what}: values[{i}] is not a list (one list per polyline)"
                        ))
                    })?
                    .iter()
                    .cloned(),
            );
        }
        values = flat;
    }
    let channel_names = match o.get("channel_names") {
        None | Some(Value::Null) => None,
        Some(c) => Some(
            c.as_array()
                .ok_or_else(|| bad(format!("{what}: channel_names is not a list")))?
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad(format!("{what}: channel name {x} is not a string")))
                })
                .collect::<Result<Vec<_>>>()?,
        ),
    };
    if dtype == "string" || dtype == "category" || dtype == "str" {
        let strings = values
            .iter()
            .map(|x| match x {
                Value::Null => Ok(None),
                Value::String(s) => Ok(Some(s.clone())),
                other => Err(bad(format!("{what}: {other} is not a string"))),
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(Attribute {
            values: AttributeValues::Categorical(strings),
            channel_names: None,
        });
    }
    let dt = DataType::from_name(dtype)
        .filter(|d| !d.is_variable())
        .ok_or_else(|| bad(format!("{what}: unsupported dtype `{dtype}`")))?;
    let is_complex = matches!(dt, DataType::Complex64 | DataType::Complex128);
    // a row is a list of channels; for complex types a scalar is itself a [re, im] pair
    let row_is_list = |v: &Value| {
        if is_complex {
            v.as_array()
                .and_then(|a| a.first())
                .is_some_and(Value::is_array)
        } else {
            v.is_array()
        }
    };
    let channels = match &channel_names {
        Some(c) => c.len(),
        None => values
            .iter()
            .find(|v| !v.is_null())
            .filter(|v| row_is_list(v))
            .and_then(Value::as_array)
            .map_or(1, Vec::len),
    };
    if channels == 0 {
        return Err(bad(format!("{what}: rows have no channels")));
    }
    let size = dt.size().unwrap_or(1);
    let mut le = Vec::with_capacity(values.len() * channels * size);
    let mut present = Vec::with_capacity(values.len());
    for (i, row) in values.iter().enumerate() {
        if row.is_null() {
            present.push(false);
            le.extend(std::iter::repeat_n(0u8, channels * size));
            continue;
        }
        present.push(true);
        if row_is_list(row) {
            let cells = row
                .as_array()
                .filter(|c| c.len() == channels)
                .ok_or_else(|| bad(format!("{what}: row {i} does not have {channels} values")))?;
            for c in cells {
                push_element(dt, c, &mut le, &what)?;
            }
        } else if channels == 1 {
            push_element(dt, row, &mut le, &what)?;
        } else {
            return Err(bad(format!(
                "{what}: row {i} is a scalar, expected {channels} values"
            )));
        }
    }
    let rows = AttributeRows::from_le(dt, channels, le).map_err(|e| bad(format!("{what}: {e}")))?;
    Ok(Attribute {
        values: AttributeValues::Numeric {
            rows,
            present: present.contains(&false).then_some(present),
        },
        channel_names,
    })
}

/// The attributes object `doc[key]` (absent or `null`: none); `per_item` as in
/// [`parse_attribute`].
pub(super) fn parse_attributes(
    doc: &Map<String, Value>,
    key: &str,
    per_item: bool,
) -> Result<BTreeMap<String, Attribute>> {
    entries(doc, key, |name, v| {
        Ok((name.to_owned(), parse_attribute(name, v, per_item)?))
    })
}

/// The JSON form of attribute values (rows as scalars or lists; missing rows as null).
pub fn attribute_json(a: &Attribute, split: Option<&[usize]>) -> Value {
    let rows: Vec<Value> = match &a.values {
        AttributeValues::Numeric { rows, present } => (0..rows.num_rows())
            .map(|r| {
                if present
                    .as_ref()
                    .is_some_and(|p| !p.get(r).copied().unwrap_or(true))
                {
                    Value::Null
                } else {
                    rows.row_json(r).unwrap_or(Value::Null)
                }
            })
            .collect(),
        AttributeValues::Categorical(v) => v
            .iter()
            .map(|s| s.clone().map_or(Value::Null, Value::from))
            .collect(),
    };
    let values = match split {
        None => Value::Array(rows),
        Some(lens) => {
            let mut it = rows.into_iter();
            Value::Array(
                lens.iter()
                    .map(|&n| Value::Array(it.by_ref().take(n).collect()))
                    .collect(),
            )
        }
    };
    let dtype = match &a.values {
        AttributeValues::Numeric { rows, .. } => rows.data_type().name(),
        AttributeValues::Categorical(_) => "string",
    };
    let mut o = json!({"dtype": dtype, "values": values});
    if let Some(c) = &a.channel_names {
        o["channel_names"] = json!(c);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::GeometryDocument;

    #[test]
    fn parses_attributes_of_every_kind() {
        let doc = json!({"format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
            "vertices": [[1, 2], [3, 4]],
            "vertex_attributes": {
                "a": {"dtype": "float32", "values": [1.5, "NaN"]},
                "rgb": {"dtype": "uint8", "values": [[1, 2, 3], [4, 5, 6]], "channel_names": ["r", "g", "b"]},
                "kind": {"dtype": "string", "values": ["soma", null]},
                "flag": {"dtype": "bool", "values": [true, false]}},
            "object_attributes": {"s": {"dtype": "int64", "values": [7, null]}}});
        let g = GeometryDocument::from_value(&doc).unwrap();
        let AttributeValues::Numeric { rows, .. } = &g.vertex_attributes["rgb"].values else {
            panic!()
        };
        assert_eq!((rows.channels(), rows.num_rows()), (3, 2));
        assert!(
            matches!(&g.vertex_attributes["kind"].values, AttributeValues::Categorical(v) if v[1].is_none())
        );
        let AttributeValues::Numeric { present, .. } = &g.object_attributes["s"].values else {
            panic!()
        };
        assert_eq!(present.as_deref(), Some(&[true, false][..]));
        for bad_doc in [
            json!({"format": "zv-geometry/2", "geometry": "mesh", "chunk_shape": [1, 1]}),
            json!({"format": "zv-geometry/1", "geometry": "blob", "chunk_shape": [1, 1]}),
            json!({"format": "zv-geometry/1", "geometry": "mesh"}),
            json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [1, 1], "edges": [[0, 1, 2]]}),
            json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [1, 1], "vertex_attributes": {"a": {"dtype": "int8", "values": [300]}}}),
            json!({"format": "zv-geometry/1", "geometry": "graph", "chunk_shape": [1, 1], "pyramid": {}}),
        ] {
            assert!(GeometryDocument::from_value(&bad_doc).is_err(), "{bad_doc}");
        }
    }
}
