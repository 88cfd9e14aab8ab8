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

mod attributes;
mod values;

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use zv_core::data_type::DataType;

use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::metadata::Axis;

pub use attributes::{attribute_json, Attribute, AttributeValues};
pub use values::parse_number;

use attributes::parse_attributes;
use values::{f64_row, u64_list};

/// The format name.
pub const GEOMETRY_FORMAT: &str = "zv-geometry/1";

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

/// `doc[key]` read by `read`; absent or `null` is `None`.
fn optional<T>(
    doc: &Map<String, Value>,
    key: &str,
    read: impl FnOnce(&Value) -> Result<T>,
) -> Result<Option<T>> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => read(v).map(Some),
    }
}

/// The list `doc[key]`, each item read by `read` (with its index); absent or `null` is empty.
fn list<T>(
    doc: &Map<String, Value>,
    key: &str,
    read: impl Fn(usize, &Value) -> Result<T>,
) -> Result<Vec<T>> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a.iter().enumerate().map(|(i, v)| read(i, v)).collect(),
        Some(other) => Err(bad(format!("`{key}` is {other}, not a list"))),
    }
}

/// The entries of the object `doc[key]`, each read by `read` into a key and a value; absent
/// or `null` is empty.
fn entries<K: Ord, T>(
    doc: &Map<String, Value>,
    key: &str,
    read: impl Fn(&str, &Value) -> Result<(K, T)>,
) -> Result<BTreeMap<K, T>> {
    match doc.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m.iter().map(|(k, v)| read(k, v)).collect(),
        Some(other) => Err(bad(format!("`{key}` is {other}, not an object"))),
    }
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
                        Axis::from_object(o).ok_or_else(|| bad(format!("axis {x} has no name")))
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
        let bin_shape = optional(doc, "bin_shape", |b| f64_row(b, "bin_shape"))?;
        let bounds = optional(doc, "bounds", |b| {
            let l = b
                .as_array()
                .filter(|l| l.len() == 2)
                .ok_or_else(|| bad("bounds is not [min, max]"))?;
            Ok([f64_row(&l[0], "bounds[0]")?, f64_row(&l[1], "bounds[1]")?])
        })?;
        let vertex_dtype = match doc.get("vertex_dtype").and_then(Value::as_str) {
            None => None,
            Some(s) => Some(
                DataType::from_name(s).ok_or_else(|| bad(format!("unknown vertex_dtype `{s}`")))?,
            ),
        };
        let vertices = list(doc, "vertices", |i, r| {
            f64_row(r, &format!("vertices[{i}]"))
        })?;
        let polylines = list(doc, "polylines", |i, pl| {
            pl.as_array()
                .ok_or_else(|| bad(format!("polylines[{i}] is not a list")))?
                .iter()
                .enumerate()
                .map(|(j, r)| f64_row(r, &format!("polylines[{i}][{j}]")))
                .collect::<Result<Vec<_>>>()
        })?;
        let object_ids = optional(doc, "object_ids", |v| u64_list(v, "object_ids"))?;
        let num_objects = optional(doc, "num_objects", |v| {
            v.as_u64()
                .ok_or_else(|| bad(format!("num_objects {v} is not a non-negative integer")))
        })?;
        let edges = list(doc, "edges", |i, e| {
            let l = u64_list(e, &format!("edges[{i}]"))?;
            match l.as_slice() {
                [x, y] => Ok([*x, *y]),
                _ => Err(bad(format!("edges[{i}] does not have 2 vertices"))),
            }
        })?;
        let faces = list(doc, "faces", |i, f| u64_list(f, &format!("faces[{i}]")))?;
        let groups = entries(doc, "groups", |k, v| {
            let id: u64 = k
                .parse()
                .map_err(|_| bad(format!("group id `{k}` is not a non-negative integer")))?;
            Ok((id, u64_list(v, &format!("groups[{k}]"))?))
        })?;
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
