//! Exporting a store's level 0 as a "zv-geometry/1" document (`zv export`), the inverse of
//! [`crate::import::write_document`] for everything the format holds.
//!
//! Vertices come in the level's order (chunks in key order, rows in order); polylines in
//! object order, each in manifest order. Links use zv's reading (skeleton parents per
//! object). Categorical attributes are exported as strings; missing object-attribute rows
//! (`present_mask` 0) as `null`.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::metadata::ChunkKey;
use crate::reader::{AttributeInfo, Level, ZvStore};

fn rows_json(
    rows: &AttributeRows,
    info: Option<&AttributeInfo>,
    which: impl Iterator<Item = usize>,
) -> Result<Vec<Value>> {
    let dict = info.and_then(|i| i.dictionary.as_ref());
    let mut out = Vec::new();
    match dict {
        Some(d) => {
            let decoded = d.decode_values(rows).map_err(|source| Error::Blob {
                key: "attribute".into(),
                source,
            })?;
            for r in which {
                out.push(decoded.get(r).cloned().flatten().unwrap_or(Value::Null));
            }
        }
        None => {
            for r in which {
                out.push(rows.row_json(r).unwrap_or(Value::Null));
            }
        }
    }
    Ok(out)
}

fn attr_doc(info: &AttributeInfo, values: Vec<Value>) -> Value {
    let dtype = if info.dictionary.is_some() {
        "string"
    } else {
        info.data_type.name()
    };
    let mut o = json!({"dtype": dtype, "values": values});
    if let Some(c) = &info.channel_names {
        o["channel_names"] = json!(c);
    }
    o
}

