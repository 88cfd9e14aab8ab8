//! The `reader` section of a ZV 0.9 line store: what zarr-vectors 0.9.2's `read_lines`
//! returns (`docs/format-decisions.md`, "ZV 0.9 stores"). The 0.7.0 reference has no line
//! reader, so 0.7 line stores keep the dump's note instead.
//!
//! `read_lines` reads the objects `0..num_objects` in order and gives each line its first and
//! last vertex: the first row of its first manifest fragment and the last row of its last
//! one; a line is returned only when its fragments hold at least two rows. A vertex
//! attribute gives the same two rows per line, flattened in endpoint order (row `2k` is
//! endpoint 0 of line `k`), and is returned only when every line returned has a row for
//! each vertex of its fragments. The cross-chunk records are not read.

use serde_json::{json, Map, Value};

use super::json::row_json;
use crate::error::Result;
use crate::geometry::Geometry;
use crate::layout::fragment_index::FragmentRows;
use crate::names;
use crate::reader::level_scan::{LevelScan, ScannedChunk};
use crate::reader::{Level, ObjectIndex};

/// The first and last row of fragment `rows` (`None` when it is empty).
fn ends(rows: &FragmentRows<'_>) -> Option<(u64, u64)> {
    match rows {
        FragmentRows::Range(r) => (r.start < r.end).then(|| (r.start, r.end - 1)),
        FragmentRows::Explicit(rows) => Some((*rows.first()?, *rows.last()?)),
    }
}

/// The JSON of row `r` of chunk `c` (its position, or its attribute `ai`), or zeros when
/// the fragment was empty: 0.9.2 leaves such an endpoint at zero.
fn end_json(c: &ScannedChunk, r: Option<u64>, attribute: Option<usize>) -> Option<Value> {
    match attribute {
        None => Some(match r.and_then(|r| c.chunk.vertices.row(r as usize)) {
            Some(row) => row_json(&row),
            None => row_json(&vec![0.0; c.chunk.vertices.ndim()]),
        }),
        Some(ai) => {
            let rows = c.attributes[ai].as_ref()?;
            match r {
                Some(r) => rows.row_json(r as usize),
                None if rows.channels() == 1 => Some(json!(0)),
                None => Some(json!(vec![0; rows.channels()])),
            }
        }
    }
}

/// 0.9.2's `read_lines` of the level (see the [module docs](self)).
pub(super) fn read_lines(
    scan: &LevelScan,
    level: &Level,
    index: Option<&ObjectIndex>,
) -> Result<Value> {
    let okey = level.p(&[names::OBJECT_INDEX]);
    let mut endpoints = Vec::new();
    // per attribute, its values in endpoint order, or None once a line lacks one
    let mut attributes: Vec<Option<Vec<Value>>> = vec![Some(Vec::new()); scan.infos.len()];
    let Some(index) = index else {
        return Ok(lines_json(endpoints, scan, attributes));
    };
    for id in (0..index.num_objects).filter(|&id| index.contains(id)) {
        let Some(manifest) = index.manifests.get(id as usize) else {
            continue;
        };
        let frags = scan.fragments(manifest, id, &okey)?;
        let rows: usize = frags.iter().map(|(_, _, f)| f.len()).sum();
        let (Some((first, _, first_rows)), Some((last, _, last_rows))) =
            (frags.first(), frags.last())
        else {
            continue;
        };
        if rows < 2 {
            continue;
        }
        let (a, b) = (ends(first_rows).map(|e| e.0), ends(last_rows).map(|e| e.1));
        let (Some(p), Some(q)) = (end_json(first, a, None), end_json(last, b, None)) else {
            continue;
        };
        endpoints.push(json!([p, q]));
        for (ai, values) in attributes.iter_mut().enumerate() {
            let Some(vals) = values else { continue };
            // every fragment's chunk must have the attribute's rows for all its vertices
            let served = frags.iter().all(|(c, _, _)| {
                c.attributes[ai]
                    .as_ref()
                    .is_some_and(|a| a.num_rows() as u64 == c.rows())
            });
            match (
                served,
                end_json(first, a, Some(ai)),
                end_json(last, b, Some(ai)),
            ) {
                (true, Some(p), Some(q)) => vals.extend([p, q]),
                _ => *values = None,
            }
        }
    }
    Ok(lines_json(endpoints, scan, attributes))
}

/// The section: the lines and the attributes every line has (none without lines).
fn lines_json(
    endpoints: Vec<Value>,
    scan: &LevelScan,
    attributes: Vec<Option<Vec<Value>>>,
) -> Value {
    let mut va = Map::new();
    if !endpoints.is_empty() {
        for (info, values) in scan.infos.iter().zip(attributes) {
            if let Some(values) = values {
                va.insert(info.name.clone(), Value::Array(values));
            }
        }
    }
    json!({"function": "read_lines", "geometry_type": Geometry::Line.name(),
           "line_count": endpoints.len(), "endpoints": endpoints, "vertex_attributes": va})
}
