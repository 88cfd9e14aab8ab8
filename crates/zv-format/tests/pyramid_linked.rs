//! Graph and mesh pyramids (`zv_format::pyramid`), checked over random graphs and meshes
//! against a model computed here, independently of the builder, from the stored levels: the
//! fine vertices of a kept object are grouped by their coarse bin (`floor(p / bin)`); the `+1`
//! parents must group them exactly so, one metavertex per group, its position the group's
//! mean, in the same object; vertices of dropped objects have no parent; the coarse links (read
//! over the whole level, within and across chunks and objects) are exactly the images of the
//! fine links that are not degenerate, one per set of corners, each the image of a fine link
//! in its own order; `-1` is `+1` reversed; vertex counts do not grow; kept objects keep their
//! ids and attributes; zv's validator passes at level 5.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use proptest::prelude::*;
use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::metadata::ChunkKey;
use zv_format::pyramid::{build_pyramid, CrossLevel, PyramidOptions, SparsityStrategy, Step};
use zv_format::writer::{CodecChoice, FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, Level, ZvStore};
use zv_store_mem::MemoryStore;

mod pyramid_common;
use pyramid_common::pairs;

const CHUNK: f64 = 10.0;
const BIN: f64 = 2.5;

type Vertex = (ChunkKey, u64);

/// One object: vertices around a centre, links (edges or faces) between its vertices given
/// as picks, and a few links to vertices of any object.
#[derive(Debug, Clone)]
struct Part {
    positions: Vec<[f64; 3]>,
    picks: Vec<Vec<prop::sample::Index>>,
}

fn part(width: usize) -> impl Strategy<Value = Part> {
    (
        [-15.0f64..35.0, -15.0f64..35.0, -15.0f64..35.0],
        proptest::collection::vec([-6.0f64..6.0, -6.0f64..6.0, -6.0f64..6.0], 1..30),
        proptest::collection::vec(
            proptest::collection::vec(any::<prop::sample::Index>(), width),
            0..40,
        ),
    )
        .prop_map(|(c, offsets, picks)| Part {
            positions: offsets
                .iter()
                .map(|d| [c[0] + d[0], c[1] + d[1], c[2] + d[2]])
                .collect(),
            picks,
        })
}

fn numeric(dt: DataType, values: &[f64]) -> Attribute {
    Attribute {
        values: AttributeValues::Numeric {
            rows: AttributeRows::from_f64s(dt, 1, values).unwrap(),
            present: None,
        },
        channel_names: None,
    }
}

/// Writes the parts as the objects of a graph or a mesh; links pick distinct vertices of
/// their object, every fifth link vertices of the whole store.
fn write(geometry: Geometry, parts: &[Part]) -> Arc<dyn Store> {
    let (mut flat, mut ids, mut links) = (Vec::new(), Vec::new(), Vec::new());
    let total: usize = parts.iter().map(|p| p.positions.len()).sum();
    for (o, p) in parts.iter().enumerate() {
        let first = ids.len();
        for q in &p.positions {
            flat.extend_from_slice(q);
            ids.push(o as u64);
        }
        for (i, pick) in p.picks.iter().enumerate() {
            let (base, n) = if i % 5 == 4 {
                (0, total)
            } else {
                (first, p.positions.len())
            };
            let link: Vec<u64> = pick.iter().map(|x| (base + x.index(n)) as u64).collect();
            let distinct: BTreeSet<_> = link.iter().collect();
            if distinct.len() == link.len() {
                links.push(link);
            }
        }
    }
    write_links(geometry, &flat, &ids, &links, parts.len())
}

