//! Proptest strategies for random "zv-geometry/1" documents.
//!
//! [`geometry_document`] generates documents of every geometry type: dimensionality 2–4,
//! random chunk and bin shapes, vertex dtypes float16/32/64, the codec presets
//! `spec-default`, `none`, `zstd`, `blosc-lz4`, `gzip` (some with `crc32c`), negative
//! coordinates, objects spanning many chunks, empty objects and groups, and every attribute
//! kind (scalar, multi-channel with channel names, categorical with missing values, link,
//! fragment, object with missing rows, group).

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{json, Value};

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

/// `per` documents of each geometry of `kinds` (names `<geometry><n>`), always the same ones
/// (proptest's deterministic runner), without what zv's ZV 0.9 writer refuses: categorical
/// attributes, multi-channel object and fragment attributes.
///
/// # Panics
///
/// If a kind is not a geometry [`geometry_document`] generates (it would never finish
/// otherwise, so it is checked first).
pub fn v09_documents(kinds: &[&str], per: usize) -> Vec<(String, Value)> {
    const GENERATED: &[&str] = &[
        "point_cloud",
        "line",
        "polyline",
        "streamline",
        "graph",
        "skeleton",
        "mesh",
    ];
    assert!(
        kinds.iter().all(|k| GENERATED.contains(k)),
        "kinds {kinds:?}"
    );
    let mut runner = TestRunner::deterministic();
    let strategy = geometry_document();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    let mut docs = Vec::new();
    while counts.values().sum::<usize>() < per * kinds.len() {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let mut doc = tree.current();
        let kind = doc["geometry"].as_str().unwrap_or_default().to_owned();
        let n = counts.entry(kind.clone()).or_default();
        if !kinds.contains(&kind.as_str()) || *n >= per {
            continue;
        }
        let Some(d) = doc.as_object_mut() else {
            continue;
        };
        for key in [
            "vertex_attributes",
            "object_attributes",
            "fragment_attributes",
            "link_attributes",
        ] {
            if let Some(attrs) = d.get_mut(key).and_then(Value::as_object_mut) {
                attrs.retain(|_, a| {
                    a["dtype"] != "string"
                        && (matches!(key, "vertex_attributes" | "link_attributes")
                            || !is_multi_channel(a))
                });
            }
        }
        docs.push((format!("{kind}{n}"), doc));
        *n += 1;
    }
    docs
}

/// Whether an attribute has rows of several values.
fn is_multi_channel(a: &Value) -> bool {
    a["values"]
        .as_array()
        .is_some_and(|v| v.iter().any(Value::is_array))
}
