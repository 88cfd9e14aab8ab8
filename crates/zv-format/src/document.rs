//! The "zv-geometry/1" JSON document: geometry to import into (or export from) a ZV store.
//!
//! ```text
//! {"format": "zv-geometry/1",
//!  "geometry": "point_cloud" | "line" | "polyline" | "streamline" | "graph" | "skeleton" | "mesh",
//!  "axes": [{"name": "x", "type": "space", "unit": "micrometer"}, ...],   optional (default x, y, z)
//!  "chunk_shape": [..], "bin_shape": [..], "bounds": [[min..], [max..]],    bin_shape, bounds optional
//!  "vertex_dtype": "float32",                                               optional (float16/32/64)
//!  "codecs": "spec-default" | "none" | "zstd" | "blosc-lz4" | "gzip", + "+crc32c"   optional
//!  "out_of_bounds": "raise" | "ignore" | "expand",                          optional (raise)
//!  "crs": {...},                                                            optional
//!  "vertices": [[x, y, z], ...],          point_cloud, graph, skeleton, mesh
//!  "polylines": [[[x, y, z], ...], ...],  line, polyline, streamline (a line is a 2-vertex polyline)
//!  "object_ids": [...],                   per vertex (point_cloud, graph, skeleton, mesh); optional
//!  "num_objects": 12,                     optional: objects past the largest id (or the last
//!                                         polyline) are empty
//!  "edges": [[a, b], ...],                graph: [source, target]; skeleton: [child, parent]
//!  "faces": [[a, b, c], ...],             mesh (triangles, or quads [a, b, c, d])
//!  "vertex_attributes": {"name": {"dtype": "float32", "values": [...], "channel_names": [...]}},
//!    (polylines: values is a list per polyline; dtype "string" makes a categorical attribute,
//!     null values are missing)
//!  "link_attributes":   {"name": {"dtype": ..., "values": [...]}},          one per edge or face
//!  "object_attributes": {"name": {"dtype": ..., "values": [...]}},          one per object (null: absent)
//!  "fragment_attributes": {"name": {"dtype": ..., "values": [...]}},        one per object, stored
//!                                                                           on each of its fragments
//!  "groups": {"0": [object ids], ...},
//!  "group_attributes":  {"name": {"dtype": ..., "values": [...]}},          one per group
//!  "pyramid": null }                      (reserved)
//! ```
//!
//! Numbers may also be the strings `"NaN"`, `"Infinity"`, `"-Infinity"` (refused for
//! coordinates). Object ids are dense `0..B` with `B` the largest of: the largest id + 1 (the
//! number of polylines), `num_objects`, and the length of the object attributes; ids without
//! vertices are empty objects. Fragment attribute values may be null only for empty objects.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use zv_core::data_type::DataType;

use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::metadata::Axis;

/// The format name.
pub const GEOMETRY_FORMAT: &str = "zv-geometry/1";

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

/// A parsed "zv-geometry/1" document.
#[derive(Debug, Clone, PartialEq)]
pub struct GeometryDocument {
    /// The geometry type.
    pub geometry: Geometry,
    /// The axes (default `x, y, z`, truncated or extended to the dimensionality).
    pub axes: Option<Vec<Axis>>,
    /// The chunk shape.
    pub chunk_shape: Vec<f64>,
    /// The bin shape.
    pub bin_shape: Option<Vec<f64>>,
    /// The bounds.
    pub bounds: Option<[Vec<f64>; 2]>,
    /// The vertex data type.
    pub vertex_dtype: Option<DataType>,
    /// The codec choice (see [`crate::writer::CodecChoice::parse`]).
    pub codecs: Option<String>,
    /// The out-of-bounds policy (`raise`, `ignore`, `expand`).
    pub out_of_bounds: Option<String>,
    /// The coordinate reference system.
    pub crs: Option<Value>,
    /// Vertex positions (points, graphs, skeletons, meshes).
    pub vertices: Vec<Vec<f64>>,
    /// Polylines (lines, polylines, streamlines).
    pub polylines: Vec<Vec<Vec<f64>>>,
    /// The object id of each vertex.
    pub object_ids: Option<Vec<u64>>,
    /// The number of objects, when there are empty objects past the largest id (or past the
    /// last polyline).
    pub num_objects: Option<u64>,
    /// Graph edges `[source, target]` or skeleton links `[child, parent]`.
    pub edges: Vec<[u64; 2]>,
    /// Mesh faces.
    pub faces: Vec<Vec<u64>>,
    /// Vertex attributes (for polylines: concatenated over the polylines, in order).
    pub vertex_attributes: BTreeMap<String, Attribute>,
    /// One value per edge or face.
    pub link_attributes: BTreeMap<String, Attribute>,
    /// One value per object.
    pub object_attributes: BTreeMap<String, Attribute>,
    /// One value per object, stored per fragment.
    pub fragment_attributes: BTreeMap<String, Attribute>,
    /// Groups: group id → object ids.
    pub groups: BTreeMap<u64, Vec<u64>>,
    /// One value per group.
    pub group_attributes: BTreeMap<String, Attribute>,
}