/// The "zv-geometry/1" document of level 0 of `store`.
pub fn export_geometry(store: &ZvStore) -> Result<Value> {
    let root = store.root();
    let level = store.level(0)?;
    let geometry = store.geometry();
    let mut doc = Map::new();
    doc.insert("format".into(), json!(crate::document::GEOMETRY_FORMAT));
    doc.insert("geometry".into(), json!(geometry.name()));
    doc.insert(
        "axes".into(),
        Value::Array(
            root.axes
                .iter()
                .map(crate::metadata::Axis::to_json)
                .collect(),
        ),
    );
    doc.insert("chunk_shape".into(), json!(root.chunk_shape));
    if let Some(b) = &root.base_bin_shape {
        doc.insert("bin_shape".into(), json!(b));
    }
    doc.insert("bounds".into(), json!(root.bounds));
    doc.insert("vertex_dtype".into(), json!(level.vertex_type().name()));
    if let Some(c) = &root.crs {
        doc.insert("crs".into(), c.clone());
    }
    let keys = level.chunk_keys()?;
    let mut chunks = Vec::new();
    let mut offsets = HashMap::new();
    let mut total = 0u64;
    for k in &keys {
        let c = level.chunk(k)?.ok_or_else(|| Error::Missing {
            key: format!("0/vertices/{k}/zarr.json"),
            what: "vertices".into(),
        })?;
        offsets.insert(k.clone(), total);
        total += c.vertices.len() as u64;
        chunks.push(c);
    }
    let infos: Vec<AttributeInfo> = level
        .vertex_attribute_names()?
        .iter()
        .map(|n| level.vertex_attribute_info(n))
        .collect::<Result<_>>()?;
    let mut vattrs: Vec<Vec<Option<AttributeRows>>> = Vec::new();
    for info in &infos {
        let mut per_chunk = Vec::new();
        for c in &chunks {
            per_chunk.push(level.vertex_attribute(info, &c.key, c.vertices.len() as u64)?);
        }
        vattrs.push(per_chunk);
    }
    let index = level.object_index()?;
    let chunk_pos: HashMap<&ChunkKey, usize> =
        keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
    if let Some(index) = &index {
        index.check_fragments("0/object_index", |c| {
            chunk_pos
                .get(&ChunkKey(c.to_vec()))
                .map(|&ci| chunks[ci].fragments.len() as u64)
        })?;
    }

    if geometry.is_sequential() {
        let index = index.ok_or_else(|| Error::Missing {
            key: "0/object_index/zarr.json".into(),
            what: "object index of the polylines".into(),
        })?;
        let mut polylines = Vec::new();
        let mut per_attr: Vec<Vec<Value>> = vec![Vec::new(); infos.len()];
        for m in &index.manifests {
            let mut pl = Vec::new();
            let mut pa: Vec<Vec<Value>> = vec![Vec::new(); infos.len()];
            for (coords, f) in m.refs() {
                let key = ChunkKey(coords.to_vec());
                let ci = *chunk_pos.get(&key).ok_or_else(|| {
                    Error::inconsistent("0/object_index", format!("chunk {key} has no vertices"))
                })?;
                let frag = chunks[ci].fragments.get(f as usize).ok_or_else(|| {
                    Error::inconsistent("0/object_index", format!("fragment {f} of chunk {key}"))
                })?;
                for r in frag.iter() {
                    pl.push(json!(chunks[ci]
                        .vertices
                        .row(r as usize)
                        .unwrap_or_default()));
                }
                for (ai, info) in infos.iter().enumerate() {
                    if let Some(rows) = &vattrs[ai][ci] {
                        pa[ai].extend(rows_json(
                            rows,
                            Some(info),
                            frag.iter().map(|r| r as usize),
                        )?);
                    }
                }
            }
            polylines.push(Value::Array(pl));
            for (ai, v) in pa.into_iter().enumerate() {
                per_attr[ai].push(Value::Array(v));
            }
        }
        doc.insert("polylines".into(), Value::Array(polylines));
        let mut va = Map::new();
        for (info, values) in infos.iter().zip(per_attr) {
            va.insert(info.name.clone(), attr_doc(info, values));
        }
        doc.insert("vertex_attributes".into(), Value::Object(va));
        object_level_attributes(&level, &mut doc, &chunks, &chunk_pos, index.num_objects)?;
        return Ok(Value::Object(doc));
    }

    let mut vertices = Vec::with_capacity(total as usize);
    for c in &chunks {
        vertices.extend(c.vertices.rows().into_iter().map(|r| json!(r)));
    }
    doc.insert("vertices".into(), Value::Array(vertices));
    let mut va = Map::new();
    for (ai, info) in infos.iter().enumerate() {
        let mut values = Vec::new();
        for (ci, c) in chunks.iter().enumerate() {
            if let Some(rows) = &vattrs[ai][ci] {
                values.extend(rows_json(rows, Some(info), 0..c.vertices.len())?);
            }
        }
        va.insert(info.name.clone(), attr_doc(info, values));
    }
    doc.insert("vertex_attributes".into(), Value::Object(va));
    if let Some(index) = &index {
        let mut owner = vec![None; total as usize];
        for (oid, m) in index.manifests.iter().enumerate() {
            for (coords, f) in m.refs() {
                let key = ChunkKey(coords.to_vec());
                let Some(&ci) = chunk_pos.get(&key) else {
                    continue;
                };
                let Some(frag) = chunks[ci].fragments.get(f as usize) else {
                    continue;
                };
                for r in frag.iter() {
                    let g = (offsets[&key] + r) as usize;
                    if let Some(slot) = owner.get_mut(g) {
                        slot.get_or_insert(oid as u64);
                    }
                }
            }
        }
        doc.insert(
            "object_ids".into(),
            json!(owner.iter().map(|o| o.unwrap_or(0)).collect::<Vec<_>>()),
        );
    }
    if geometry.has_explicit_links() {
        let (links, link_attrs) = level_links(&level, &geometry, &chunks, &offsets)?;
        let key = if geometry == Geometry::Mesh {
            "faces"
        } else {
            "edges"
        };
        doc.insert(key.into(), json!(links));
        let mut la = Map::new();
        for (name, (info, values)) in link_attrs {
            la.insert(name, attr_doc(&info, values));
        }
        doc.insert("link_attributes".into(), Value::Object(la));
    }
    if let Some(index) = &index {
        object_level_attributes(&level, &mut doc, &chunks, &chunk_pos, index.num_objects)?;
    }
    Ok(Value::Object(doc))
}

