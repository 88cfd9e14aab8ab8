//! The write → read round-trip check of "zv-geometry/1" documents.
//!
//! [`check_round_trip`] writes a document through the streaming writer in batches and compares
//! what the reader (and the exporter) give back: vertices bit-exact (after rounding to the
//! vertex dtype), links, vertex, link, object, fragment and group attributes, and groups.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::store::Store;
use zv_format::document::{attribute_json, Attribute, GeometryDocument};
use zv_format::{Geometry, ZvStore};

/// A vertex as JSON text of its coordinates' bit patterns.
fn bits(v: &Value) -> String {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| format!("{:016x}", x.as_f64().unwrap_or(f64::NAN).to_bits()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// The stored form of the document's coordinates (rounded to the vertex dtype), as JSON.
fn stored(doc: &GeometryDocument, p: &[f64]) -> Value {
    let dt = doc
        .vertex_dtype
        .unwrap_or(zv_core::data_type::DataType::Float32);
    json!(p
        .iter()
        .map(|&x| {
            let mut b = Vec::new();
            zv_format::layout::attributes::f64_to_le(dt, x, &mut b);
            zv_format::layout::attributes::le_to_f64(dt, &b)
        })
        .collect::<Vec<_>>())
}

fn attr_rows(attrs: &BTreeMap<String, Attribute>) -> BTreeMap<String, Vec<Value>> {
    attrs
        .iter()
        .map(|(k, a)| {
            (
                k.clone(),
                attribute_json(a, None)["values"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default(),
            )
        })
        .collect()
}

fn export_rows(doc: &Value, key: &str) -> BTreeMap<String, Vec<Value>> {
    doc[key]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, a)| {
            (
                k.clone(),
                a["values"].as_array().cloned().unwrap_or_default(),
            )
        })
        .collect()
}

/// Writes `doc` into `store` in the ZV 0.7 layout (which holds everything the strategy
/// generates: categorical and multi-channel attributes too) in batches of `batch` rows (or
/// polylines) and checks that reading it back gives the same content. Returns a description
/// of the first difference.
pub fn check_round_trip(
    doc_json: &Value,
    store: Arc<dyn Store>,
    batch: usize,
) -> Result<(), String> {
    let doc = GeometryDocument::from_value(doc_json).map_err(|e| format!("document: {e}"))?;
    let v07 = zv_format::writer::FormatVersion::V0_7;
    zv_format::import::write_document_in(store.clone(), &doc, batch, v07)
        .map_err(|e| format!("write: {e}"))?;
    let zs = ZvStore::open(store).map_err(|e| format!("open: {e}"))?;
    let out = zv_format::export::export_geometry(&zs).map_err(|e| format!("export: {e}"))?;
    let level = zs.level(0).map_err(|e| e.to_string())?;
    let vattrs_in = attr_rows(&doc.vertex_attributes);
    let vattrs_out = export_rows(&out, "vertex_attributes");
    let fail = |what: &str, a: &dyn std::fmt::Debug, b: &dyn std::fmt::Debug| {
        Err(format!("{what}: wrote {a:?}, read {b:?}"))
    };

    if doc.geometry.is_sequential() {
        // polylines keep their vertex order; per-vertex attributes follow
        let got = out["polylines"].as_array().cloned().unwrap_or_default();
        if got.len() != doc.polylines.len() {
            return fail("polyline count", &doc.polylines.len(), &got.len());
        }
        let mut offset = 0;
        for (i, pl) in doc.polylines.iter().enumerate() {
            let want: Vec<String> = pl.iter().map(|p| bits(&stored(&doc, p))).collect();
            let have: Vec<String> = got[i].as_array().into_iter().flatten().map(bits).collect();
            if want != have {
                return fail(&format!("polyline {i}"), &want, &have);
            }
            for (name, rows) in &vattrs_in {
                let want = &rows[offset..offset + pl.len()];
                let have = vattrs_out
                    .get(name)
                    .and_then(|v| v.get(i))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if want != have.as_slice() {
                    return fail(&format!("polyline {i} attribute {name}"), &want, &have);
                }
            }
            let obj = level.object(i as u64).map_err(|e| e.to_string())?;
            let n = pl.len() as u64;
            let links: Vec<Vec<u64>> = (1..n).map(|k| vec![k - 1, k]).collect();
            if obj.links.as_ref() != Some(&links) {
                return fail(&format!("polyline {i} links"), &links, &obj.links);
            }
            offset += pl.len();
        }
    } else {
        // vertices with their object and attributes, as a multiset
        let row_of =
            |p: &Value, o: Option<u64>, attrs: &BTreeMap<String, Vec<Value>>, i: usize| -> String {
                let a: Vec<String> = attrs
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.get(i).cloned().unwrap_or(Value::Null)))
                    .collect();
                format!("{}|{o:?}|{}", bits(p), a.join(";"))
            };
        let ids_in = doc.object_ids.clone();
        let mut want: Vec<String> = doc
            .vertices
            .iter()
            .enumerate()
            .map(|(i, p)| {
                row_of(
                    &stored(&doc, p),
                    ids_in.as_ref().map(|v| v[i]),
                    &vattrs_in,
                    i,
                )
            })
            .collect();
        let ids_out: Option<Vec<u64>> = out["object_ids"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).collect());
        let verts_out = out["vertices"].as_array().cloned().unwrap_or_default();
        let mut have: Vec<String> = verts_out
            .iter()
            .enumerate()
            .map(|(i, p)| row_of(p, ids_out.as_ref().map(|v| v[i]), &vattrs_out, i))
            .collect();
        want.sort();
        have.sort();
        if want != have {
            return fail("vertices", &want, &have);
        }
        // links as coordinates (+ attributes), as a multiset
        if doc.geometry.has_explicit_links() {
            let (links_in, key): (Vec<Vec<u64>>, &str) = if doc.geometry == Geometry::Mesh {
                (doc.faces.clone(), "faces")
            } else {
                (doc.edges.iter().map(|e| e.to_vec()).collect(), "edges")
            };
            let links_out: Vec<Vec<u64>> = out[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| {
                    l.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_u64)
                        .collect()
                })
                .collect();
            let lattrs_in = attr_rows(&doc.link_attributes);
            let lattrs_out = export_rows(&out, "link_attributes");
            let link_key = |l: &[u64],
                            pos: &dyn Fn(u64) -> String,
                            attrs: &BTreeMap<String, Vec<Value>>,
                            i: usize|
             -> String {
                let mut ends: Vec<String> = l.iter().map(|&v| pos(v)).collect();
                if doc.geometry == Geometry::Mesh {
                    let m = (0..ends.len())
                        .min_by(|&a, &b| ends[a].cmp(&ends[b]))
                        .unwrap_or(0);
                    ends.rotate_left(m);
                }
                let a: Vec<String> = attrs
                    .iter()
                    .map(|(k, v)| format!("{k}={}", v.get(i).cloned().unwrap_or(Value::Null)))
                    .collect();
                format!("{}|{}", ends.join(" "), a.join(";"))
            };
            let pos_in = |v: u64| bits(&stored(&doc, &doc.vertices[v as usize]));
            let pos_out = |v: u64| verts_out.get(v as usize).map(bits).unwrap_or_default();
            let mut want: Vec<String> = links_in
                .iter()
                .enumerate()
                .map(|(i, l)| link_key(l, &pos_in, &lattrs_in, i))
                .collect();
            let mut have: Vec<String> = links_out
                .iter()
                .enumerate()
                .map(|(i, l)| link_key(l, &pos_out, &lattrs_out, i))
                .collect();
            want.sort();
            have.sort();
            if want != have {
                return fail(key, &want, &have);
            }
        }
        // every object reads back with its vertex count
        if let Some(ids) = &doc.object_ids {
            let b = ids.iter().max().map_or(0, |m| m + 1);
            for o in 0..b {
                let obj = level.object(o).map_err(|e| e.to_string())?;
                let n = ids.iter().filter(|&&x| x == o).count();
                if obj.vertices.len() != n {
                    return fail(&format!("object {o} vertex count"), &n, &obj.vertices.len());
                }
            }
        }
    }
    // level-wide attributes and groups
    for (key, attrs) in [
        ("object_attributes", &doc.object_attributes),
        ("group_attributes", &doc.group_attributes),
    ] {
        let want = attr_rows(attrs);
        let have = export_rows(&out, key);
        if want != have {
            return fail(key, &want, &have);
        }
    }
    // fragment attributes: every object with vertices carries its value
    let have = export_rows(&out, "fragment_attributes");
    for (name, want) in attr_rows(&doc.fragment_attributes) {
        let got = have.get(&name).cloned().unwrap_or_default();
        for (o, w) in want.iter().enumerate() {
            let nonempty = match &doc.object_ids {
                Some(ids) => ids.contains(&(o as u64)),
                None => doc.polylines.get(o).is_some_and(|p| !p.is_empty()),
            };
            if nonempty && got.get(o) != Some(w) {
                return fail(
                    &format!("fragment attribute {name} of object {o}"),
                    w,
                    &got.get(o),
                );
            }
        }
    }
    let groups_in: BTreeMap<String, Vec<u64>> = doc
        .groups
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let mut groups_out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (k, v) in out["groups"].as_object().into_iter().flatten() {
        groups_out.insert(
            k.clone(),
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .collect(),
        );
    }
    // groups are dense: missing ids read back as empty groups
    let dense_in: BTreeMap<String, Vec<u64>> = match doc.groups.keys().next_back() {
        None => BTreeMap::new(),
        Some(&m) => (0..=m)
            .map(|g| {
                (
                    g.to_string(),
                    groups_in.get(&g.to_string()).cloned().unwrap_or_default(),
                )
            })
            .collect(),
    };
    if dense_in != groups_out {
        return fail("groups", &dense_in, &groups_out);
    }
    Ok(())
}