/// A store of `geometry` (chunks of [`CHUNK`], bins of [`BIN`]) with the vertices `flat` of
/// objects `ids` (`objects` of them, each with a `score`), a `weight` per vertex, and `links`.
fn write_links(
    geometry: Geometry,
    flat: &[f64],
    ids: &[u64],
    links: &[Vec<u64>],
    objects: usize,
) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(geometry.clone(), vec![CHUNK; 3])
        .with_format_version(FormatVersion::V0_7);
    opts.bin_shape = Some(vec![BIN; 3]);
    opts.codecs = CodecChoice::parse("zstd").unwrap();
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let weight: Vec<f64> = (0..ids.len()).map(|i| i as f64 * 0.5).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert("weight".to_owned(), numeric(DataType::Float32, &weight));
    w.add_vertices_flat(flat, Some(ids), &attrs).unwrap();
    if geometry == Geometry::Mesh {
        w.add_faces(links, &BTreeMap::new()).unwrap();
    } else {
        let edges: Vec<[u64; 2]> = links.iter().map(|l| [l[0], l[1]]).collect();
        w.add_edges(&edges, &BTreeMap::new()).unwrap();
    }
    let score: Vec<f64> = (0..objects).map(|o| o as f64 + 0.5).collect();
    let mut oa = BTreeMap::new();
    oa.insert("score".to_owned(), numeric(DataType::Float64, &score));
    w.set_object_attributes(oa);
    w.finish().unwrap();
    store
}

/// A level read as stored: each vertex's position and object, and every link (chunk rows
/// and cross-chunk records) over (chunk, row) vertices.
struct Stored {
    position: BTreeMap<Vertex, Vec<f64>>,
    object: BTreeMap<Vertex, u64>,
    links: Vec<Vec<Vertex>>,
}

fn stored(level: &Level) -> Stored {
    let width = level.link_width().unwrap();
    let mut s = Stored {
        position: BTreeMap::new(),
        object: BTreeMap::new(),
        links: Vec::new(),
    };
    for key in level.chunk_keys().unwrap() {
        let chunk = level.chunk(&key).unwrap().unwrap();
        let rows = chunk.vertices.len() as u64;
        for r in 0..rows {
            let p = chunk.vertices.row(r as usize).unwrap();
            s.position.insert((key.clone(), r), p);
        }
        if let Some(l) = level.links(&key, width, rows).unwrap() {
            for row in l.rows() {
                s.links
                    .push(row.iter().map(|&v| (key.clone(), v as u64)).collect());
            }
        }
    }
    if let Some(c) = level.cross_chunk_links(0).unwrap() {
        for r in 0..c.links.len() {
            let ends: Vec<Vertex> = (0..width)
                .map_while(|e| c.links.endpoint(r, e))
                .map(|(k, row)| (ChunkKey(k.to_vec()), row))
                .collect();
            s.links.push(ends);
        }
    }
    let n = level.object_index().unwrap().unwrap().num_objects;
    for id in 0..n {
        for (k, r) in level.object(id).unwrap().rows.iter() {
            s.object.insert((k.clone(), r), id);
        }
    }
    s
}

