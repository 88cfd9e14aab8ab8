//! Random geometry of every type, and the write → read round-trip check.
//!
//! [`geometry_document`] generates "zv-geometry/1" documents: dimensionality 2–4, random chunk
//! and bin shapes, negative coordinates, objects spanning many chunks, empty objects and
//! groups, and every attribute kind (scalar, multi-channel with channel names, categorical
//! with missing values, link, fragment, object with missing rows, group). [`check_round_trip`]
//! writes a document through the streaming writer in random batches and compares what the
//! reader (and the exporter) give back: vertices bit-exact, links, attributes, groups.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{json, Value};
use zv_core::store::Store;
use zv_format::document::{attribute_json, Attribute, GeometryDocument};
use zv_format::{Geometry, ZvStore};

/// Coordinates exactly representable in float16 (so every vertex dtype stores them exactly).
fn coord(span: f64) -> impl Strategy<Value = f64> {
    (-((span * 8.0) as i64)..=((span * 8.0) as i64)).prop_map(|v| v as f64 / 8.0)
}

fn point(ndim: usize, span: f64) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(coord(span), ndim)
}

/// A random walk (polylines that wander across chunks).
fn walk(ndim: usize, len: usize) -> impl Strategy<Value = Vec<Vec<f64>>> {
    (
        point(ndim, 12.0),
        prop::collection::vec(prop::collection::vec(-24i64..=24, ndim), len),
    )
        .prop_map(|(start, steps)| {
            let mut p = start;
            let mut out = Vec::with_capacity(steps.len());
            for s in steps {
                out.push(p.clone());
                for (x, d) in p.iter_mut().zip(s) {
                    *x = (*x + d as f64 / 8.0).clamp(-40.0, 40.0);
                }
            }
            out
        })
}

/// The JSON of a numeric attribute.
fn numeric(dtype: &str, values: Vec<Value>) -> Value {
    json!({"dtype": dtype, "values": values})
}

/// Vertex attributes for `n` rows: float32 scalar, uint8 × 3 with channel names, categorical
/// with missing values, int64.
fn vertex_attributes(n: usize) -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(-1000i32..1000, n),
        prop::collection::vec(any::<u8>(), n * 3),
        prop::collection::vec(
            prop::option::of(prop::sample::select(vec!["axon", "soma", "dendrite"])),
            n,
        ),
        prop::collection::vec(any::<i64>(), n),
        any::<u8>(),
    )
        .prop_map(move |(f, rgb, kind, big, mask)| {
            let mut out = serde_json::Map::new();
            if mask & 1 != 0 {
                out.insert(
                    "f".into(),
                    numeric(
                        "float32",
                        f.iter().map(|&v| json!(v as f64 / 4.0)).collect(),
                    ),
                );
            }
            if mask & 2 != 0 {
                let rows: Vec<Value> = rgb.chunks(3).map(|c| json!(c)).collect();
                out.insert(
                    "rgb".into(),
                    json!({"dtype": "uint8", "values": rows, "channel_names": ["r", "g", "b"]}),
                );
            }
            if mask & 4 != 0 {
                out.insert("kind".into(), json!({"dtype": "string", "values": kind}));
            }
            if mask & 8 != 0 {
                out.insert(
                    "big".into(),
                    numeric("int64", big.iter().map(|&v| json!(v)).collect()),
                );
            }
            Value::Object(out)
        })
}

/// Per-object attributes for `b` objects (with missing rows) and per-group ones for `g`.
fn level_attributes(b: usize, g: usize) -> impl Strategy<Value = (Value, Value, Value)> {
    (
        prop::collection::vec(prop::option::of(-100i32..100), b),
        prop::collection::vec((any::<i16>(), any::<i16>()), b),
        prop::collection::vec(0i32..50, b),
        prop::collection::vec(-1e6f64..1e6, g),
        prop::collection::vec(prop::sample::select(vec!["left", "right"]), b),
    )
        .prop_map(move |(score, pair, frag, gw, side)| {
            let objects = json!({
                "score": {"dtype": "float32", "values": score.iter().map(|v| v.map_or(Value::Null, |x| json!(x as f64 / 2.0))).collect::<Vec<_>>()},
                "pair": {"dtype": "int16", "values": pair.iter().map(|(a, c)| json!([a, c])).collect::<Vec<_>>()},
                "side": {"dtype": "string", "values": side},
            });
            let fragments = json!({"region": {"dtype": "int32", "values": frag}});
            let groups = if g > 0 { json!({"weight": {"dtype": "float64", "values": gw}}) } else { json!({}) };
            (objects, fragments, groups)
        })
}

fn groups(b: usize) -> impl Strategy<Value = Value> {
    prop::collection::vec(
        prop::collection::btree_set(0..b.max(1) as u64, 0..=b.min(4)),
        0..4,
    )
    .prop_map(move |gs| {
        let mut m = serde_json::Map::new();
        for (i, g) in gs.into_iter().enumerate() {
            let ids: Vec<u64> = g.into_iter().filter(|&o| (o as usize) < b).collect();
            m.insert(i.to_string(), json!(ids));
        }
        Value::Object(m)
    })
}

