//! The stored sections of the dump: what the store holds, as it is stored — root and level
//! metadata, the group attribute trees, the chunk keys of each per-chunk array, each chunk's
//! vertices and fragments, link rows by link fragment, cross-level and cross-chunk links and
//! their attributes, the object index, and the dense object and group attributes.

use serde_json::{json, Map, Value};

use super::json::{
    all_rows_json, attr_rows_json, dense_values, fragments_json, keys_json, num, object_attribute,
    rows_json,
};
use crate::blob::join;
use crate::error::{Error, Result};
use crate::layout::attributes::DenseArray;
use crate::layout::fragment_index::FragmentIndex;
use crate::layout::links::LinkRows;
use crate::layout::manifest::BlockFragments;
use crate::metadata::{ChunkKey, Layout};
use crate::names;
use crate::reader::level_scan::LevelScan;
use crate::reader::{delta_name, parse_delta, Deltas, Level, ObjectIndex, ZvStore};

/// The `root_metadata` section: the parsed root metadata, with the reference's JSON numbers
/// kept verbatim where it keeps them.
pub(super) fn root_metadata(store: &ZvStore) -> Value {
    let r = store.root();
    let zv = object_attribute(store.root_attributes(), names::ROOT_ATTRIBUTE);
    let verbatim = |k: &str, default: Value| {
        zv.get(k)
            .cloned()
            .filter(|v| !v.is_null())
            .unwrap_or(default)
    };
    let axes = store.root_attributes()["multiscales"][0]["axes"].clone();
    let effective = match zv.get("base_bin_shape").filter(|v| !v.is_null()) {
        Some(b) => b.clone(),
        None => verbatim("chunk_shape", Value::Null),
    };
    json!({
        "zv_version": r.zv_version,
        "spatial_index_dims": axes,
        "chunk_shape": verbatim("chunk_shape", Value::Null),
        "bounds": verbatim("bounds", Value::Null),
        "geometry_types": r.geometry_types,
        "crs": r.crs.clone().unwrap_or(Value::Null),
        "links_convention": r.links_convention,
        "object_index_convention": r.object_index_convention,
        "cross_chunk_strategy": r.cross_chunk_strategy,
        "cross_level_depth": r.cross_level_depth,
        "cross_level_storage": r.cross_level_storage,
        "reduction_factor": r.reduction_factor,
        "base_bin_shape": verbatim("base_bin_shape", Value::Null),
        "format_capabilities": r.format_capabilities,
        "sid_ndim": r.ndim(),
        "effective_bin_shape": effective,
        "bins_per_chunk": r.bins_per_chunk(),
    })
}

/// Adds `path → attributes` (or `null` without `zarr.json`) for the folder at `full` and its
/// descendants; array nodes are skipped.
pub(super) fn walk_tree(
    store: &ZvStore,
    full: &str,
    rel: &str,
    out: &mut Map<String, Value>,
) -> Result<()> {
    match store.blobs().node(full)? {
        Some(zv_core::metadata::NodeMetadata::Array(_)) => return Ok(()),
        Some(zv_core::metadata::NodeMetadata::Group(g)) => {
            out.insert(rel.to_owned(), Value::Object(g.attributes));
        }
        None => {
            out.insert(rel.to_owned(), Value::Null);
        }
    }
    for child in store.blobs().children(full)? {
        walk_tree(store, &join(&[full, &child]), &join(&[rel, &child]), out)?;
    }
    Ok(())
}

