//! The "zv-dump/1" document: a store's content as JSON, in the format of
//! `../shared/fixtures/zv-0.7/README.md`, comparable with the reference's dumps by
//! `compare_dumps.py`.
//!
//! The logical part (objects, attributes, groups, the canonical view and the high-level
//! reader output) follows the reference's reading of the store, including its quirks: the
//! `reader` edges of a skeleton use the reference's level-global `parent = i − 1` rule (zv's
//! own [`crate::reader::Level::object`] rebuilds parents per object instead), and object links
//! of graphs, skeletons and meshes are the reader's links that belong to exactly one object.

use std::collections::HashMap;

use rayon::prelude::*;
use serde_json::{json, Map, Value};

use crate::blob::join;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::{AttributeRows, DenseArray};
use crate::layout::fragment_index::{FragmentIndex, FragmentRows};
use crate::layout::links::LinkRows;
use crate::layout::manifest::BlockFragments;
use crate::metadata::{ChunkKey, JsonObject};
use crate::reader::{delta_name, AttributeInfo, Level, ObjectIndex, Vertices, ZvStore};

/// The format name.
pub const DUMP_FORMAT: &str = "zv-dump/1";

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

fn row_json(row: &[f64]) -> Value {
    Value::Array(row.iter().map(|&v| num(v)).collect())
}

fn fragments_json(f: &FragmentIndex) -> Value {
    Value::Array(
        f.iter()
            .map(|r| match r {
                FragmentRows::Range(r) => json!([r.start, r.end - r.start]),
                FragmentRows::Explicit(rows) => json!({"indices": rows}),
            })
            .collect(),
    )
}

fn attr_rows_json(rows: &AttributeRows, which: impl Iterator<Item = u64>) -> Value {
    Value::Array(which.filter_map(|r| rows.row_json(r as usize)).collect())
}

