//! Writing a whole "zv-geometry/1" [`GeometryDocument`] into a new store through the
//! streaming [`ZvWriter`] (the mirror of [`crate::export`]).
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use zv_format::document::GeometryDocument;
//! let doc = GeometryDocument::from_value(&serde_json::json!({
//!     "format": "zv-geometry/1", "geometry": "point_cloud", "chunk_shape": [10, 10],
//!     "vertices": [[1, 1], [12, 3]]}))?;
//! let store = Arc::new(zv_store_mem::MemoryStore::new());
//! let summary = zv_format::import::write_document(store, &doc, 1000)?;
//! assert_eq!((summary.vertices, summary.chunks), (2, 2));
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::store::Store;

use crate::document::{Attribute, AttributeValues, GeometryDocument};
use crate::error::{AttributeKind, Error, Result};
use crate::geometry::Geometry;
use crate::writer::{
    check_id_count, FormatVersion, WriteSummary, WriterOptions, ZvWriter, DEFAULT_MEMORY_BUDGET,
};

/// Checks that every vertex attribute has `n` rows.
fn check_vertex_attributes(doc: &GeometryDocument, n: usize) -> Result<()> {
    for (name, a) in &doc.vertex_attributes {
        if a.values.len() != n {
            return Err(Error::attribute(
                AttributeKind::Vertex,
                name,
                format!("has {} values for {n} vertices", a.values.len()),
            ));
        }
    }
    Ok(())
}

/// Writes a whole geometry document into `store`, `batch` rows (or polylines) at a time
/// through the streaming writer. Everything is validated before the first write.
pub fn write_document(
    store: Arc<dyn Store>,
    doc: &GeometryDocument,
    batch: usize,
) -> Result<WriteSummary> {
    write_document_with_budget(store, doc, batch, DEFAULT_MEMORY_BUDGET)
}

/// [`write_document`] with the writer's [`memory_budget`](WriterOptions::memory_budget): the
/// bytes of vertex records held in memory before they are spilled to temporary files. The
/// store written is the same whatever the budget.
pub fn write_document_with_budget(
    store: Arc<dyn Store>,
    doc: &GeometryDocument,
    batch: usize,
    memory_budget: u64,
) -> Result<WriteSummary> {
    write_document_as(
        store,
        doc,
        batch,
        memory_budget,
        (FormatVersion::default(), None),
    )
}

/// [`write_document`] in the layout `version` (the default budget, unsharded).
pub fn write_document_in(
    store: Arc<dyn Store>,
    doc: &GeometryDocument,
    batch: usize,
    version: FormatVersion,
) -> Result<WriteSummary> {
    write_document_as(store, doc, batch, DEFAULT_MEMORY_BUDGET, (version, None))
}

/// [`write_document_with_budget`] in the layout `format_version`, its chunk-grid arrays in
/// shards of `shard_shape` chunks when given (ZV 0.9 only, [`WriterOptions::shard_shape`]).
pub fn write_document_as(
    store: Arc<dyn Store>,
    doc: &GeometryDocument,
    batch: usize,
    memory_budget: u64,
    (format_version, shard_shape): (FormatVersion, Option<Vec<u64>>),
) -> Result<WriteSummary> {
    let mut opts = WriterOptions::from_document(doc)?;
    opts.memory_budget = memory_budget;
    opts.format_version = format_version;
    opts.shard_shape = shard_shape;
    let mut w = ZvWriter::create(store, opts)?;
    add_geometry(&mut w, doc, batch)?;
    add_objects(&mut w, doc);
    w.finish()
}

/// Gives the writer the document's vertices or polylines, `batch` at a time, and its edges
/// or faces.
pub(crate) fn add_geometry(w: &mut ZvWriter, doc: &GeometryDocument, batch: usize) -> Result<()> {
    let batch = batch.max(1);
    if doc.geometry.is_sequential() {
        add_polylines(w, doc, batch)
    } else {
        add_vertices(w, doc, batch)?;
        add_links(w, doc)
    }
}