/// The `level_metadata` section.
pub(super) fn level_metadata(level: &Level) -> Value {
    let m = level.metadata();
    let raw = object_attribute(level.attributes(), names::LEVEL_ATTRIBUTE);
    let verbatim = |k: &str| raw.get(k).cloned().unwrap_or(Value::Null);
    let effective = match raw.get("chunk_shape").filter(|v| !v.is_null()) {
        Some(c) => c.clone(),
        // the root `chunk_shape` as written (JSON numbers kept verbatim)
        None => Value::Array(level.root().chunk_shape.iter().map(|&c| num(c)).collect()),
    };
    json!({
        "level": m.level,
        "vertex_count": m.vertex_count,
        "arrays_present": m.arrays_present,
        "bin_shape": if m.level == 0 { Value::Null } else { m.bin_shape.as_ref().map_or(Value::Null, |b| Value::Array(b.iter().map(|&x| num(x)).collect())) },
        "bin_ratio": if m.level == 0 { Value::Null } else { json!(m.bin_ratio) },
        "object_sparsity": raw.get("object_sparsity").cloned().unwrap_or(json!(1.0)),
        "coarsening_method": m.coarsening_method,
        "parent_level": m.parent_level,
        "chunk_shape": verbatim("chunk_shape"),
        "chunk_dims": verbatim("chunk_dims"),
        "chunk_attribute_name": verbatim("chunk_attribute_name"),
        "chunk_attribute_values": verbatim("chunk_attribute_values"),
        "preserves_object_ids": m.preserves_object_ids,
        "inherited_num_objects": m.inherited_num_objects,
        "shared_fragments": m.shared_fragments,
        "effective_chunk_shape": effective,
    })
}

/// The `array_chunk_keys` section: the chunk keys of every per-chunk array that exists.
pub(super) fn array_chunk_keys(level: &Level) -> Result<Value> {
    let mut out = Map::new();
    for a in level.chunk_arrays(Deltas::All)? {
        if !level
            .blobs()
            .exists(&join(&[&level.id().to_string(), &a]))?
        {
            continue;
        }
        let keys = level.keys_of(&a)?;
        out.insert(a, keys_json(&keys));
    }
    Ok(Value::Object(out))
}

/// The `chunks` section: each chunk's fragments, vertices and vertex attributes by fragment.
pub(super) fn chunks_json(scan: &LevelScan) -> Value {
    let mut out = Map::new();
    for c in &scan.chunks {
        let (vertices, fragments) = (&c.chunk.vertices, &c.chunk.fragments);
        let mut o = Map::new();
        o.insert("fragments".into(), fragments_json(fragments));
        o.insert("vertex_bytes".into(), json!(vertices.byte_len()));
        o.insert("vertices".into(), rows_json(vertices.rows()));
        if !scan.infos.is_empty() {
            let mut va = Map::new();
            for (info, rows) in scan.infos.iter().zip(&c.attributes) {
                let v = match rows {
                    None => Value::Null,
                    Some(rows) => Value::Array(
                        fragments
                            .iter()
                            .map(|f| attr_rows_json(rows, f.iter()))
                            .collect(),
                    ),
                };
                va.insert(info.name.clone(), v);
            }
            o.insert("vertex_attributes".into(), Value::Object(va));
        }
        out.insert(c.key().to_string(), Value::Object(o));
    }
    Value::Object(out)
}

/// The `vertex_attribute_info` section.
pub(super) fn vertex_attribute_info(scan: &LevelScan) -> Value {
    let mut info = Map::new();
    for i in scan.infos.iter() {
        info.insert(
            i.name.clone(),
            json!({"dtype": i.data_type.name(), "ncols": i.channels().unwrap_or(1)}),
        );
    }
    Value::Object(info)
}

/// The `links` section: per delta folder, each chunk's link rows grouped by link fragment
/// (delta 0) or by cross-level group.
pub(super) fn links_json(level: &Level, scan: &LevelScan) -> Result<Value> {
    let mut out = Map::new();
    for name in level.children_of(names::LINKS)? {
        let Some(d) = parse_delta(&name) else {
            continue;
        };
        let (width, dtype, _) = level.links_info(d)?;
        let mut chunks = Map::new();
        for key in level.keys_of(&join(&[names::LINKS, &name]))? {
            let entry = if d == 0 {
                let Some(rows) = intra_links(level, scan, &key, width)? else {
                    continue;
                };
                let frags = level
                    .link_fragments(&key, rows.len() as u64)?
                    .map_or_else(|| FragmentIndex::consecutive(&[rows.len() as u64]), Ok)
                    .map_err(|source| Error::Blob {
                        key: level.p(&[names::LINK_FRAGMENTS, &key.to_string()]),
                        source,
                    })?;
                let groups: Vec<Value> = frags
                    .iter()
                    .map(|f| {
                        Value::Array(
                            f.iter()
                                .filter_map(|r| rows.row(r as usize))
                                .map(|row| json!(row))
                                .collect(),
                        )
                    })
                    .collect();
                json!({"groups": groups, "link_fragments": fragments_json(&frags)})
            } else {
                let Some(r) = level.cross_level_links(d, &key, width)? else {
                    continue;
                };
                let groups: Vec<Value> = r
                    .groups
                    .iter()
                    .map(|g| Value::Array(g.chunks(width).map(|row| json!(row)).collect()))
                    .collect();
                json!({"groups": groups})
            };
            chunks.insert(key.to_string(), entry);
        }
        out.insert(
            name.clone(),
            json!({"link_width": width, "dtype": dtype, "chunks": chunks}),
        );
    }
    Ok(Value::Object(out))
}