type LinkAttrs = BTreeMap<String, (AttributeInfo, Vec<Value>)>;

/// The level's links in global vertex indices (zv's reading) with their attribute values.
/// Skeletons give one `[child, parent]` per vertex that has a parent, in child order, with the
/// attribute values of its stored link (null for implicit parents).
fn level_links(
    level: &Level,
    geometry: &Geometry,
    chunks: &[crate::reader::Chunk],
    offsets: &HashMap<ChunkKey, u64>,
) -> Result<(Vec<Vec<u64>>, LinkAttrs)> {
    let (width, _, _) = level.links_info(0)?;
    let skeleton = *geometry == Geometry::Skeleton;
    let names = level.link_attribute_names()?;
    let infos: Vec<AttributeInfo> = names
        .iter()
        .map(|n| level.link_attribute_info(n, 0))
        .collect::<Result<_>>()?;
    let mut links = Vec::new();
    // per attribute, the values of the stored links in order (intra chunk by chunk, then CCL)
    let mut values: Vec<Vec<Value>> = vec![Vec::new(); infos.len()];
    // skeletons: child → (parent, ordinal of its stored link)
    let mut explicit_parent: HashMap<u64, (u64, usize)> = HashMap::new();
    let mut ordinal = 0usize;
    for c in chunks {
        let off = offsets[&c.key];
        let Some(rows) = level.links(&c.key, width, c.vertices.len() as u64)? else {
            continue;
        };
        for (ai, info) in infos.iter().enumerate() {
            match level.link_attribute(info, 0, &c.key, rows.len() as u64)? {
                Some(a) => values[ai].extend(rows_json(&a, Some(info), 0..rows.len())?),
                None => values[ai].extend(std::iter::repeat_n(Value::Null, rows.len())),
            }
        }
        if skeleton {
            for (ch, p, lr) in level.skeleton_parents(&c.key, &c.fragments, &rows)? {
                explicit_parent.insert(off + ch, (off + p, ordinal + lr as usize));
            }
        } else {
            for row in rows.rows() {
                links.push(row.iter().map(|&r| off + r as u64).collect());
            }
        }
        ordinal += rows.len();
    }
    let parent_first = skeleton && level.skeleton_ccl_parent_first()?;
    if let Some(ccl) = level.cross_chunk_links(0)? {
        let l = &ccl.links;
        for (ai, info) in infos.iter().enumerate() {
            match level.cross_chunk_link_attribute(&info.name, 0)? {
                Some(a) => values[ai].extend(rows_json(&a, Some(info), 0..l.len())?),
                None => values[ai].extend(std::iter::repeat_n(Value::Null, l.len())),
            }
        }
        for r in 0..l.len() {
            let mut g = Vec::new();
            for e in 0..l.link_width() {
                let Some((k, row)) = l.endpoint(r, e) else {
                    break;
                };
                let off = offsets.get(&ChunkKey(k.to_vec())).ok_or_else(|| {
                    Error::inconsistent(
                        "0/cross_chunk_links/0/data",
                        format!("record {r} names chunk {}", ChunkKey(k.to_vec())),
                    )
                })?;
                g.push(off + row);
            }
            if skeleton {
                if let [a, b] = g.as_slice() {
                    let (c, p) = if parent_first { (*b, *a) } else { (*a, *b) };
                    explicit_parent.insert(c, (p, ordinal + r));
                }
            } else {
                links.push(g);
            }
        }
    }
    if skeleton {
        // implicit parents inside each fragment, overridden by the stored links
        let mut parent: BTreeMap<u64, (u64, Option<usize>)> = BTreeMap::new();
        for c in chunks {
            let off = offsets[&c.key];
            for f in c.fragments.iter() {
                let mut prev = None;
                for r in f.iter() {
                    if let Some(p) = prev {
                        parent.insert(off + r, (off + p, None));
                    }
                    prev = Some(r);
                }
            }
        }
        for (c, (p, o)) in explicit_parent {
            parent.insert(c, (p, Some(o)));
        }
        links = parent.iter().map(|(c, (p, _))| vec![*c, *p]).collect();
        for v in &mut values {
            *v = parent
                .values()
                .map(|(_, o)| o.and_then(|o| v.get(o).cloned()).unwrap_or(Value::Null))
                .collect();
        }
    }
    let mut out = BTreeMap::new();
    for (info, v) in infos.into_iter().zip(values) {
        out.insert(info.name.clone(), (info, v));
    }
    Ok((links, out))
}