fn bad(reason: impl Into<String>) -> Error {
    Error::InvalidInput(reason.into())
}

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

fn f64_row(v: &Value, what: &str) -> Result<Vec<f64>> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what} is not a list")))?
        .iter()
        .map(|x| parse_number(x).ok_or_else(|| bad(format!("{what}: {x} is not a number"))))
        .collect()
}

fn u64_list(v: &Value, what: &str) -> Result<Vec<u64>> {
    v.as_array()
        .ok_or_else(|| bad(format!("{what} is not a list")))?
        .iter()
        .map(|x| {
            x.as_u64()
                .ok_or_else(|| bad(format!("{what}: {x} is not a non-negative integer")))
        })
        .collect()
}

/// Appends one JSON scalar as a little-endian element of `dt`.
fn push_element(dt: DataType, v: &Value, out: &mut Vec<u8>, what: &str) -> Result<()> {
    let err = || bad(format!("{what}: {v} is not a valid {dt}"));
    match dt {
        DataType::Bool => out.push(match v {
            Value::Bool(b) => u8::from(*b),
            Value::Number(n) if n.as_u64() == Some(0) || n.as_u64() == Some(1) => {
                n.as_u64().unwrap_or(0) as u8
            }
            _ => return Err(err()),
        }),
        DataType::Int8 => out.extend_from_slice(
            &i8::try_from(v.as_i64().ok_or_else(err)?)
                .map_err(|_| err())?
                .to_le_bytes(),
        ),
        DataType::Int16 => out.extend_from_slice(
            &i16::try_from(v.as_i64().ok_or_else(err)?)
                .map_err(|_| err())?
                .to_le_bytes(),
        ),
        DataType::Int32 => out.extend_from_slice(
            &i32::try_from(v.as_i64().ok_or_else(err)?)
                .map_err(|_| err())?
                .to_le_bytes(),
        ),
        DataType::Int64 => out.extend_from_slice(&v.as_i64().ok_or_else(err)?.to_le_bytes()),
        DataType::UInt8 => out.extend_from_slice(
            &u8::try_from(v.as_u64().ok_or_else(err)?)
                .map_err(|_| err())?
                .to_le_bytes(),
        ),
        DataType::UInt16 => out.extend_from_slice(
            &u16::try_from(v.as_u64().ok_or_else(err)?)
                .map_err(|_| err())?
                .to_le_bytes(),
        ),
        DataType::UInt32 => out.extend_from_slice(
            &u32::try_from(v.as_u64().ok_or_else(err)?)
                .map_err(|_| err())?
                .to_le_bytes(),
        ),
        DataType::UInt64 => out.extend_from_slice(&v.as_u64().ok_or_else(err)?.to_le_bytes()),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            let x = parse_number(v).ok_or_else(err)?;
            crate::layout::attributes::f64_to_le(dt, x, out);
        }
        DataType::Complex64 | DataType::Complex128 => {
            let pair = v.as_array().filter(|p| p.len() == 2).ok_or_else(err)?;
            let comp = if dt == DataType::Complex64 {
                DataType::Float32
            } else {
                DataType::Float64
            };
            for c in pair {
                crate::layout::attributes::f64_to_le(comp, parse_number(c).ok_or_else(err)?, out);
            }
        }
        _ => return Err(err()),
    }
    Ok(())
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

fn parse_attributes(
    doc: &Map<String, Value>,
    key: &str,
    per_item: bool,
) -> Result<BTreeMap<String, Attribute>> {
    let mut out = BTreeMap::new();
    match doc.get(key) {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (name, v) in m {
                out.insert(name.clone(), parse_attribute(name, v, per_item)?);
            }
        }
        Some(other) => return Err(bad(format!("`{key}` is {other}, not an object"))),
    }
    Ok(out)
}