/// The delta-0 link rows of chunk `key`: the scan's, else read (`None`: the chunk has none).
fn intra_links(
    level: &Level,
    scan: &LevelScan,
    key: &ChunkKey,
    width: usize,
) -> Result<Option<LinkRows>> {
    match scan.get(key) {
        Some(c) if c.links.is_some() => Ok(c.links.clone()),
        c => level.links(key, width, c.map_or(0, |c| c.rows())),
    }
}

/// `{name: {delta folder: f(name, delta folder, delta)}}` over the attribute folders of the
/// container `folder` (`link_attributes`, `cross_chunk_link_attributes`) and their delta
/// folders.
fn by_name_and_delta(
    level: &Level,
    folder: &str,
    mut f: impl FnMut(&str, &str, i32) -> Result<Value>,
) -> Result<Value> {
    let mut out = Map::new();
    for name in level.children_of(folder)? {
        let mut per_delta = Map::new();
        for dname in level.children_of(&join(&[folder, &name]))? {
            let Some(d) = parse_delta(&dname) else {
                continue;
            };
            let value = f(&name, &dname, d)?;
            per_delta.insert(dname, value);
        }
        out.insert(name, Value::Object(per_delta));
    }
    Ok(Value::Object(out))
}

/// The `link_attributes` section: per attribute and delta, each chunk's values.
pub(super) fn link_attributes_json(level: &Level, scan: &LevelScan) -> Result<Value> {
    by_name_and_delta(level, names::LINK_ATTRIBUTES, |name, dname, d| {
        link_attribute_json(level, scan, name, dname, d)
    })
}

/// The dtype and per-chunk values of link attribute `name` of delta `d` (folder `dname`):
/// every chunk with link rows must have values; blobs of chunks without rows are read too.
fn link_attribute_json(
    level: &Level,
    scan: &LevelScan,
    name: &str,
    dname: &str,
    d: i32,
) -> Result<Value> {
    let info = level.link_attribute_info(name, d)?;
    let mut chunks = Map::new();
    let mut keys = level.keys_of(&join(&[names::LINK_ATTRIBUTES, name, dname]))?;
    keys.extend(level.keys_of(&join(&[names::LINKS, dname]))?);
    keys.sort();
    keys.dedup();
    for key in keys {
        let nrows = if d == 0 {
            scan.get(&key)
                .and_then(|c| c.links.as_ref())
                .map_or(0, |l| l.len() as u64)
        } else {
            let (w, _, _) = level.links_info(d)?;
            level
                .cross_level_links(d, &key, w)?
                .map_or(0, |r| r.groups.iter().map(|g| (g.len() / w) as u64).sum())
        };
        if let Some(rows) = level.link_attribute(&info, d, &key, nrows)? {
            chunks.insert(key.to_string(), all_rows_json(&rows));
        }
    }
    Ok(json!({"dtype": info.data_type.name(), "chunks": chunks}))
}