/// Gives the writer the document's `num_objects`, object and fragment attributes, groups
/// and group attributes.
pub(crate) fn add_objects(w: &mut ZvWriter, doc: &GeometryDocument) {
    if let Some(n) = doc.num_objects {
        w.set_num_objects(n);
    }
    w.set_object_attributes(doc.object_attributes.clone());
    w.set_fragment_attributes(doc.fragment_attributes.clone());
    w.set_groups(doc.groups.clone(), doc.group_attributes.clone());
}

/// The polylines of a polyline document, `batch` polylines at a time.
fn add_polylines(w: &mut ZvWriter, doc: &GeometryDocument, batch: usize) -> Result<()> {
    if !doc.vertices.is_empty() {
        return Err(Error::InvalidInput(format!(
            "{} geometry takes `polylines`, not `vertices`",
            doc.geometry.name()
        )));
    }
    let mut start_vertex = 0usize;
    for chunk in doc.polylines.chunks(batch) {
        let n: usize = chunk.iter().map(Vec::len).sum();
        let attrs = slice_attributes(&doc.vertex_attributes, start_vertex, n)?;
        w.add_polylines(chunk, &attrs)?;
        start_vertex += n;
    }
    check_vertex_attributes(doc, doc.polylines.iter().map(Vec::len).sum())
}

/// The vertices of a document of vertex rows, `batch` rows at a time (one empty batch for
/// a document without vertices).
fn add_vertices(w: &mut ZvWriter, doc: &GeometryDocument, batch: usize) -> Result<()> {
    if !doc.polylines.is_empty() {
        return Err(Error::InvalidInput(format!(
            "{} geometry takes `vertices`, not `polylines`",
            doc.geometry.name()
        )));
    }
    let n = doc.vertices.len();
    check_vertex_attributes(doc, n)?;
    check_id_count(doc.object_ids.as_deref(), n)?;
    let mut start = 0;
    loop {
        let end = (start + batch).min(n);
        let attrs = slice_attributes(&doc.vertex_attributes, start, end - start)?;
        let ids = doc.object_ids.as_ref().map(|ids| &ids[start..end]);
        w.add_vertices(&doc.vertices[start..end], ids, &attrs)?;
        start = end;
        if start >= n {
            return Ok(());
        }
    }
}

/// The edges or faces of a document of vertex rows.
fn add_links(w: &mut ZvWriter, doc: &GeometryDocument) -> Result<()> {
    match doc.geometry {
        Geometry::Mesh => w.add_faces(&doc.faces, &doc.link_attributes),
        Geometry::Graph | Geometry::Skeleton => w.add_edges(&doc.edges, &doc.link_attributes),
        _ => {
            if !doc.edges.is_empty() || !doc.faces.is_empty() {
                return Err(Error::InvalidInput(
                    "point clouds have no edges or faces".into(),
                ));
            }
            if !doc.link_attributes.is_empty() {
                return Err(Error::InvalidInput(
                    "point clouds have no link attributes".into(),
                ));
            }
            Ok(())
        }
    }
}

/// Rows `start .. start + n` of every attribute.
fn slice_attributes(
    attrs: &BTreeMap<String, Attribute>,
    start: usize,
    n: usize,
) -> Result<BTreeMap<String, Attribute>> {
    let mut out = BTreeMap::new();
    for (name, a) in attrs {
        if a.values.len() < start + n {
            return Err(Error::attribute(
                AttributeKind::Vertex,
                name,
                format!("has {} values, fewer than the vertices", a.values.len()),
            ));
        }
        let values = match &a.values {
            AttributeValues::Numeric { rows, present } => AttributeValues::Numeric {
                rows: rows
                    .gather(start as u64..(start + n) as u64)
                    .map_err(|e| Error::attribute(AttributeKind::Vertex, name, e.to_string()))?,
                present: present.as_ref().map(|p| p[start..start + n].to_vec()),
            },
            AttributeValues::Categorical(v) => {
                AttributeValues::Categorical(v[start..start + n].to_vec())
            }
        };
        out.insert(
            name.clone(),
            Attribute {
                values,
                channel_names: a.channel_names.clone(),
            },
        );
    }
    Ok(out)
}
