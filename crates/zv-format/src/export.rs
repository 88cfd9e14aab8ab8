//! Exporting a store's level 0 as a "zv-geometry/1" document (`zv export`), the inverse of
//! [`crate::import::write_document`] for everything the format holds.
//!
//! Vertices come in the level's order (chunks in key order, rows in order); polylines in
//! object order, each in manifest order. Links use zv's reading (skeleton parents per
//! fragment, as [`crate::reader::Level::object`] reads them). Categorical attributes are
//! exported as strings; missing object-attribute rows (`present_mask` 0) as `null`. The level
//! is read once, through the reader's level scan. [`write_geometry`] writes the document
//! (`zv export`'s JSON) with its bulky arrays, the vertices, the links and the polylines,
//! written from the level's columns instead of JSON values (a 1M-node, 3M-edge graph peaked
//! at 1.44 GB as a document, 0.50 GB written this way). The streaming readers give the same
//! values in bounded memory: [`points`] the vertices chunk by chunk, [`links`] the vertices
//! and links of a mesh, graph or skeleton chunk by chunk, [`polylines`] the polylines a
//! batch of objects at a time.

pub mod links;
pub mod points;
pub mod polylines;

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use serde_json::{json, Map, Value};
use zv_core::data_type::DataType;

use crate::blob::join;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::layout::attributes::AttributeRows;
use crate::metadata::ChunkKey;
use crate::names;
use crate::reader::level_scan::LevelScan;
use crate::reader::links::Endpoints;
use crate::reader::skeleton::fragment_parents;
use crate::reader::{AttributeInfo, DenseAttribute, Level, ObjectIndex, ZvStore};

