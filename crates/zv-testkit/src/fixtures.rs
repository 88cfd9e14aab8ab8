//! Fixture loaders: the reference fixtures' writer arguments (`NAME.input.json`) as
//! "zv-geometry/1" documents.

use serde_json::{json, Map, Value};

/// A `{"__ndarray__": true, "dtype", "shape", "data"}` value → `(dtype, data)`.
fn ndarray(v: &Value) -> Option<(String, Value)> {
    let o = v.as_object()?;
    if o.get("__ndarray__") != Some(&Value::Bool(true)) {
        return None;
    }
    Some((o.get("dtype")?.as_str()?.to_owned(), o.get("data")?.clone()))
}

fn data(v: &Value) -> Value {
    ndarray(v).map_or_else(|| v.clone(), |(_, d)| d)
}

/// `{"name": ndarray}` → `{"name": {"dtype", "values"}}`; for polylines the values are a list
/// per polyline.
fn attributes(v: Option<&Value>, per_polyline: bool) -> Value {
    let mut out = Map::new();
    for (name, a) in v.and_then(Value::as_object).into_iter().flatten() {
        let entry = if per_polyline {
            let parts = a.as_array().cloned().unwrap_or_default();
            let dtype = parts
                .first()
                .and_then(ndarray)
                .map_or("float32".to_owned(), |(d, _)| d);
            json!({"dtype": dtype, "values": parts.iter().map(data).collect::<Vec<_>>()})
        } else {
            let (dtype, values) = ndarray(a).unwrap_or(("float32".to_owned(), a.clone()));
            json!({"dtype": dtype, "values": values})
        };
        out.insert(name.clone(), entry);
    }
    Value::Object(out)
}

/// Converts the first writer call of a fixture's `NAME.input.json` (`write_points`,
/// `write_polylines`, `write_graph`, `write_mesh`) into a "zv-geometry/1" document.
/// `build_pyramid` calls are not converted (the format reserves `pyramid`).
pub fn input_to_geometry(input: &Value) -> Value {
    let call = &input["calls"][0];
    let f = call["function"].as_str().unwrap_or_default();
    let a = &call["args"];
    let mut doc =
        json!({"format": "zv-geometry/1", "chunk_shape": a["chunk_shape"], "pyramid": null});
    for k in ["bounds", "bin_shape"] {
        if !a[k].is_null() {
            doc[k] = a[k].clone();
        }
    }
    match f {
        "write_points" => {
            doc["geometry"] = json!("point_cloud");
            doc["vertices"] = data(&a["positions"]);
            if !a["object_ids"].is_null() {
                doc["object_ids"] = data(&a["object_ids"]);
            }
        }
        "write_polylines" => {
            doc["geometry"] = json!(a["geometry_type"].as_str().unwrap_or("streamline"));
            doc["polylines"] = Value::Array(
                a["polylines"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(data)
                    .collect(),
            );
        }
        "write_graph" => {
            doc["geometry"] = json!(if a["kind"] == "skeleton" {
                "skeleton"
            } else {
                "graph"
            });
            doc["vertices"] = data(&a["positions"]);
            doc["edges"] = data(&a["edges"]);
            if !a["object_ids"].is_null() {
                doc["object_ids"] = data(&a["object_ids"]);
            }
        }
        "write_mesh" => {
            doc["geometry"] = json!("mesh");
            doc["vertices"] = data(&a["vertices"]);
            doc["faces"] = data(&a["faces"]);
            if !a["object_ids"].is_null() {
                doc["object_ids"] = data(&a["object_ids"]);
            }
        }
        _ => {}
    }
    let per_polyline = f == "write_polylines";
    doc["vertex_attributes"] = attributes(a.get("vertex_attributes"), per_polyline);
    doc["link_attributes"] = attributes(a.get("link_attributes"), false);
    doc["object_attributes"] = attributes(a.get("object_attributes"), false);
    doc["group_attributes"] = attributes(a.get("group_attributes"), false);
    if let Some(g) = a.get("groups").filter(|g| !g.is_null()) {
        doc["groups"] = g.clone();
    }
    doc
}

/// The reference fixture stores (`NAME.zarr` in [`crate::env::fixtures_dir`]), by directory
/// name, sorted; panics if the directory cannot be read.
pub fn fixture_stores() -> Vec<String> {
    let dir = crate::env::fixtures_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("the fixtures at {}: {e}", dir.display()))
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_str()?.to_owned();
            name.ends_with(".zarr").then_some(name)
        })
        .collect();
    names.sort();
    names
}
