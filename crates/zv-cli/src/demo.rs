//! `zv demo`: writes a small ZV store into a local folder from an embedded dataset, reads it
//! back and checks it.

use std::sync::Arc;

use serde_json::json;
use zv_format::document::GeometryDocument;
use zv_format::import::write_document;
use zv_format::reader::ZvStore;

use crate::CliResult;

/// Twelve helical streamlines through a 100 µm cube, with a per-vertex attribute, a per-object
/// attribute and two groups.
fn dataset() -> serde_json::Value {
    let mut polylines = Vec::new();
    let mut fa = Vec::new();
    let mut length = Vec::new();
    for s in 0..12 {
        let phase = s as f64 * 0.5;
        let mut pl = Vec::new();
        let mut f = Vec::new();
        let mut len = 0.0;
        for i in 0..60 {
            let t = i as f64 * 0.1 + phase;
            let p = [
                50.0 + 30.0 * t.cos(),
                50.0 + 30.0 * t.sin(),
                5.0 + 1.5 * i as f64,
            ];
            if let Some(prev) = pl.last() {
                let q: &[f64; 3] = prev;
                len +=
                    ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
            }
            pl.push(p);
            f.push(0.5 + 0.4 * (t * 3.0).sin());
        }
        polylines.push(pl);
        fa.push(f);
        length.push(len);
    }
    json!({
        "format": "zv-geometry/1", "geometry": "streamline",
        "axes": [{"name": "x", "type": "space", "unit": "micrometer"}, {"name": "y", "type": "space", "unit": "micrometer"},
                 {"name": "z", "type": "space", "unit": "micrometer"}],
        "chunk_shape": [25, 25, 25], "bin_shape": [12.5, 12.5, 12.5], "bounds": [[0, 0, 0], [100, 100, 100]],
        "polylines": polylines,
        "vertex_attributes": {"fa": {"dtype": "float32", "values": fa}},
        "object_attributes": {"length": {"dtype": "float32", "values": length}},
        "groups": {"0": [0, 1, 2, 3, 4, 5], "1": [6, 7, 8, 9, 10, 11]},
        "group_attributes": {"tract": {"dtype": "uint8", "values": [1, 2]}},
        "pyramid": null
    })
}

/// Writes the demo store into `dir`, reads it back and prints what it found (as JSON with
/// `json`).
pub(crate) fn run(dir: &str, json: bool) -> CliResult {
    let store = zv_core::plugin::open_store(dir)?;
    if !store
        .list_prefix(&zv_core::key::StorePrefix::root())?
        .is_empty()
    {
        return Err(format!("{dir} is not empty; choose a new folder").into());
    }
    let doc = GeometryDocument::from_value(&dataset())?;
    let summary = write_document(Arc::clone(&store), &doc, 4)?;
    let zv = ZvStore::open(store)?;
    let level = zv.level(0)?;
    let first = level.object(0)?;
    if first.vertices.len() != 60 || first.links.as_ref().map(Vec::len) != Some(59) {
        return Err("demo: streamline 0 did not read back whole".into());
    }
    let tract = level.group_objects(1)?;
    let hits = level.query_box_with(&[70.0, 40.0, 0.0], &[85.0, 60.0, 100.0], &["fa"])?;
    let first_length = first
        .attributes
        .get("length")
        .cloned()
        .flatten()
        .unwrap_or_default();
    if json {
        return crate::print_json(&json!({
            "store": dir,
            "streamlines": summary.objects,
            "vertices": summary.vertices,
            "chunks": summary.chunks,
            "cross_chunk_links": summary.cross_chunk_links,
            "streamline_0": {"vertices": first.vertices.len(), "length": first_length},
            "group_1_streamlines": tract.len(),
            "vertices_in_box": hits.positions.len(),
        }));
    }
    println!(
        "wrote {} streamlines ({} vertices, {} chunks, {} cross-chunk links) to {dir}\n\
         read back: streamline 0 has {} vertices and length {}; group 1 holds {} streamlines; \
         {} vertices lie in the box [70,85]x[40,60]x[0,100]\n\
         try: zv dump {dir} | head   or   zv export {dir}",
        summary.objects,
        summary.vertices,
        summary.chunks,
        summary.cross_chunk_links,
        first.vertices.len(),
        first_length,
        tract.len(),
        hits.positions.len(),
    );
    Ok(())
}