/// The values of rows `which` (categorical values decoded to strings).
fn rows_json(
    rows: &AttributeRows,
    info: &AttributeInfo,
    which: impl Iterator<Item = usize>,
) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    match &info.dictionary {
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

/// Every row's value, or `n` nulls without rows.
fn values_or_nulls(
    rows: Option<AttributeRows>,
    info: &AttributeInfo,
    n: usize,
) -> Result<Vec<Value>> {
    match rows {
        Some(a) => rows_json(&a, info, 0..n),
        None => Ok(vec![Value::Null; n]),
    }
}

/// A float link attribute row whose every value is NaN is a missing value, exported as
/// `null` (`docs/format-decisions.md`, "Missing link attribute values"); import stores a
/// `null` row as NaN, so export → import → export is stable.
fn missing_as_null(v: &mut Value) {
    let nan = |x: &Value| x.as_str() == Some("NaN");
    let missing = match &*v {
        Value::Array(cells) => !cells.is_empty() && cells.iter().all(nan),
        other => nan(other),
    };
    if missing {
        *v = Value::Null;
    }
}

/// An attribute of the document: its dtype (`string` for categorical ones), values and
/// channel names.
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

/// The document's fields that come from the metadata: format, geometry, axes, chunk and
/// bin shapes, bounds, vertex type, crs.
fn header(store: &ZvStore, level: &Level) -> Map<String, Value> {
    let root = store.root();
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
    doc
}

/// The document of level 0 of `store` without its vertices, polylines and links: the
/// metadata fields and, when the level has an object index, `num_objects`, the object,
/// fragment and group attributes and the groups, as [`export_geometry`] gives them. Only
/// the chunks that hold an object's first fragment are read (for fragment attributes).
/// [`crate::migrate`] adds the vertices chunk by chunk ([`points::PointStream`]).
pub fn export_without_vertices(store: &ZvStore) -> Result<Value> {
    level_without_vertices(store, &store.level(0)?)
}

/// [`export_without_vertices`] of any level of `store`.
pub(crate) fn level_without_vertices(store: &ZvStore, level: &Level) -> Result<Value> {
    let mut doc = header(store, level);
    if let Some(index) = level.object_index()? {
        let fragments = |k: &ChunkKey| Ok(level.chunk(k)?.map(|c| c.fragments.len() as u64));
        object_level_attributes(level, &mut doc, &fragments, &index)?;
    }
    Ok(Value::Object(doc))
}

/// The "zv-geometry/1" document of level 0 of `store`.
pub fn export_geometry(store: &ZvStore) -> Result<Value> {
    let (mut doc, bulk) = document_parts(store)?;
    if let Some(vertices) = bulk.vertices {
        let rows = vertices.iter().map(|r| json!(r)).collect();
        doc.insert(VERTICES.into(), Value::Array(rows));
    }
    if let Some((key, links)) = bulk.links {
        doc.insert(key.into(), json!(links));
    }
    if let Some((ndim, polylines)) = bulk.polylines {
        let rows = |pl: &Vec<f64>| pl.chunks(ndim.max(1)).map(|r| json!(r)).collect();
        let lines = polylines.iter().map(|pl| Value::Array(rows(pl))).collect();
        doc.insert(POLYLINES.into(), Value::Array(lines));
    }
    Ok(Value::Object(doc))
}

/// [`export_geometry`] written to `out` as compact JSON: the bytes `serde_json::to_writer`
/// writes for its document, with the vertices, the links and the polylines written from the
/// level's own columns as they go rather than first made into JSON values (a value per number
/// and per row), which made most of the memory of a large export.
pub fn write_geometry(store: &ZvStore, out: &mut dyn Write) -> Result<()> {
    let (doc, bulk) = document_parts(store)?;
    let io = |e: std::io::Error| Error::Io {
        path: "<export output>".into(),
        source: e,
    };
    // an output error inside serde_json stays the io::Error it was (a closed pipe is one)
    let json = |e: serde_json::Error| io(std::io::Error::from(e));
    out.write_all(b"{").map_err(io)?;
    // the document's keys in its own order; the bulky ones stand there as placeholders
    for (i, (key, value)) in doc.iter().enumerate() {
        if i > 0 {
            out.write_all(b",").map_err(io)?;
        }
        serde_json::to_writer(&mut *out, key).map_err(json)?;
        out.write_all(b":").map_err(io)?;
        match (&bulk.vertices, &bulk.links, &bulk.polylines) {
            (Some(vertices), _, _) if key == VERTICES => {
                write_rows(out, vertices.iter(), |out, r| serde_json::to_writer(out, r))
                    .map_err(json)?;
            }
            (_, Some((links_key, links)), _) if key.as_str() == *links_key => {
                write_rows(out, links.iter(), |out, l| serde_json::to_writer(out, l))
                    .map_err(json)?;
            }
            (_, _, Some((ndim, polylines))) if key == POLYLINES => {
                write_rows(out, polylines.iter(), |out, pl| {
                    write_rows(out, pl.chunks((*ndim).max(1)), |out, r| {
                        serde_json::to_writer(out, r)
                    })
                })
                .map_err(json)?;
            }
            _ => serde_json::to_writer(&mut *out, value).map_err(json)?,
        }
    }
    out.write_all(b"}").map_err(io)
}

/// Writes `rows` as a JSON array, each by `write`.
fn write_rows<T>(
    out: &mut dyn Write,
    rows: impl Iterator<Item = T>,
    write: impl Fn(&mut dyn Write, T) -> serde_json::Result<()>,
) -> serde_json::Result<()> {
    out.write_all(b"[").map_err(serde_json::Error::io)?;
    for (i, r) in rows.enumerate() {
        if i > 0 {
            out.write_all(b",").map_err(serde_json::Error::io)?;
        }
        write(&mut *out, r)?;
    }
    out.write_all(b"]").map_err(serde_json::Error::io)
}

/// The key of the vertices.
const VERTICES: &str = "vertices";
/// The key of the polylines.
const POLYLINES: &str = "polylines";

/// The bulky arrays of the document as the level gives them: the vertices, the links (with
/// their key, `edges` or `faces`) and the polylines.
#[derive(Default)]
struct Bulk {
    vertices: Option<crate::reader::Positions>,
    links: Option<(&'static str, Vec<Vec<u64>>)>,
    /// Each polyline's positions, flat, and the values a position has.
    polylines: Option<(usize, Vec<Vec<f64>>)>,
}

/// The document of [`export_geometry`] but for its bulky arrays, which stand in it as
/// `null` placeholders where they go, and the arrays themselves.
fn document_parts(store: &ZvStore) -> Result<(Map<String, Value>, Bulk)> {
    let level = store.level(0)?;
    let geometry = store.geometry();
    let mut doc = header(store, &level);
    let mut bulk = Bulk::default();
    let scan = level.scan(geometry.has_explicit_links())?;
    let index = level.object_index()?;
    let okey = level.p(&[names::OBJECT_INDEX]);
    if let Some(index) = &index {
        index.check_fragments(&okey, |c| scan.fragments_of(c))?;
    }
    if geometry.is_sequential() {
        let index = index.ok_or_else(|| Error::Missing {
            key: join(&[&okey, "zarr.json"]),
            what: "object index of the polylines".into(),
        })?;
        let ndim = store.root().ndim();
        bulk.polylines = Some((ndim, polylines(&scan, &index, &okey, ndim, &mut doc)?));
        object_level_attributes(&level, &mut doc, &scan_fragments(&scan), &index)?;
        return Ok((doc, bulk));
    }
    doc.insert(VERTICES.into(), Value::Null);
    bulk.vertices = Some(scan.positions());
    let mut va = Map::new();
    for (ai, info) in scan.infos.iter().enumerate() {
        let mut values = Vec::new();
        for c in &scan.chunks {
            if let Some(rows) = &c.attributes[ai] {
                values.extend(rows_json(rows, info, 0..c.rows() as usize)?);
            }
        }
        va.insert(info.name.clone(), attr_doc(info, values));
    }
    doc.insert("vertex_attributes".into(), Value::Object(va));
    if let Some(index) = &index {
        doc.insert("object_ids".into(), object_ids(&scan, index, &okey)?);
    }
    if geometry.has_explicit_links() {
        let (links, link_attrs) = level_links(&level, &scan)?;
        let key = if geometry == Geometry::Mesh {
            "faces"
        } else {
            "edges"
        };
        doc.insert(key.into(), Value::Null);
        bulk.links = Some((key, links));
        let mut la = Map::new();
        for (name, (info, values)) in link_attrs {
            la.insert(name, attr_doc(&info, values));
        }
        doc.insert("link_attributes".into(), Value::Object(la));
    }
    if let Some(index) = &index {
        object_level_attributes(&level, &mut doc, &scan_fragments(&scan), index)?;
    }
    Ok((doc, bulk))
}

/// Adds the `polylines` (each object's vertices in manifest order) and their vertex
/// attributes.
fn polylines(
    scan: &LevelScan,
    index: &ObjectIndex,
    okey: &str,
    ndim: usize,
    doc: &mut Map<String, Value>,
) -> Result<Vec<Vec<f64>>> {
    let mut polylines = Vec::new();
    let mut per_attr: Vec<Vec<Value>> = vec![Vec::new(); scan.infos.len()];
    for (id, m) in index.manifests.iter().enumerate() {
        // the polyline's positions, flat
        let mut pl = Vec::new();
        let mut pa: Vec<Vec<Value>> = vec![Vec::new(); scan.infos.len()];
        for (c, _, frag) in scan.fragments(m, id as u64, okey)? {
            for r in frag.iter() {
                // the fragments were checked against the chunks' rows
                let row = c.chunk.vertices.row(r as usize).filter(|v| v.len() == ndim);
                let row = row.ok_or_else(|| {
                    Error::inconsistent(c.key().to_string(), format!("no row {r} of {ndim} values"))
                })?;
                pl.extend(row);
            }
            for ((info, rows), values) in scan.infos.iter().zip(&c.attributes).zip(&mut pa) {
                if let Some(rows) = rows {
                    values.extend(rows_json(rows, info, frag.iter().map(|r| r as usize))?);
                }
            }
        }
        polylines.push(pl);
        for (values, v) in per_attr.iter_mut().zip(pa) {
            values.push(Value::Array(v));
        }
    }
    doc.insert(POLYLINES.into(), Value::Null);
    let mut va = Map::new();
    for (info, values) in scan.infos.iter().zip(per_attr) {
        va.insert(info.name.clone(), attr_doc(info, values));
    }
    doc.insert("vertex_attributes".into(), Value::Object(va));
    Ok(polylines)
}

/// Each vertex's object: the first object whose manifest names it (0 for none).
fn object_ids(scan: &LevelScan, index: &ObjectIndex, okey: &str) -> Result<Value> {
    let mut owner = vec![None; scan.total() as usize];
    for (oid, m) in index.manifests.iter().enumerate() {
        for (c, _, frag) in scan.fragments(m, oid as u64, okey)? {
            for r in frag.iter() {
                if let Some(slot) = owner.get_mut((c.offset + r) as usize) {
                    slot.get_or_insert(oid as u64);
                }
            }
        }
    }
    Ok(json!(owner
        .iter()
        .map(|o| o.unwrap_or(0))
        .collect::<Vec<_>>()))
}

type LinkAttrs = BTreeMap<String, (AttributeInfo, Vec<Value>)>;

/// The level's links in global vertex indices (zv's reading) with their attribute values.
/// Skeletons give one `[child, parent]` per vertex that has a parent, in child order, with the
/// attribute values of its stored link (null for implicit parents).
fn level_links(level: &Level, scan: &LevelScan) -> Result<(Vec<Vec<u64>>, LinkAttrs)> {
    let infos: Vec<AttributeInfo> = level
        .link_attribute_names()?
        .iter()
        .map(|n| level.link_attribute_info(n, 0))
        .collect::<Result<_>>()?;
    let source = level.link_source()?;
    let links = source.number(&scan.chunks, |k, r| scan.global(k, r), Endpoints::All)?;
    // per attribute, the values of the stored links in order (intra chunk by chunk, then CCL)
    let mut values: Vec<Vec<Value>> = vec![Vec::new(); infos.len()];
    for c in &scan.chunks {
        let Some(rows) = &c.links else { continue };
        for (info, v) in infos.iter().zip(&mut values) {
            let a = level.link_attribute(info, 0, c.key(), rows.len() as u64)?;
            v.extend(values_or_nulls(a, info, rows.len())?);
        }
    }
    if let Some(records) = source.records() {
        for (info, v) in infos.iter().zip(&mut values) {
            let a = level.cross_chunk_link_attribute(&info.name, 0)?;
            v.extend(values_or_nulls(a, info, records)?);
        }
    }
    for (info, v) in infos.iter().zip(&mut values) {
        let float = matches!(
            info.data_type,
            DataType::Float16 | DataType::Float32 | DataType::Float64
        );
        if info.dictionary.is_none() && float {
            v.iter_mut().for_each(missing_as_null);
        }
    }
    let links = if *level.geometry() == Geometry::Skeleton {
        // implicit parents inside each fragment, overridden by the stored links
        let fragments = scan.chunks.iter().flat_map(|c| {
            c.chunk
                .fragments
                .iter()
                .map(move |f| f.iter().map(|r| c.offset + r).collect::<Vec<u64>>())
        });
        let parents = fragment_parents(scan.total(), fragments, &links);
        for v in &mut values {
            *v = parents
                .iter()
                .map(|(_, _, o)| o.and_then(|o| v.get(o).cloned()).unwrap_or(Value::Null))
                .collect();
        }
        parents.iter().map(|&(c, p, _)| vec![c, p]).collect()
    } else {
        links.into_iter().map(|l| l.ends).collect()
    };
    let out = infos
        .into_iter()
        .zip(values)
        .map(|(info, v)| (info.name.clone(), (info, v)))
        .collect();
    Ok((links, out))
}

/// The values of a ZV 0.9 object attribute, stored by row (row `r` is object `ids[r]`),
/// laid out by id over `num_objects` ids: ids without a row are `null` (absent).
fn by_id(values: Vec<Value>, ids: &[u64], num_objects: u64, name: &str) -> Result<Vec<Value>> {
    if values.len() != ids.len() {
        return Err(Error::inconsistent(
            format!("object_attributes/{name}"),
            format!("{} rows for {} stored objects", values.len(), ids.len()),
        ));
    }
    let mut out = vec![Value::Null; num_objects as usize];
    for (v, &id) in values.into_iter().zip(ids) {
        if let Some(slot) = out.get_mut(id as usize) {
            *slot = v;
        }
    }
    Ok(out)
}

/// How a dense attribute is typed, as an [`AttributeInfo`] (with its `channel_names` when
/// `channels`).
fn dense_info(name: &str, a: &DenseAttribute, channels: bool) -> AttributeInfo {
    let channel_names = channels
        .then(|| a.attributes.get("channel_names").and_then(Value::as_array))
        .flatten()
        .map(|l| {
            l.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        });
    AttributeInfo {
        name: name.to_owned(),
        data_type: a.data_type,
        channel_names,
        dictionary: a.dictionary.clone(),
        level_delta: None,
        attributes: a.attributes.clone(),
    }
}

/// Adds `num_objects`, the object attributes, the fragment attributes (each object's value
/// from its first fragment), the groups and the group attributes.
fn object_level_attributes(
    level: &Level,
    doc: &mut Map<String, Value>,
    fragments: &FragmentCount<'_>,
    index: &ObjectIndex,
) -> Result<()> {
    doc.insert("num_objects".into(), json!(index.num_objects));
    let row_ids = level.object_row_ids(index)?;
    let mut oa = Map::new();
    for (name, a) in level.object_attributes()? {
        let info = dense_info(&name, &a, true);
        let mut values = rows_json(&a.values.rows, &info, 0..a.values.rows.num_rows())?;
        if let Some(mask) = &a.present_mask {
            for (v, present) in values.iter_mut().zip(mask) {
                if !present {
                    *v = Value::Null;
                }
            }
        }
        if let Some(ids) = &row_ids {
            values = by_id(values, ids, index.num_objects, &name)?;
        }
        oa.insert(name, attr_doc(&info, values));
    }
    doc.insert("object_attributes".into(), Value::Object(oa));
    let fragment_attributes = level.fragment_attribute_names()?;
    if !fragment_attributes.is_empty() {
        let mut fa = Map::new();
        for name in fragment_attributes {
            let info = level.fragment_attribute_info(&name)?;
            let values = fragment_attribute_values(level, fragments, index, &info)?;
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
        let info = dense_info(&name, &a, false);
        let values = rows_json(&a.values.rows, &info, 0..a.values.rows.num_rows())?;
        ga.insert(name, attr_doc(&info, values));
    }
    doc.insert("group_attributes".into(), Value::Object(ga));
    Ok(())
}

/// The number of fragments of a chunk (`None`: no such chunk).
type FragmentCount<'a> = dyn Fn(&ChunkKey) -> Result<Option<u64>> + 'a;

/// The fragment counts of a scanned level.
fn scan_fragments(scan: &LevelScan) -> impl Fn(&ChunkKey) -> Result<Option<u64>> + '_ {
    |k| Ok(scan.get(k).map(|c| c.chunk.fragments.len() as u64))
}

/// Each object's value of fragment attribute `info`: the row of its first fragment (null
/// for an empty object or a chunk without the attribute). `fragments` is asked once per
/// chunk.
fn fragment_attribute_values(
    level: &Level,
    fragments: &FragmentCount<'_>,
    index: &ObjectIndex,
    info: &AttributeInfo,
) -> Result<Vec<Value>> {
    let mut values = vec![Value::Null; index.num_objects as usize];
    // each chunk's fragment attribute rows, read once
    let mut per_chunk: HashMap<ChunkKey, Option<AttributeRows>> = HashMap::new();
    for (oid, m) in index.manifests.iter().enumerate() {
        let Some((coords, f)) = m.refs().next() else {
            continue;
        };
        let key = ChunkKey(coords.to_vec());
        let rows = match per_chunk.get(&key) {
            Some(r) => r,
            None => {
                let r = match fragments(&key)? {
                    Some(nfrag) => level.fragment_attribute(info, &key, nfrag)?,
                    None => None,
                };
                per_chunk.entry(key).or_insert(r)
            }
        };
        if let (Some(a), Some(slot)) = (rows, values.get_mut(oid)) {
            *slot = rows_json(a, info, std::iter::once(f as usize))?
                .pop()
                .unwrap_or(Value::Null);
        }
    }
    Ok(values)
}