impl GeometryDocument {
    /// Parses a document (refusing unknown geometry types and malformed fields).
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
        Self::from_value(&v)
    }

    /// Parses a document from a JSON value.
    pub fn from_value(v: &Value) -> Result<Self> {
        let doc = v
            .as_object()
            .ok_or_else(|| bad("the document is not a JSON object"))?;
        match doc.get("format").and_then(Value::as_str) {
            Some(GEOMETRY_FORMAT) => {}
            other => {
                return Err(bad(format!(
                    "format is {other:?}, expected \"{GEOMETRY_FORMAT}\""
                )))
            }
        }
        let geometry = Geometry::parse(
            doc.get("geometry")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("no `geometry`"))?,
        );
        if let Geometry::Other(g) = &geometry {
            return Err(bad(format!("unknown geometry `{g}`")));
        }
        if doc.get("pyramid").is_some_and(|p| !p.is_null()) {
            return Err(bad("`pyramid` is reserved and must be null"));
        }
        let axes = match doc.get("axes") {
            None | Some(Value::Null) => None,
            Some(Value::Array(a)) => Some(
                a.iter()
                    .map(|x| {
                        let o = x
                            .as_object()
                            .ok_or_else(|| bad(format!("axis {x} is not an object")))?;
                        Ok(Axis {
                            name: o
                                .get("name")
                                .and_then(Value::as_str)
                                .ok_or_else(|| bad(format!("axis {x} has no name")))?
                                .to_owned(),
                            axis_type: o.get("type").and_then(Value::as_str).map(str::to_owned),
                            unit: o.get("unit").and_then(Value::as_str).map(str::to_owned),
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            ),
            Some(other) => return Err(bad(format!("axes {other} is not a list"))),
        };
        let chunk_shape = f64_row(
            doc.get("chunk_shape")
                .ok_or_else(|| bad("no `chunk_shape`"))?,
            "chunk_shape",
        )?;
        let bin_shape = match doc.get("bin_shape") {
            None | Some(Value::Null) => None,
            Some(b) => Some(f64_row(b, "bin_shape")?),
        };
        let bounds = match doc.get("bounds") {
            None | Some(Value::Null) => None,
            Some(b) => {
                let l = b
                    .as_array()
                    .filter(|l| l.len() == 2)
                    .ok_or_else(|| bad("bounds is not [min, max]"))?;
                Some([f64_row(&l[0], "bounds[0]")?, f64_row(&l[1], "bounds[1]")?])
            }
        };
        let vertex_dtype = match doc.get("vertex_dtype").and_then(Value::as_str) {
            None => None,
            Some(s) => Some(
                DataType::from_name(s).ok_or_else(|| bad(format!("unknown vertex_dtype `{s}`")))?,
            ),
        };
        let rows = |key: &str| -> Result<Vec<Vec<f64>>> {
            match doc.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, r)| f64_row(r, &format!("{key}[{i}]")))
                    .collect(),
                Some(other) => Err(bad(format!("`{key}` is {other}, not a list"))),
            }
        };
        let vertices = rows("vertices")?;
        let polylines = match doc.get("polylines") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, pl)| {
                    pl.as_array()
                        .ok_or_else(|| bad(format!("polylines[{i}] is not a list")))?
                        .iter()
                        .enumerate()
                        .map(|(j, r)| f64_row(r, &format!("polylines[{i}][{j}]")))
                        .collect::<Result<Vec<_>>>()
                })
                .collect::<Result<Vec<_>>>()?,
            Some(other) => return Err(bad(format!("`polylines` is {other}, not a list"))),
        };
        let object_ids = match doc.get("object_ids") {
            None | Some(Value::Null) => None,
            Some(v) => Some(u64_list(v, "object_ids")?),
        };
        let num_objects = match doc.get("num_objects") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .ok_or_else(|| bad(format!("num_objects {v} is not a non-negative integer")))?,
            ),
        };
        let edges = match doc.get("edges") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let l = u64_list(e, &format!("edges[{i}]"))?;
                    match l.as_slice() {
                        [x, y] => Ok([*x, *y]),
                        _ => Err(bad(format!("edges[{i}] does not have 2 vertices"))),
                    }
                })
                .collect::<Result<Vec<_>>>()?,
            Some(other) => return Err(bad(format!("`edges` is {other}, not a list"))),
        };
        let faces = match doc.get("faces") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .enumerate()
                .map(|(i, f)| u64_list(f, &format!("faces[{i}]")))
                .collect::<Result<Vec<_>>>()?,
            Some(other) => return Err(bad(format!("`faces` is {other}, not a list"))),
        };
        let mut groups = BTreeMap::new();
        match doc.get("groups") {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (k, v) in m {
                    let id: u64 = k.parse().map_err(|_| {
                        bad(format!("group id `{k}` is not a non-negative integer"))
                    })?;
                    groups.insert(id, u64_list(v, &format!("groups[{k}]"))?);
                }
            }
            Some(other) => return Err(bad(format!("`groups` is {other}, not an object"))),
        }
        let per_polyline = geometry.is_sequential();
        Ok(Self {
            geometry,
            axes,
            chunk_shape,
            bin_shape,
            bounds,
            vertex_dtype,
            codecs: doc.get("codecs").and_then(Value::as_str).map(str::to_owned),
            out_of_bounds: doc
                .get("out_of_bounds")
                .and_then(Value::as_str)
                .map(str::to_owned),
            crs: doc.get("crs").filter(|v| !v.is_null()).cloned(),
            vertices,
            polylines,
            object_ids,
            num_objects,
            edges,
            faces,
            vertex_attributes: parse_attributes(doc, "vertex_attributes", per_polyline)?,
            link_attributes: parse_attributes(doc, "link_attributes", false)?,
            object_attributes: parse_attributes(doc, "object_attributes", false)?,
            fragment_attributes: parse_attributes(doc, "fragment_attributes", false)?,
            groups,
            group_attributes: parse_attributes(doc, "group_attributes", false)?,
        })
    }
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