fn object_level_attributes(
    level: &Level,
    doc: &mut Map<String, Value>,
    chunks: &[crate::reader::Chunk],
    chunk_pos: &HashMap<&ChunkKey, usize>,
    num_objects: u64,
) -> Result<()> {
    doc.insert("num_objects".into(), json!(num_objects));
    let mut oa = Map::new();
    for (name, a) in level.object_attributes()? {
        let info = AttributeInfo {
            name: name.clone(),
            data_type: a.data_type,
            channel_names: a
                .attributes
                .get("channel_names")
                .and_then(Value::as_array)
                .map(|l| {
                    l.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                }),
            dictionary: a.dictionary.clone(),
            attributes: a.attributes.clone(),
        };
        let mut values = rows_json(&a.values.rows, Some(&info), 0..a.values.rows.num_rows())?;
        if let Some(mask) = &a.present_mask {
            for (v, present) in values.iter_mut().zip(mask) {
                if !present {
                    *v = Value::Null;
                }
            }
        }
        oa.insert(name, attr_doc(&info, values));
    }
    doc.insert("object_attributes".into(), Value::Object(oa));
    // fragment attributes: each object's value, from its first fragment
    let names = level.fragment_attribute_names()?;
    if !names.is_empty() {
        let index = level.object_index()?;
        let mut fa = Map::new();
        for name in names {
            let info = level.fragment_attribute_info(&name)?;
            let mut values = vec![Value::Null; num_objects as usize];
            // each chunk's fragment attribute rows, read once
            let mut per_chunk: HashMap<usize, Option<AttributeRows>> = HashMap::new();
            if let Some(index) = &index {
                for (oid, m) in index.manifests.iter().enumerate() {
                    let Some((coords, f)) = m.refs().next() else {
                        continue;
                    };
                    let key = ChunkKey(coords.to_vec());
                    let Some(&ci) = chunk_pos.get(&key) else {
                        continue;
                    };
                    let rows = match per_chunk.get(&ci) {
                        Some(r) => r,
                        None => {
                            let nfrag = chunks[ci].fragments.len() as u64;
                            let r = level.fragment_attribute(&info, &key, nfrag)?;
                            per_chunk.entry(ci).or_insert(r)
                        }
                    };
                    if let (Some(a), Some(slot)) = (rows, values.get_mut(oid)) {
                        *slot = rows_json(a, Some(&info), std::iter::once(f as usize))?
                            .pop()
                            .unwrap_or(Value::Null);
                    }
                }
            }
            fa.insert(name, attr_doc(&info, values));
        }
        doc.insert("fragment_attributes".into(), Value::Object(fa));
    }
    if let Some(groups) = level.groups()? {
        let mut g = Map::new();
        for (gid, members) in groups.members.iter().enumerate() {
            g.insert(gid.to_string(), json!(members));
        }
        doc.insert("groups".into(), Value::Object(g));
    }
    let mut ga = Map::new();
    for (name, a) in level.group_attributes()? {
        let info = AttributeInfo {
            name: name.clone(),
            data_type: a.data_type,
            channel_names: None,
            dictionary: a.dictionary.clone(),
            attributes: a.attributes.clone(),
        };
        ga.insert(
            name,
            attr_doc(
                &info,
                rows_json(&a.values.rows, Some(&info), 0..a.values.rows.num_rows())?,
            ),
        );
    }
    doc.insert("group_attributes".into(), Value::Object(ga));
    Ok(())
}