fn check(store: &Arc<dyn Store>, opts: &PyramidOptions) {
    let report = zv_format::validate::validate(store.clone(), 5);
    assert!(
        report.is_valid(),
        "{:?}",
        report.errors().collect::<Vec<_>>()
    );
    let zv = ZvStore::open(store.clone()).unwrap();
    let mut ratio = 1.0;
    for (i, step) in opts.steps.iter().enumerate() {
        ratio *= f64::from(step.coarsen);
        let bin = BIN * ratio;
        let fine = zv.level(i as u32).unwrap();
        let coarse = zv.level(i as u32 + 1).unwrap();
        assert!(coarse.metadata().vertex_count <= fine.metadata().vertex_count);
        let n = fine.object_index().unwrap().unwrap().num_objects;
        assert_eq!(coarse.object_index().unwrap().unwrap().num_objects, n);
        let (f, c) = (stored(&fine), stored(&coarse));
        let up = pairs(&fine, 1);
        let parent_of: BTreeMap<Vertex, Vertex> = up.iter().cloned().collect();
        assert_eq!(parent_of.len(), up.len(), "a fine vertex with two parents");
        // kept objects keep their attributes; dropped ones have none and no parents
        let mut kept = vec![false; n as usize];
        for id in 0..n {
            let (a, b) = (fine.object(id).unwrap(), coarse.object(id).unwrap());
            kept[id as usize] = !b.vertices.is_empty();
            if kept[id as usize] {
                assert_eq!(a.attributes, b.attributes, "object {id}");
            } else {
                assert!(b.attributes.values().all(Option::is_none), "object {id}");
            }
        }
        // the model's groups: (object, bin) of the kept objects' vertices
        let mut model: BTreeMap<(u64, Vec<i64>), BTreeSet<Vertex>> = BTreeMap::new();
        for (v, p) in &f.position {
            match f.object.get(v) {
                Some(&o) if kept[o as usize] => {
                    let b = p.iter().map(|x| (x / bin).floor() as i64).collect();
                    model.entry((o, b)).or_default().insert(v.clone());
                }
                _ => assert!(
                    !parent_of.contains_key(v),
                    "{v:?} of a dropped object linked"
                ),
            }
        }
        let mut by_parent: BTreeMap<Vertex, BTreeSet<Vertex>> = BTreeMap::new();
        for (v, p) in &parent_of {
            by_parent.entry(p.clone()).or_default().insert(v.clone());
        }
        let got: BTreeSet<_> = by_parent.values().cloned().collect();
        let want: BTreeSet<_> = model.values().cloned().collect();
        assert_eq!(got, want, "the +1 groups");
        assert_eq!(c.position.len(), want.len(), "one metavertex per group");
        for ((o, _), group) in &model {
            let p = &parent_of[group.first().unwrap()];
            assert_eq!(c.object.get(p), Some(o), "{p:?} is another object's");
            for axis in 0..3 {
                let mean =
                    group.iter().map(|v| f.position[v][axis]).sum::<f64>() / group.len() as f64;
                let got = c.position[p][axis];
                assert!((got - mean).abs() <= 1e-5 * mean.abs().max(1.0));
            }
        }
        // coarse links: the non-degenerate images of the fine links, one per corner set
        let images: BTreeSet<Vec<Vertex>> = f
            .links
            .iter()
            .filter_map(|l| l.iter().map(|v| parent_of.get(v).cloned()).collect())
            .filter(|l: &Vec<Vertex>| l.iter().collect::<BTreeSet<_>>().len() == l.len())
            .collect();
        let sets = |ls: &mut dyn Iterator<Item = &Vec<Vertex>>| -> BTreeSet<BTreeSet<Vertex>> {
            ls.map(|l| l.iter().cloned().collect()).collect()
        };
        for l in &c.links {
            assert!(
                images.contains(l),
                "coarse link {l:?} is no fine link's image"
            );
        }
        let coarse_sets = sets(&mut c.links.iter());
        assert_eq!(coarse_sets.len(), c.links.len(), "a duplicate coarse link");
        assert_eq!(coarse_sets, sets(&mut images.iter()), "coarse links");
        if opts.cross_level == CrossLevel::Explicit {
            let down: BTreeSet<_> = pairs(&coarse, -1)
                .into_iter()
                .map(|(c, f)| (f, c))
                .collect();
            assert_eq!(down, up, "-1 is not +1 reversed");
        }
    }
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn options(
    steps: &[(u32, u32)],
    strategy: SparsityStrategy,
    implicit: bool,
    seed: u64,
) -> PyramidOptions {
    let mut opts = PyramidOptions::new(steps.iter().map(|&(a, b)| Step::new(a, b)).collect());
    opts.chunk_scale = steps.iter().map(|s| s.0).collect();
    opts.codecs = CodecChoice::parse("zstd").unwrap();
    opts.strategy = strategy;
    opts.seed = seed;
    if implicit {
        opts.cross_level = CrossLevel::Implicit;
    }
    opts
}

fn strategy() -> impl Strategy<Value = SparsityStrategy> {
    prop_oneof![
        Just(SparsityStrategy::Random),
        Just(SparsityStrategy::Length),
        Just(SparsityStrategy::Coverage),
        Just(SparsityStrategy::Attribute("score".into())),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_graph_pyramids_match_the_model(
        parts in proptest::collection::vec(part(2), 1..6),
        steps in proptest::collection::vec((1u32..4, 1u32..3), 1..4),
        strategy in strategy(),
        implicit in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let store = write(Geometry::Graph, &parts);
        let opts = options(&steps, strategy, implicit, seed);
        build_pyramid(store.clone(), &opts).unwrap();
        check(&store, &opts);
    }

    #[test]
    fn random_mesh_pyramids_match_the_model(
        parts in proptest::collection::vec(part(3), 1..6),
        steps in proptest::collection::vec((1u32..4, 1u32..3), 1..4),
        strategy in strategy(),
        implicit in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let store = write(Geometry::Mesh, &parts);
        let opts = options(&steps, strategy, implicit, seed);
        build_pyramid(store.clone(), &opts).unwrap();
        check(&store, &opts);
    }
}

/// Graphs and meshes with more cross-chunk records than the builder numbers at a time (65,536)
/// match the model: 30,000 vertices in 64 chunks, three links from each to vertices far off.
#[test]
fn many_cross_chunk_records_match_the_model() {
    let n = 30_000u64;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let flat: Vec<f64> = (0..n * 3)
        .map(|_| (next() % 40_000) as f64 / 1000.0)
        .collect();
    let ids: Vec<u64> = (0..n).map(|i| i % 7).collect();
    let far = |i: u64, k: u64| (i * (7919 + 2 * k) + 13 * k + 1) % n;
    for (geometry, width) in [(Geometry::Graph, 2), (Geometry::Mesh, 3)] {
        // vertex i and width − 1 others far off, three times
        let links: Vec<Vec<u64>> = (0..n)
            .flat_map(|i| (0..3u64).map(move |k| (i, k)))
            .map(|(i, k)| {
                let mut l = vec![i];
                l.extend((1..width as u64).map(|c| far(i, k * 4 + c)));
                l
            })
            .filter(|l| l.iter().collect::<BTreeSet<_>>().len() == width)
            .collect();
        assert!(links.len() > 80_000, "{geometry:?}: {} links", links.len());
        let store = write_links(geometry.clone(), &flat, &ids, &links, 7);
        let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
        let records = level
            .cross_chunk_links(0)
            .unwrap()
            .map_or(0, |c| c.links.len());
        assert!(
            records > 70_000,
            "{geometry:?}: {records} cross-chunk records"
        );
        let opts = options(&[(2, 1)], SparsityStrategy::Random, false, 1);
        build_pyramid(store.clone(), &opts).unwrap();
        check(&store, &opts);
    }
}

/// Link attributes are refused, naming the attribute, before anything is written.
#[test]
fn graphs_with_link_attributes_are_refused() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::Graph, vec![CHUNK; 3])
            .with_format_version(FormatVersion::V0_7),
    )
    .unwrap();
    w.add_vertices(&[vec![1.0; 3], vec![2.0; 3]], None, &BTreeMap::new())
        .unwrap();
    let mut la = BTreeMap::new();
    la.insert("w".to_owned(), numeric(DataType::Float32, &[1.0]));
    w.add_edges(&[[0, 1]], &la).unwrap();
    w.finish().unwrap();
    let err = build_pyramid(store.clone(), &PyramidOptions::new(vec![Step::new(2, 1)]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("link attributes") && err.contains("`w`"),
        "{err}"
    );
    assert_eq!(ZvStore::open(store).unwrap().level_ids(), &[0]);
}