fn codecs() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "spec-default",
        "none",
        "zstd",
        "blosc-lz4",
        "gzip",
        "none+crc32c",
        "zstd+crc32c",
    ])
}

fn shapes(ndim: usize) -> impl Strategy<Value = (Vec<f64>, Option<Vec<f64>>)> {
    (
        prop::collection::vec(prop::sample::select(vec![2.0, 4.0, 5.0, 10.0, 16.0]), ndim),
        prop::option::of(prop::sample::select(vec![1.0, 2.0])),
    )
        .prop_map(|(c, b)| {
            let bins = b.map(|k| c.iter().map(|x| x / k).collect());
            (c, bins)
        })
}

/// A random "zv-geometry/1" document of any geometry type.
pub fn geometry_document() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["point_cloud", "point_cloud_ids", "line", "polyline", "streamline", "graph", "skeleton", "mesh"]),
        2usize..=4,
        prop::sample::select(vec!["float32", "float32", "float64", "float16"]),
        codecs(),
    )
        .prop_flat_map(|(kind, ndim, dtype, codecs)| {
            (Just(kind), Just(ndim), Just(dtype), Just(codecs), shapes(ndim), 1usize..6, 0usize..40, any::<u64>())
        })
        .prop_flat_map(|(kind, ndim, dtype, codecs, (chunk, bins), b, n, seed)| {
            let base = json!({"format": "zv-geometry/1", "chunk_shape": chunk, "vertex_dtype": dtype, "codecs": codecs, "pyramid": null});
            let base = if let Some(bins) = bins { let mut x = base; x["bin_shape"] = json!(bins); x } else { base };
            match kind {
                "line" | "polyline" | "streamline" => {
                    let lens = if kind == "line" { prop::collection::vec(Just(2usize), 0..6).boxed() } else { prop::collection::vec(0usize..25, 0..6).boxed() };
                    lens.prop_flat_map(move |lens| {
                        let nv: usize = lens.iter().sum();
                        let np = lens.len();
                        let walks: Vec<_> = lens.iter().map(|&l| walk(ndim, l)).collect();
                        (walks, vertex_attributes(nv), level_attributes(np, 0), groups(np), Just(lens))
                    })
                    .prop_flat_map(move |(pls, va, (oa, fa, _), gs, lens)| {
                        let g = gs.as_object().map_or(0, |m| m.len());
                        (Just(pls), Just(va), Just(oa), Just(fa), Just(gs), Just(lens), level_attributes(0, g))
                    })
                    .prop_map({
                        let base = base.clone();
                        move |(pls, va, oa, fa, gs, lens, (_, _, ga))| {
                            let mut d = base.clone();
                            d["geometry"] = json!(kind);
                            d["polylines"] = json!(pls);
                            // per-polyline lists of the vertex attributes
                            let mut per = serde_json::Map::new();
                            for (name, a) in va.as_object().into_iter().flatten() {
                                let vals = a["values"].as_array().cloned().unwrap_or_default();
                                let mut it = vals.into_iter();
                                let split: Vec<Value> = lens.iter().map(|&l| Value::Array(it.by_ref().take(l).collect())).collect();
                                let mut a2 = a.clone();
                                a2["values"] = Value::Array(split);
                                per.insert(name.clone(), a2);
                            }
                            d["vertex_attributes"] = Value::Object(per);
                            d["object_attributes"] = oa;
                            d["fragment_attributes"] = fa;
                            let has_groups = gs.as_object().is_some_and(|m| !m.is_empty());
                            d["groups"] = gs;
                            if has_groups {
                                d["group_attributes"] = ga;
                            }
                            d
                        }
                    })
                    .boxed()
                }
                _ => {
                    let with_ids = kind != "point_cloud";
                    let geom = if kind == "point_cloud_ids" { "point_cloud" } else { kind };
                    (
                        prop::collection::vec(point(ndim, 30.0), n),
                        prop::collection::vec(0..b as u64, n),
                        vertex_attributes(n),
                        level_attributes(b, 0),
                        groups(b),
                        Just(seed),
                    )
                        .prop_flat_map(move |(verts, ids, va, oa, gs, seed)| {
                            let g = gs.as_object().map_or(0, |m| m.len());
                            (Just((verts, ids, va, oa, gs, seed)), level_attributes(0, g))
                        })
                        .prop_map({
                            let base = base.clone();
                            move |((verts, ids, va, (oa, fa, _), gs, seed), (_, _, ga))| {
                                let mut d = base.clone();
                                d["geometry"] = json!(geom);
                                let n = verts.len();
                                d["vertices"] = json!(verts);
                                d["vertex_attributes"] = va;
                                if with_ids {
                                    // objects 0..=max id; ids never used are empty objects
                                    let b = ids.iter().max().map_or(0, |m| m + 1) as usize;
                                    d["object_ids"] = json!(ids);
                                    let trim = |v: &Value| -> Value {
                                        let mut o = serde_json::Map::new();
                                        for (k, a) in v.as_object().into_iter().flatten() {
                                            let mut a = a.clone();
                                            let vals: Vec<Value> = a["values"].as_array().cloned().unwrap_or_default().into_iter().take(b).collect();
                                            if vals.len() == b {
                                                a["values"] = Value::Array(vals);
                                                o.insert(k.clone(), a);
                                            }
                                        }
                                        Value::Object(o)
                                    };
                                    d["object_attributes"] = trim(&oa);
                                    d["fragment_attributes"] = trim(&fa);
                                    let mut gm = serde_json::Map::new();
                                    for (k, v) in gs.as_object().into_iter().flatten() {
                                        let ids: Vec<Value> = v.as_array().cloned().unwrap_or_default().into_iter().filter(|o| o.as_u64().is_some_and(|o| (o as usize) < b)).collect();
                                        gm.insert(k.clone(), Value::Array(ids));
                                    }
                                    if !gm.is_empty() {
                                        d["groups"] = Value::Object(gm);
                                        d["group_attributes"] = ga;
                                    }
                                }
                                // links, within objects
                                let by_obj = |o: u64| -> Vec<u64> { (0..n as u64).filter(|&i| ids[i as usize] == o).collect() };
                                let mut rng = seed;
                                let mut next = move |m: u64| {
                                    rng ^= rng << 13;
                                    rng ^= rng >> 7;
                                    rng ^= rng << 17;
                                    rng % m.max(1)
                                };
                                let b = ids.iter().max().map_or(0, |m| m + 1);
                                match geom {
                                    "graph" => {
                                        let mut edges = Vec::new();
                                        for o in 0..b {
                                            let vs = by_obj(o);
                                            for _ in 0..vs.len() * 2 {
                                                if vs.len() < 2 { break; }
                                                let a = vs[next(vs.len() as u64) as usize];
                                                let c = vs[next(vs.len() as u64) as usize];
                                                if a != c { edges.push(json!([a, c])); }
                                            }
                                        }
                                        let w: Vec<Value> = (0..edges.len()).map(|i| json!(i as f64 * 0.5)).collect();
                                        let k: Vec<Value> = (0..edges.len()).map(|i| if i % 3 == 0 { Value::Null } else { json!(["in", "out"][i % 2]) }).collect();
                                        d["edges"] = Value::Array(edges);
                                        d["link_attributes"] = json!({"w": {"dtype": "float64", "values": w}, "dir": {"dtype": "string", "values": k}});
                                    }
                                    "skeleton" => {
                                        let mut edges = Vec::new();
                                        for o in 0..b {
                                            let vs = by_obj(o);
                                            // a random tree: each vertex but a random root picks a parent among
                                            // the vertices already in the tree
                                            let mut order = vs.clone();
                                            for i in (1..order.len()).rev() {
                                                let j = next(i as u64 + 1) as usize;
                                                order.swap(i, j);
                                            }
                                            for i in 1..order.len() {
                                                let p = order[next(i as u64) as usize];
                                                edges.push(json!([order[i], p]));
                                            }
                                        }
                                        d["edges"] = Value::Array(edges);
                                    }
                                    "mesh" => {
                                        let arity = 3 + (seed % 2) as usize;
                                        let mut faces = Vec::new();
                                        for o in 0..b {
                                            let vs = by_obj(o);
                                            if vs.len() < arity { continue; }
                                            for _ in 0..vs.len() {
                                                let mut f: Vec<u64> = Vec::new();
                                                while f.len() < arity {
                                                    let v = vs[next(vs.len() as u64) as usize];
                                                    if !f.contains(&v) { f.push(v); }
                                                }
                                                faces.push(json!(f));
                                            }
                                        }
                                        let a: Vec<Value> = (0..faces.len()).map(|i| json!(i as i64 - 3)).collect();
                                        d["faces"] = Value::Array(faces);
                                        d["link_attributes"] = json!({"area": {"dtype": "int32", "values": a}});
                                    }
                                    _ => {}
                                }
                                d
                            }
                        })
                        .boxed()
                }
            }
        })
}

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

/// Writes `doc` into `store` in batches of `batch` rows (or polylines) and checks that
/// reading it back gives the same content. Returns a description of the first difference.
pub fn check_round_trip(
    doc_json: &Value,
    store: Arc<dyn Store>,
    batch: usize,
) -> Result<(), String> {
    let doc = GeometryDocument::from_value(doc_json).map_err(|e| format!("document: {e}"))?;
    zv_format::import::write_document(store.clone(), &doc, batch)
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