fn dense_values(a: &DenseArray) -> Value {
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

/// Everything of one level that the dump needs, read once.
struct LevelData {
    keys: Vec<ChunkKey>,
    vertices: Vec<Vertices>,
    fragments: Vec<FragmentIndex>,
    /// per attribute (in `infos` order), per chunk
    attrs: Vec<Vec<Option<AttributeRows>>>,
    infos: Vec<AttributeInfo>,
    /// per chunk, delta-0 link rows
    links0: Vec<Option<LinkRows>>,
    offsets: Vec<u64>,
    index_of: HashMap<ChunkKey, usize>,
}

impl LevelData {
    fn load(level: &Level) -> Result<Self> {
        level.check_chunk_arrays()?;
        let keys = level.chunk_keys()?;
        let infos: Vec<AttributeInfo> = level
            .vertex_attribute_names()?
            .iter()
            .map(|n| level.vertex_attribute_info(n))
            .collect::<Result<_>>()?;
        let has_links0 = level.link_deltas()?.contains(&0);
        let width0 = if has_links0 {
            level.links_info(0)?.0
        } else {
            2
        };
        type Loaded = (
            Vertices,
            FragmentIndex,
            Vec<Option<AttributeRows>>,
            Option<LinkRows>,
        );
        let loaded: Vec<Loaded> = keys
            .par_iter()
            .map(|k| -> Result<Loaded> {
                let chunk = level.chunk(k)?.ok_or_else(|| Error::Missing {
                    key: format!("{}/vertices/{k}/zarr.json", level.id()),
                    what: "vertices".into(),
                })?;
                let rows = chunk.vertices.len() as u64;
                let attrs = infos
                    .iter()
                    .map(|i| level.vertex_attribute(i, k, rows))
                    .collect::<Result<Vec<_>>>()?;
                let links = if has_links0 {
                    level.links(k, width0, rows)?
                } else {
                    None
                };
                Ok((chunk.vertices, chunk.fragments, attrs, links))
            })
            .collect::<Result<_>>()?;
        let mut vertices = Vec::new();
        let mut fragments = Vec::new();
        let mut attrs = vec![Vec::new(); infos.len()];
        let mut links0 = Vec::new();
        let mut offsets = Vec::new();
        let mut total = 0u64;
        for (v, f, a, l) in loaded {
            offsets.push(total);
            total += v.len() as u64;
            vertices.push(v);
            fragments.push(f);
            for (i, x) in a.into_iter().enumerate() {
                attrs[i].push(x);
            }
            links0.push(l);
        }
        let index_of = keys
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        Ok(Self {
            keys,
            vertices,
            fragments,
            attrs,
            infos,
            links0,
            offsets,
            index_of,
        })
    }

    fn global(&self, key: &ChunkKey, row: u64) -> Option<u64> {
        let i = *self.index_of.get(key)?;
        (row < self.vertices[i].len() as u64).then(|| self.offsets[i] + row)
    }

    fn total(&self) -> u64 {
        self.vertices.iter().map(|v| v.len() as u64).sum()
    }

    fn positions(&self) -> Vec<Vec<f64>> {
        self.vertices.iter().flat_map(Vertices::rows).collect()
    }
}

/// The dump of a whole store.
pub fn dump(store: &ZvStore) -> Result<Value> {
    let mut top = Map::new();
    top.insert("dump_format".into(), Value::from(DUMP_FORMAT));
    top.insert(
        "root_attributes".into(),
        Value::Object(store.root_attributes().clone()),
    );
    top.insert("root_metadata".into(), root_metadata(store));
    // non-level groups under the root
    let mut tree = Map::new();
    for child in store.blobs().children("")? {
        if child.bytes().all(|b| b.is_ascii_digit()) && !child.is_empty() {
            continue;
        }
        walk_tree(store, &child, &child, &mut tree)?;
    }
    top.insert("root_group_attributes_tree".into(), Value::Object(tree));
    top.insert("level_ids".into(), json!(store.level_ids()));
    let mut levels = Map::new();
    for &id in store.level_ids() {
        let level = store.level(id)?;
        levels.insert(id.to_string(), dump_level(store, &level)?);
    }
    top.insert("levels".into(), Value::Object(levels));
    Ok(Value::Object(top))
}

fn root_metadata(store: &ZvStore) -> Value {
    let r = store.root();
    let zv = store
        .root_attributes()
        .get("zarr_vectors")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
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
fn walk_tree(store: &ZvStore, full: &str, rel: &str, out: &mut Map<String, Value>) -> Result<()> {
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

fn dump_level(store: &ZvStore, level: &Level) -> Result<Value> {
    let data = LevelData::load(level)?;
    let geometry = store.geometry();
    let lp = level.id().to_string();
    let mut out = Map::new();
    out.insert(
        "level_attributes".into(),
        Value::Object(level.attributes().clone()),
    );
    out.insert("level_metadata".into(), level_metadata(level));
    let mut tree = Map::new();
    for child in store.blobs().children(&lp)? {
        walk_tree(store, &join(&[&lp, &child]), &child, &mut tree)?;
    }
    out.insert("group_attributes_tree".into(), Value::Object(tree));
    out.insert("array_chunk_keys".into(), array_chunk_keys(level)?);
    out.insert(
        "chunk_keys".into(),
        json!(data
            .keys
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()),
    );
    out.insert("chunks".into(), chunks_json(&data));
    let mut info = Map::new();
    for i in &data.infos {
        info.insert(
            i.name.clone(),
            json!({"dtype": i.data_type.name(), "ncols": i.channels().unwrap_or(1)}),
        );
    }
    out.insert("vertex_attribute_info".into(), Value::Object(info));
    out.insert("links".into(), links_json(level, &data)?);
    out.insert(
        "link_attributes".into(),
        link_attributes_json(level, &data)?,
    );
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
    out.insert("cross_chunk_links".into(), Value::Object(ccl));
    out.insert(
        "cross_chunk_link_attributes".into(),
        ccl_attributes_json(level)?,
    );
    let index = level.object_index()?;
    if let Some(index) = &index {
        index.check_fragments(&format!("{}/object_index", level.id()), |c| {
            data.index_of
                .get(&ChunkKey(c.to_vec()))
                .map(|&ci| data.fragments[ci].len() as u64)
        })?;
    }
    out.insert(
        "object_index".into(),
        index.as_ref().map_or(Value::Null, object_index_json),
    );
    let reader_links = reader_links(level, &geometry, &data)?;
    let (objects, unassigned) = objects_json(
        index.as_ref(),
        &data,
        &geometry,
        reader_links.as_deref(),
        level,
    )?;
    out.insert("objects".into(), objects);
    if matches!(
        geometry,
        Geometry::Graph | Geometry::Skeleton | Geometry::Mesh
    ) {
        out.insert("unassigned_links".into(), unassigned);
    }
    let mut oattrs = Map::new();
    for (name, a) in level.object_attributes()? {
        oattrs.insert(
            name,
            json!({"dtype": a.data_type.name(), "shape": a.shape, "values": dense_values(&a.values),
                   "present_mask": a.present_mask.map(|m| m.iter().map(|&b| u8::from(b)).collect::<Vec<_>>()),
                   "array_attributes": a.attributes}),
        );
    }
    out.insert("object_attributes".into(), Value::Object(oattrs));
    out.insert(
        "groups".into(),
        level.groups()?.map_or(Value::Null, |g| json!(g.members)),
    );
    let mut gattrs = Map::new();
    for (name, a) in level.group_attributes()? {
        gattrs.insert(name, json!({"dtype": a.data_type.name(), "shape": a.shape, "values": dense_values(&a.values)}));
    }
    out.insert("group_attributes".into(), Value::Object(gattrs));
    out.insert(
        "canonical".into(),
        canonical(&data, &geometry, reader_links.as_deref()),
    );
    out.insert(
        "reader".into(),
        reader_json(&data, &geometry, reader_links.as_deref(), index.as_ref()),
    );
    Ok(Value::Object(out))
}

fn level_metadata(level: &Level) -> Value {
    let m = level.metadata();
    let raw = level
        .attributes()
        .get("zarr_vectors_level")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let verbatim = |k: &str| raw.get(k).cloned().unwrap_or(Value::Null);
    let effective = match raw.get("chunk_shape").filter(|v| !v.is_null()) {
        Some(c) => c.clone(),
        None => level.root_attributes_chunk_shape(),
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

impl Level {
    /// The root `chunk_shape` as written (for dumps that keep JSON numbers verbatim).
    fn root_attributes_chunk_shape(&self) -> Value {
        Value::Array(self.root().chunk_shape.iter().map(|&c| num(c)).collect())
    }
}

fn array_chunk_keys(level: &Level) -> Result<Value> {
    let mut arrays: Vec<String> = vec![
        "vertices".into(),
        "vertex_fragments".into(),
        "link_fragments".into(),
    ];
    for n in level.vertex_attribute_names()? {
        arrays.push(format!("vertex_attributes/{n}"));
    }
    for n in level.children_of("links")? {
        arrays.push(format!("links/{n}"));
    }
    for n in level.link_attribute_names()? {
        for d in level.children_of(&format!("link_attributes/{n}"))? {
            arrays.push(format!("link_attributes/{n}/{d}"));
        }
    }
    let mut out = Map::new();
    for a in arrays {
        if !level
            .blobs()
            .exists(&join(&[&level.id().to_string(), &a]))?
        {
            continue;
        }
        let keys = level.keys_of(&a)?;
        out.insert(
            a,
            json!(keys.iter().map(ToString::to_string).collect::<Vec<_>>()),
        );
    }
    Ok(Value::Object(out))
}

fn chunks_json(data: &LevelData) -> Value {
    let mut out = Map::new();
    for (i, key) in data.keys.iter().enumerate() {
        let mut c = Map::new();
        c.insert("fragments".into(), fragments_json(&data.fragments[i]));
        c.insert("vertex_bytes".into(), json!(data.vertices[i].byte_len()));
        c.insert(
            "vertices".into(),
            Value::Array(
                data.vertices[i]
                    .rows()
                    .iter()
                    .map(|r| row_json(r))
                    .collect(),
            ),
        );
        if !data.infos.is_empty() {
            let mut va = Map::new();
            for (ai, info) in data.infos.iter().enumerate() {
                let v = match &data.attrs[ai][i] {
                    None => Value::Null,
                    Some(rows) => Value::Array(
                        data.fragments[i]
                            .iter()
                            .map(|f| attr_rows_json(rows, f.iter()))
                            .collect(),
                    ),
                };
                va.insert(info.name.clone(), v);
            }
            c.insert("vertex_attributes".into(), Value::Object(va));
        }
        out.insert(key.to_string(), Value::Object(c));
    }
    Value::Object(out)
}

fn links_json(level: &Level, data: &LevelData) -> Result<Value> {
    let mut out = Map::new();
    for name in level.children_of("links")? {
        let Some(d) = crate::reader::parse_delta(&name) else {
            continue;
        };
        let (width, dtype, _) = level.links_info(d)?;
        let mut chunks = Map::new();
        for key in level.keys_of(&format!("links/{name}"))? {
            let entry = if d == 0 {
                let rows_in_chunk = data
                    .index_of
                    .get(&key)
                    .map_or(0, |&i| data.vertices[i].len() as u64);
                let rows = match data
                    .index_of
                    .get(&key)
                    .and_then(|&i| data.links0[i].clone())
                {
                    Some(r) => r,
                    None => match level.links(&key, width, rows_in_chunk)? {
                        Some(r) => r,
                        None => continue,
                    },
                };
                let frags = level
                    .link_fragments(&key, rows.len() as u64)?
                    .map_or_else(|| FragmentIndex::consecutive(&[rows.len() as u64]), Ok)
                    .map_err(|source| Error::Blob {
                        key: format!("{}/link_fragments/{key}", level.id()),
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

fn link_attributes_json(level: &Level, data: &LevelData) -> Result<Value> {
    let mut out = Map::new();
    for name in level.link_attribute_names()? {
        let mut per_delta = Map::new();
        for dname in level.children_of(&format!("link_attributes/{name}"))? {
            let Some(d) = crate::reader::parse_delta(&dname) else {
                continue;
            };
            let info = level.link_attribute_info(&name, d)?;
            let mut chunks = Map::new();
            // every chunk with link rows must have values; blobs of chunks without rows too
            let mut keys = level.keys_of(&format!("link_attributes/{name}/{dname}"))?;
            keys.extend(level.keys_of(&format!("links/{dname}"))?);
            keys.sort();
            keys.dedup();
            for key in keys {
                let nrows = if d == 0 {
                    data.index_of
                        .get(&key)
                        .and_then(|&i| data.links0[i].as_ref())
                        .map_or(0, |l| l.len() as u64)
                } else {
                    let (w, _, _) = level.links_info(d)?;
                    level
                        .cross_level_links(d, &key, w)?
                        .map_or(0, |r| r.groups.iter().map(|g| (g.len() / w) as u64).sum())
                };
                if let Some(rows) = level.link_attribute(&info, d, &key, nrows)? {
                    chunks.insert(
                        key.to_string(),
                        attr_rows_json(&rows, 0..rows.num_rows() as u64),
                    );
                }
            }
            per_delta.insert(
                dname,
                json!({"dtype": info.data_type.name(), "chunks": chunks}),
            );
        }
        out.insert(name, Value::Object(per_delta));
    }
    Ok(Value::Object(out))
}

fn ccl_attributes_json(level: &Level) -> Result<Value> {
    let mut out = Map::new();
    for name in level.children_of("cross_chunk_link_attributes")? {
        let mut per_delta = Map::new();
        for dname in level.children_of(&format!("cross_chunk_link_attributes/{name}"))? {
            let Some(d) = crate::reader::parse_delta(&dname) else {
                continue;
            };
            let group = join(&[
                &level.id().to_string(),
                "cross_chunk_link_attributes",
                &name,
                &dname,
            ]);
            let attrs: JsonObject = level.blobs().group_attributes(&group)?.unwrap_or_default();
            let dtype = attrs
                .get("dtype")
                .and_then(Value::as_str)
                .unwrap_or("float32");
            let data_type = zv_core::data_type::DataType::from_name(dtype).ok_or_else(|| {
                Error::metadata(
                    join(&[&group, "zarr.json"]),
                    format!("unsupported dtype `{dtype}`"),
                )
            })?;
            let num_links = level
                .cross_chunk_links(d)?
                .map_or(0, |c| c.links.len() as u64);
            let bytes = level
                .blobs()
                .require_bytes(&join(&[&group, "data"]), "cross-chunk link attribute data")?;
            let rows =
                AttributeRows::decode(&bytes, data_type, num_links, None).map_err(|source| {
                    Error::Blob {
                        key: join(&[&group, "data", "c/0"]),
                        source,
                    }
                })?;
            per_delta.insert(
                dname,
                json!({"dtype": dtype, "values": attr_rows_json(&rows, 0..rows.num_rows() as u64)}),
            );
        }
        out.insert(name, Value::Object(per_delta));
    }
    Ok(Value::Object(out))
}

fn object_index_json(index: &ObjectIndex) -> Value {
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
                        let k = ChunkKey(b.chunk.clone()).to_string();
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

/// The links of the reference's high-level reader, as level-global vertex indices: `None`
/// for geometries without links.
fn reader_links(
    level: &Level,
    geometry: &Geometry,
    data: &LevelData,
) -> Result<Option<Vec<Vec<u64>>>> {
    if !geometry.has_explicit_links() {
        return Ok(None);
    }
    let map_row = |key: &ChunkKey, row: &[i64]| -> Option<Vec<u64>> {
        row.iter().map(|&r| data.global(key, r as u64)).collect()
    };
    let skeleton = *geometry == Geometry::Skeleton;
    let mut intra = Vec::new();
    for (i, key) in data.keys.iter().enumerate() {
        if let Some(rows) = &data.links0[i] {
            if skeleton {
                for (c, p, _) in level.skeleton_parents(key, &data.fragments[i], rows)? {
                    let m = map_row(key, &[c as i64, p as i64]).ok_or_else(|| {
                        Error::inconsistent(
                            format!("{}/links/0/{key}", level.id()),
                            format!("parent link ({c}, {p}) is outside the chunk"),
                        )
                    })?;
                    intra.push(m);
                }
                continue;
            }
            for row in rows.rows() {
                let m = map_row(key, row).ok_or_else(|| {
                    Error::inconsistent(
                        format!("{}/links/0/{key}", level.id()),
                        format!("link row {row:?} is outside the chunk"),
                    )
                })?;
                intra.push(m);
            }
        }
    }
    let mut cross = Vec::new();
    if let Some(c) = level.cross_chunk_links(0)? {
        let l = &c.links;
        for r in 0..l.len() {
            let mut m = Vec::new();
            for e in 0..l.link_width() {
                let Some((k, row)) = l.endpoint(r, e) else {
                    break;
                };
                let g = data.global(&ChunkKey(k.to_vec()), row).ok_or_else(|| {
                    Error::inconsistent(
                        format!("{}/cross_chunk_links/0/data", level.id()),
                        format!(
                            "record {r} names row {row} of chunk {}, which does not exist",
                            ChunkKey(k.to_vec())
                        ),
                    )
                })?;
                m.push(g);
            }
            cross.push(m);
        }
    }
    if skeleton && level.skeleton_ccl_parent_first()? {
        for l in &mut cross {
            l.reverse();
        }
    }
    if skeleton {
        let n = data.total() as usize;
        let mut parent: Vec<Option<u64>> = (0..n).map(|i| (i > 0).then(|| i as u64 - 1)).collect();
        for l in intra.iter().chain(&cross) {
            if let [c, p] = l.as_slice() {
                if let Some(slot) = parent.get_mut(*c as usize) {
                    *slot = Some(*p);
                }
            }
        }
        return Ok(Some(
            parent
                .iter()
                .enumerate()
                .skip(1)
                .filter_map(|(c, p)| p.map(|p| vec![c as u64, p]))
                .collect(),
        ));
    }
    intra.extend(cross);
    Ok(Some(intra))
}

type ObjectsOut = (Value, Value);

fn objects_json(
    index: Option<&ObjectIndex>,
    data: &LevelData,
    geometry: &Geometry,
    reader_links: Option<&[Vec<u64>]>,
    level: &Level,
) -> Result<ObjectsOut> {
    let Some(index) = index else {
        let unassigned = reader_links.map_or(json!([]), |l| json!(l));
        return Ok((Value::Null, unassigned));
    };
    let okey = format!("{}/object_index", level.id());
    // global vertex → [(object, local index)]
    let mut owners: HashMap<u64, Vec<(usize, u64)>> = HashMap::new();
    let mut objects = Vec::with_capacity(index.manifests.len());
    let mut globals_of: Vec<Vec<u64>> = Vec::with_capacity(index.manifests.len());
    for (id, m) in index.manifests.iter().enumerate() {
        let mut verts = Vec::new();
        let mut globals = Vec::new();
        let mut attrs: Vec<Vec<Value>> = vec![Vec::new(); data.infos.len()];
        for (coords, f) in m.refs() {
            let key = ChunkKey(coords.to_vec());
            let ci = *data.index_of.get(&key).ok_or_else(|| {
                Error::inconsistent(
                    &okey,
                    format!("object {id} names chunk {key}, which has no vertices"),
                )
            })?;
            let frag = data.fragments[ci].get(f as usize).ok_or_else(|| {
                Error::inconsistent(
                    &okey,
                    format!(
                        "object {id} names fragment {f} of chunk {key}, which has {}",
                        data.fragments[ci].len()
                    ),
                )
            })?;
            for r in frag.iter() {
                let v = data.vertices[ci]
                    .row(r as usize)
                    .ok_or_else(|| Error::inconsistent(&okey, format!("row {r} of chunk {key}")))?;
                verts.push(row_json(&v));
                let g = data.offsets[ci] + r;
                let local = globals.len() as u64;
                let entry = owners.entry(g).or_default();
                if !entry.iter().any(|(o, _)| *o == id) {
                    entry.push((id, local));
                }
                globals.push(g);
            }
            for (ai, _) in data.infos.iter().enumerate() {
                if let Some(rows) = &data.attrs[ai][ci] {
                    attrs[ai].extend(frag.iter().filter_map(|r| rows.row_json(r as usize)));
                }
            }
        }
        let mut o = Map::new();
        o.insert("id".into(), json!(id));
        o.insert("vertex_count".into(), json!(verts.len()));
        o.insert("vertices".into(), Value::Array(verts));
        if !data.infos.is_empty() {
            let mut va = Map::new();
            for (ai, info) in data.infos.iter().enumerate() {
                va.insert(
                    info.name.clone(),
                    Value::Array(std::mem::take(&mut attrs[ai])),
                );
            }
            o.insert("vertex_attributes".into(), Value::Object(va));
        }
        objects.push(o);
        globals_of.push(globals);
    }
    let mut unassigned = Vec::new();
    if geometry.is_sequential() {
        for (o, g) in objects.iter_mut().zip(&globals_of) {
            let n = g.len() as u64;
            o.insert(
                "links".into(),
                json!((1..n).map(|i| [i - 1, i]).collect::<Vec<_>>()),
            );
        }
    } else if let Some(links) = reader_links {
        let mut per_object: Vec<Vec<Vec<u64>>> = vec![Vec::new(); objects.len()];
        for l in links {
            // the objects that own every endpoint
            let mut candidates: Option<Vec<usize>> = None;
            for g in l {
                let owners_here: Vec<usize> = owners
                    .get(g)
                    .map(|v| v.iter().map(|(o, _)| *o).collect())
                    .unwrap_or_default();
                candidates = Some(match candidates {
                    None => owners_here,
                    Some(c) => c.into_iter().filter(|o| owners_here.contains(o)).collect(),
                });
            }
            match candidates.as_deref() {
                Some([o]) => {
                    let mut local: Vec<u64> = l
                        .iter()
                        .filter_map(|g| {
                            owners
                                .get(g)
                                .and_then(|v| v.iter().find(|(oo, _)| oo == o))
                                .map(|(_, li)| *li)
                        })
                        .collect();
                    if *geometry == Geometry::Mesh {
                        if let Some(pos) = local
                            .iter()
                            .enumerate()
                            .min_by_key(|(_, v)| **v)
                            .map(|(i, _)| i)
                        {
                            local.rotate_left(pos);
                        }
                    }
                    per_object[*o].push(local);
                }
                _ => unassigned.push(l.clone()),
            }
        }
        for (o, mut ls) in objects.iter_mut().zip(per_object) {
            ls.sort();
            o.insert("links".into(), json!(ls));
        }
    }
    Ok((
        Value::Array(objects.into_iter().map(Value::Object).collect()),
        json!(unassigned),
    ))
}

fn cmp_rows(a: &[f64], b: &[f64]) -> std::cmp::Ordering {
    for (x, y) in a.iter().zip(b) {
        match x.total_cmp(y) {
            std::cmp::Ordering::Equal => continue,
            o => return o,
        }
    }
    a.len().cmp(&b.len())
}

fn canonical(data: &LevelData, geometry: &Geometry, links: Option<&[Vec<u64>]>) -> Value {
    let positions = data.positions();
    let mut sorted = positions.clone();
    sorted.sort_by(|a, b| cmp_rows(a, b));
    let mut out = Map::new();
    out.insert("vertex_count".into(), json!(positions.len()));
    out.insert(
        "vertices_sorted".into(),
        Value::Array(sorted.iter().map(|r| row_json(r)).collect()),
    );
    let links = links.unwrap_or(&[]);
    let xyz = |l: &Vec<u64>| -> Vec<Vec<f64>> {
        l.iter()
            .map(|&g| positions.get(g as usize).cloned().unwrap_or_default())
            .collect()
    };
    match geometry {
        Geometry::Graph | Geometry::Skeleton | Geometry::Other(_) => {
            let mut edges: Vec<Vec<Vec<f64>>> = links.iter().map(xyz).collect();
            edges.sort_by(|a, b| cmp_rows(&a.concat(), &b.concat()));
            out.insert(
                "edges_xyz_sorted".into(),
                Value::Array(
                    edges
                        .iter()
                        .map(|e| Value::Array(e.iter().map(|r| row_json(r)).collect()))
                        .collect(),
                ),
            );
        }
        Geometry::Mesh => {
            let mut faces: Vec<Vec<Vec<f64>>> = links
                .iter()
                .map(|l| {
                    let mut f = xyz(l);
                    if let Some(pos) = (0..f.len()).min_by(|&a, &b| cmp_rows(&f[a], &f[b])) {
                        f.rotate_left(pos);
                    }
                    f
                })
                .collect();
            faces.sort_by(|a, b| cmp_rows(&a.concat(), &b.concat()));
            out.insert(
                "faces_xyz_sorted".into(),
                Value::Array(
                    faces
                        .iter()
                        .map(|e| Value::Array(e.iter().map(|r| row_json(r)).collect()))
                        .collect(),
                ),
            );
        }
        _ => {}
    }
    Value::Object(out)
}

fn reader_json(
    data: &LevelData,
    geometry: &Geometry,
    links: Option<&[Vec<u64>]>,
    index: Option<&ObjectIndex>,
) -> Value {
    let positions: Vec<Value> = data.positions().iter().map(|r| row_json(r)).collect();
    let n = positions.len();
    match geometry {
        Geometry::PointCloud => {
            let mut va = Map::new();
            for (ai, info) in data.infos.iter().enumerate() {
                let mut vals = Vec::new();
                for rows in data.attrs[ai].iter().flatten() {
                    vals.extend((0..rows.num_rows()).filter_map(|r| rows.row_json(r)));
                }
                va.insert(info.name.clone(), Value::Array(vals));
            }
            json!({"function": "read_points", "geometry_type": geometry.name(), "positions": positions,
                   "vertex_count": n, "vertex_attributes": va})
        }
        Geometry::Line | Geometry::Polyline | Geometry::Streamline => {
            let mut polylines = Vec::new();
            let mut total = 0usize;
            if let Some(index) = index {
                for m in &index.manifests {
                    let mut pl = Vec::new();
                    for (coords, f) in m.refs() {
                        let Some(&ci) = data.index_of.get(&ChunkKey(coords.to_vec())) else {
                            continue;
                        };
                        let Some(frag) = data.fragments[ci].get(f as usize) else {
                            continue;
                        };
                        pl.extend(
                            frag.iter()
                                .filter_map(|r| data.vertices[ci].row(r as usize))
                                .map(|r| row_json(&r)),
                        );
                    }
                    if !pl.is_empty() {
                        total += pl.len();
                        polylines.push(Value::Array(pl));
                    }
                }
            }
            json!({"function": "read_polylines", "geometry_type": geometry.name(), "polyline_count": polylines.len(),
                   "polylines": polylines, "vertex_count": total})
        }
        Geometry::Mesh => {
            let faces = links.unwrap_or(&[]);
            json!({"function": "read_mesh", "geometry_type": geometry.name(), "vertices": positions,
                   "vertex_count": n, "faces": faces, "face_count": faces.len()})
        }
        Geometry::Graph | Geometry::Skeleton | Geometry::Other(_) => {
            let edges = links.unwrap_or(&[]);
            json!({"function": "read_graph", "geometry_type": geometry.name(), "positions": positions,
                   "node_count": n, "edges": edges, "edge_count": edges.len()})
        }
    }
}