/// The `cross_chunk_links` section: per delta, the records as `[chunk key, row]` endpoints.
pub(super) fn cross_chunk_links_json(level: &Level) -> Result<Value> {
    let mut ccl = Map::new();
    for d in level.cross_chunk_deltas()? {
        if let Some(c) = level.cross_chunk_links(d)? {
            let l = &c.links;
            let records: Vec<Value> = (0..l.len())
                .map(|r| {
                    Value::Array(
                        (0..l.link_width())
                            .filter_map(|e| l.endpoint(r, e))
                            .map(|(k, row)| json!([ChunkKey(k.to_vec()).to_string(), row]))
                            .collect(),
                    )
                })
                .collect();
            ccl.insert(
                delta_name(d),
                json!({"link_width": l.link_width(), "num_links": l.len(), "records": records}),
            );
        }
    }
    Ok(Value::Object(ccl))
}

/// The `cross_chunk_link_attributes` section: per attribute and delta, one value per record
/// (in a ZV 0.9 store, the rows of the link attributes' cross-chunk segments).
pub(super) fn cross_chunk_link_attributes_json(level: &Level) -> Result<Value> {
    let folder = match level.layout() {
        Layout::ChunkGrid => names::LINK_ATTRIBUTES,
        _ => names::CROSS_CHUNK_LINK_ATTRIBUTES,
    };
    by_name_and_delta(level, folder, |name, _, d| {
        let info = level.cross_chunk_link_attribute_info(name, d)?;
        let values = level
            .cross_chunk_link_attribute(name, d)?
            .map_or_else(|| json!([]), |rows| all_rows_json(&rows));
        Ok(json!({"dtype": info.data_type.name(), "values": values}))
    })
}

/// The `object_index` section: each object's `(chunk, fragment)` references, and its
/// manifest blocks as stored.
pub(super) fn object_index_json(index: &ObjectIndex) -> Value {
    let manifests: Vec<Value> = index
        .manifests
        .iter()
        .map(|m| {
            Value::Array(
                m.refs()
                    .map(|(c, f)| json!([ChunkKey(c.to_vec()).to_string(), f]))
                    .collect(),
            )
        })
        .collect();
    let blocks: Vec<Value> = index
        .manifests
        .iter()
        .map(|m| {
            Value::Array(
                m.blocks
                    .iter()
                    .map(|b| {
                        let k = ChunkKey(b.chunk.to_vec()).to_string();
                        match &b.fragments {
                            BlockFragments::Single(f) => json!([k, "single", f]),
                            BlockFragments::Range { start, count } => {
                                json!([k, "range", [start, count]])
                            }
                            BlockFragments::Explicit(v) => json!([k, "explicit", v]),
                        }
                    })
                    .collect(),
            )
        })
        .collect();
    json!({"num_objects": index.num_objects, "sid_ndim": index.sid_ndim, "layout": index.layout,
           "manifests": manifests, "manifest_blocks": blocks})
}

/// Adds the `object_attributes`, `groups` and `group_attributes` sections to `out`.
pub(super) fn dense_sections(level: &Level, out: &mut dyn super::Sections) -> Result<()> {
    let mut oattrs = Map::new();
    for (name, a) in level.object_attributes()? {
        let mut o = dense_json(a.data_type.name(), &a.shape, &a.values);
        o.insert(
            "present_mask".into(),
            json!(a
                .present_mask
                .map(|m| m.iter().map(|&b| u8::from(b)).collect::<Vec<_>>())),
        );
        o.insert("array_attributes".into(), Value::Object(a.attributes));
        oattrs.insert(name, Value::Object(o));
    }
    out.put("object_attributes", Value::Object(oattrs))?;
    out.put(
        "groups",
        level.groups()?.map_or(Value::Null, |g| json!(g.members)),
    )?;
    let mut gattrs = Map::new();
    for (name, a) in level.group_attributes()? {
        let o = dense_json(a.data_type.name(), &a.shape, &a.values);
        gattrs.insert(name, Value::Object(o));
    }
    out.put("group_attributes", Value::Object(gattrs))
}

/// `{"dtype", "shape", "values"}` of a dense attribute.
fn dense_json(dtype: &str, shape: &[u64], values: &DenseArray) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("dtype".into(), json!(dtype));
    o.insert("shape".into(), json!(shape));
    o.insert("values".into(), dense_values(values));
    o
}
