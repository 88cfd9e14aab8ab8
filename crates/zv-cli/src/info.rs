//! `zv info STORE [--json]`: a ZV store's summary — geometry, axes and units, bounds, and
//! per level the chunk and bin shapes, vertex/object/group counts, attributes with their
//! data types, codecs in use, bytes and files per array and chunk occupancy.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;
use serde_json::{json, Map, Value};
use zv_core::key::StorePrefix;
use zv_core::metadata::NodeMetadata;
use zv_format::reader::{Level, ZvStore};

use crate::CliResult;

/// Prints the summary of `store` (JSON with `json`, else text).
pub(crate) fn run(store: &str, json: bool) -> CliResult {
    let store = ZvStore::open_url(store)?;
    let doc = summary(&store)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", text(&doc));
    }
    Ok(())
}

/// The summary document ("zv-info/1").
pub(crate) fn summary(store: &ZvStore) -> CliResult<Value> {
    let root = store.root();
    let axes: Vec<Value> = root.axes.iter().map(|a| a.to_json()).collect();
    let mut levels = Map::new();
    for &id in store.level_ids() {
        let level = store.level(id)?;
        levels.insert(id.to_string(), level_summary(&level)?);
    }
    Ok(json!({
        "info_format": "zv-info/1",
        "zv_version": root.zv_version,
        "geometry": store.geometry().name(),
        "geometry_types": root.geometry_types,
        "axes": axes,
        "bounds": root.bounds,
        "chunk_shape": root.chunk_shape,
        "base_bin_shape": root.base_bin_shape,
        "links_convention": root.links_convention,
        "format_capabilities": root.format_capabilities,
        "level_ids": store.level_ids(),
        "levels": levels,
    }))
}

fn level_summary(level: &Level) -> CliResult<Value> {
    let keys = level.chunk_keys()?;
    let rows: Vec<u64> = keys
        .par_iter()
        .map(|k| Ok(level.vertices(k)?.map_or(0, |v| v.len() as u64)))
        .collect::<zv_format::Result<_>>()?;
    let mut sorted = rows.clone();
    sorted.sort_unstable();
    let occupancy = match sorted.as_slice() {
        [] => Value::Null,
        s => json!({"min": s[0], "median": s[s.len() / 2], "max": s[s.len() - 1]}),
    };
    let mut attributes = Map::new();
    for info in level.vertex_attribute_infos()? {
        attributes.insert(
            format!("vertex/{}", info.name),
            json!({"dtype": info.data_type.name(), "channels": info.channels()}),
        );
    }
    for (kind, attrs) in [
        ("object", level.object_attributes()?),
        ("group", level.group_attributes()?),
    ] {
        for (name, a) in attrs {
            attributes.insert(
                format!("{kind}/{name}"),
                json!({"dtype": a.data_type.name(), "shape": a.shape}),
            );
        }
    }
    for name in level.link_attribute_names()? {
        attributes.insert(
            format!("link/{name}"),
            json!({"dtype": level.link_attribute_info(&name, 0)?.data_type.name()}),
        );
    }
    let index = level.object_index()?;
    let groups = level.groups()?;
    Ok(json!({
        "chunk_shape": level.chunk_shape(),
        "bin_shape": level.bin_shape(),
        "chunks": keys.len(),
        "vertices": rows.iter().sum::<u64>(),
        // a ZV 0.9 index with sparse ids holds fewer objects than its id space
        "objects": index.map(|i| i.ids.as_ref().map_or(i.num_objects, |ids| ids.len() as u64)),
        "groups": groups.map(|g| g.len()),
        "vertices_per_chunk": occupancy,
        "attributes": attributes,
        "arrays": arrays(level)?,
    }))
}

/// The array path of a key inside a level (`links/0`, `vertex_attributes/rgb`, …).
fn array_of(rest: &str) -> Option<String> {
    let parts: Vec<&str> = rest.split('/').collect();
    let depth = match parts.first()? {
        &"link_attributes" | &"cross_chunk_link_attributes" => 3,
        &"vertex_attributes"
        | &"fragment_attributes"
        | &"object_attributes"
        | &"group_attributes"
        | &"links"
        | &"cross_chunk_links" => 2,
        _ => 1,
    };
    (parts.len() > depth).then(|| parts[..depth].join("/"))
}

/// Per array of the level: files, bytes and the codec chains of its blobs.
fn arrays(level: &Level) -> CliResult<Value> {
    let store = level.blobs().store().clone();
    let prefix = format!("{}/", level.id());
    let keys = store.list_prefix(&StorePrefix::new(prefix.clone())?)?;
    let mut out: BTreeMap<String, (u64, u64, BTreeSet<String>)> = BTreeMap::new();
    for key in keys {
        let Some(rest) = key.as_str().strip_prefix(&prefix) else {
            continue;
        };
        let Some(array) = array_of(rest) else {
            continue;
        };
        let entry = out.entry(array).or_default();
        entry.0 += 1;
        entry.1 += store.size(&key)?.unwrap_or(0);
        if let Some(node) = key.as_str().strip_suffix("/zarr.json") {
            if let Ok(Some(NodeMetadata::Array(a))) = level.blobs().node(node) {
                let chain: Vec<&str> = a.codecs.iter().map(|c| c.name.as_str()).collect();
                entry.2.insert(chain.join("+"));
            }
        }
    }
    Ok(Value::Object(
        out.into_iter()
            .map(|(k, (files, bytes, codecs))| {
                (k, json!({"files": files, "bytes": bytes, "codecs": codecs}))
            })
            .collect(),
    ))
}

/// The summary as text.
fn text(doc: &Value) -> String {
    let mut s = format!(
        "ZV {} store, geometry {}\naxes: {}\nbounds: {} .. {}\nchunk shape: {}\n",
        doc["zv_version"].as_str().unwrap_or(""),
        doc["geometry"].as_str().unwrap_or(""),
        doc["axes"],
        doc["bounds"][0],
        doc["bounds"][1],
        doc["chunk_shape"],
    );
    for (id, l) in doc["levels"].as_object().into_iter().flatten() {
        s += &format!(
            "level {id}: chunk shape {}, bin shape {}, {} vertices in {} chunks (per chunk {}), objects {}, groups {}\n",
            l["chunk_shape"], l["bin_shape"], l["vertices"], l["chunks"], l["vertices_per_chunk"], l["objects"], l["groups"]
        );
        for (name, a) in l["attributes"].as_object().into_iter().flatten() {
            s += &format!("  attribute {name}: {a}\n");
        }
        for (name, a) in l["arrays"].as_object().into_iter().flatten() {
            s += &format!(
                "  array {name}: {} files, {} bytes, codecs {}\n",
                a["files"], a["bytes"], a["codecs"]
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_paths_by_kind() {
        assert_eq!(array_of("vertices/0.0.0/c/0").as_deref(), Some("vertices"));
        assert_eq!(
            array_of("links/+1/0.0.0/zarr.json").as_deref(),
            Some("links/+1")
        );
        assert_eq!(
            array_of("link_attributes/w/0/0.0.0/c/0").as_deref(),
            Some("link_attributes/w/0")
        );
        assert_eq!(array_of("zarr.json"), None);
    }
}
