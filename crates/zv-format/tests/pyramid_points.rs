//! Point-cloud pyramids (`zv_format::pyramid`), checked over random geometry against a model
//! computed here, independently of the builder: at every level the vertex count does not grow;
//! every fine vertex of a kept object has exactly one `+1` parent, which is the metavertex of
//! its (object, coarse bin) — its position the mean of the fine positions of that bin, its
//! object the fine vertex's; `-1` holds exactly the `+1` pairs reversed; kept objects keep
//! their ids and object attributes, dropped ones have no vertices and absent attributes; and
//! zv's validator passes at level 5.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::Value;
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
const BIN: f64 = 5.0;

/// A random point cloud: positions in [-20, 40)³, object ids (or none), one vertex attribute.
#[derive(Debug, Clone)]
struct Cloud {
    points: Vec<[f64; 3]>,
    objects: Option<Vec<u64>>,
}

fn cloud() -> impl Strategy<Value = Cloud> {
    (1usize..150, proptest::option::of(1u64..9)).prop_flat_map(|(n, objects)| {
        let pts = proptest::collection::vec([-20.0f64..40.0, -20.0f64..40.0, -20.0f64..40.0], n);
        let ids = match objects {
            Some(k) => proptest::collection::vec(0..k, n).prop_map(Some).boxed(),
            None => Just(None).boxed(),
        };
        (pts, ids).prop_map(|(points, objects)| Cloud { points, objects })
    })
}

fn write(cloud: &Cloud) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![CHUNK; 3])
        .with_format_version(FormatVersion::V0_7);
    opts.bin_shape = Some(vec![BIN; 3]);
    opts.codecs = CodecChoice::parse("zstd").unwrap();
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let intensity: Vec<f64> = (0..cloud.points.len()).map(|i| i as f64 * 0.5).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "intensity".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows: AttributeRows::from_f64s(
                    zv_core::data_type::DataType::Float32,
                    1,
                    &intensity,
                )
                .unwrap(),
                present: None,
            },
            channel_names: None,
        },
    );
    let flat: Vec<f64> = cloud.points.iter().flatten().copied().collect();
    w.add_vertices_flat(&flat, cloud.objects.as_deref(), &attrs)
        .unwrap();
    if let Some(ids) = &cloud.objects {
        let n = ids.iter().max().map_or(0, |m| m + 1);
        let score: Vec<f64> = (0..n).map(|o| o as f64 * 10.0 + 1.0).collect();
        let mut oa = BTreeMap::new();
        oa.insert(
            "score".to_owned(),
            Attribute {
                values: AttributeValues::Numeric {
                    rows: AttributeRows::from_f64s(
                        zv_core::data_type::DataType::Float64,
                        1,
                        &score,
                    )
                    .unwrap(),
                    present: None,
                },
                channel_names: None,
            },
        );
        w.set_object_attributes(oa);
    }
    w.finish().unwrap();
    store
}

/// Every vertex of a level: (chunk, row) → (position, object).
fn vertices(level: &Level) -> BTreeMap<(ChunkKey, u64), (Vec<f64>, Option<u64>)> {
    let mut out = BTreeMap::new();
    for key in level.chunk_keys().unwrap() {
        let v = level.vertices(&key).unwrap().unwrap();
        for r in 0..v.len() {
            out.insert((key.clone(), r as u64), (v.row(r).unwrap(), None));
        }
    }
    if let Some(index) = level.object_index().unwrap() {
        for id in 0..index.num_objects {
            let o = level.object(id).unwrap();
            for (k, r) in o.rows.iter() {
                out.get_mut(&(k.clone(), r)).unwrap().1 = Some(id);
            }
        }
    }
    out
}

/// The model's groups: (object, coarse bin) → (sum of positions, count).
type Groups = BTreeMap<(Option<u64>, Vec<i64>), (Vec<f64>, f64)>;

/// Checks the pyramid against the model; `ratios[L]` is level L's cumulative bin factor.
fn check(store: &Arc<dyn Store>, opts: &PyramidOptions) {
    let report = zv_format::validate::validate(store.clone(), 5);
    assert!(
        report.is_valid(),
        "{:?}",
        report.errors().collect::<Vec<_>>()
    );
    let zv = ZvStore::open(store.clone()).unwrap();
    assert_eq!(zv.level_ids().len(), opts.steps.len() + 1);
    let mut ratio = 1.0;
    for (i, step) in opts.steps.iter().enumerate() {
        ratio *= f64::from(step.coarsen);
        let fine = zv.level(i as u32).unwrap();
        let coarse = zv.level(i as u32 + 1).unwrap();
        let bin = BIN * ratio;
        assert_eq!(coarse.bin_shape(), vec![bin; 3]);
        let fv = vertices(&fine);
        let cv = vertices(&coarse);
        assert!(cv.len() <= fv.len(), "level {} grew", i + 1);
        assert_eq!(coarse.metadata().vertex_count, cv.len() as u64);
        // the model: the mean position of each (object, coarse bin) of the kept objects
        let kept: BTreeSet<Option<u64>> = cv.values().map(|(_, o)| *o).collect();
        let mut groups: Groups = BTreeMap::new();
        for (p, o) in fv.values() {
            if fine.object_index().unwrap().is_some() && (o.is_none() || !kept.contains(o)) {
                continue;
            }
            let b: Vec<i64> = p.iter().map(|x| (x / bin).floor() as i64).collect();
            let g = groups.entry((*o, b)).or_insert((vec![0.0; 3], 0.0));
            g.0.iter_mut().zip(p).for_each(|(s, x)| *s += x);
            g.1 += 1.0;
        }
        assert_eq!(groups.len(), cv.len(), "one metavertex per (object, bin)");
        let up = pairs(&fine, 1);
        let mut parent_of = BTreeMap::new();
        for (f, c) in &up {
            assert!(
                parent_of.insert(f.clone(), c.clone()).is_none(),
                "two parents of {f:?}"
            );
        }
        for (f, (p, o)) in &fv {
            let b: Vec<i64> = p.iter().map(|x| (x / bin).floor() as i64).collect();
            let Some(g) = groups.get(&(*o, b)) else {
                assert!(!parent_of.contains_key(f), "a dropped vertex has a parent");
                continue;
            };
            let c = parent_of
                .get(f)
                .unwrap_or_else(|| panic!("{f:?} has no parent"));
            let (cp, co) = &cv[c];
            assert_eq!(co, o, "the parent of {f:?} is another object's");
            for (x, s) in cp.iter().zip(&g.0) {
                let mean = s / g.1;
                assert!(
                    (x - mean).abs() <= 1e-5 * mean.abs().max(1.0),
                    "{x} vs mean {mean}"
                );
            }
        }
        // drilling through the store's API: the parent of a fine vertex, the children of a
        // metavertex (through -1, or +1 inverted when storage is implicit)
        for (f, c) in up.iter().take(12) {
            assert_eq!(zv.parent(i as u32, f).unwrap().as_ref(), Some(c));
            let children = zv.children(i as u32 + 1, c).unwrap();
            let expected: Vec<_> = up
                .iter()
                .filter(|(_, x)| x == c)
                .map(|(y, _)| y.clone())
                .collect();
            let mut got = children.clone();
            got.sort();
            assert_eq!(got, expected, "children of {c:?}");
        }
        if opts.cross_level == CrossLevel::Explicit {
            let down: BTreeSet<_> = pairs(&coarse, -1)
                .into_iter()
                .map(|(c, f)| (f, c))
                .collect();
            assert_eq!(down, up, "-1 is not +1 reversed");
        }
        // objects: ids and attributes kept, dropped ones empty and absent
        if let Some(index) = fine.object_index().unwrap() {
            let ci = coarse.object_index().unwrap().unwrap();
            assert_eq!(ci.num_objects, index.num_objects);
            assert!(coarse.metadata().preserves_object_ids);
            assert_eq!(
                coarse.metadata().inherited_num_objects,
                Some(index.num_objects)
            );
            for id in 0..index.num_objects {
                let (a, b) = (fine.object(id).unwrap(), coarse.object(id).unwrap());
                if kept.contains(&Some(id)) {
                    assert_eq!(a.attributes, b.attributes, "object {id}");
                } else {
                    assert!(b.vertices.is_empty());
                    assert!(b.attributes.values().all(Option::is_none), "object {id}");
                }
            }
        }
    }
}

fn options(steps: Vec<Step>, chunk_scale: Vec<u32>) -> PyramidOptions {
    let mut o = PyramidOptions::new(steps);
    o.chunk_scale = chunk_scale;
    o.codecs = CodecChoice::parse("zstd").unwrap();
    o
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 16,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_pyramids_match_the_model(
        c in cloud(),
        steps in proptest::collection::vec((1u32..3, 1u32..4), 1..4),
        strategy in prop_oneof![
            Just(SparsityStrategy::Random),
            Just(SparsityStrategy::Length),
            Just(SparsityStrategy::Coverage),
            Just(SparsityStrategy::Attribute("score".into())),
        ],
        implicit in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let store = write(&c);
        // chunk scale = coarsen factor: bins keep dividing chunks
        let scale = steps.iter().map(|s| s.0).collect();
        let mut opts = options(steps.iter().map(|&(a, b)| Step::new(a, b)).collect(), scale);
        if c.objects.is_none() {
            opts.strategy = SparsityStrategy::Random;
        } else {
            opts.strategy = strategy;
        }
        opts.seed = seed;
        if implicit {
            opts.cross_level = CrossLevel::Implicit;
        }
        build_pyramid(store.clone(), &opts).unwrap();
        check(&store, &opts);
    }
}

#[test]
fn the_digest_example_steps_and_chunk_scale() {
    // "2,2;2,1" with chunk scale 1,2: level 1 bins 10 in chunks 10, level 2 bins 20 in 20
    let points: Vec<[f64; 3]> = (0..200)
        .map(|i| {
            let f = i as f64;
            [(f * 7.3) % 40.0, (f * 3.1) % 40.0, (f * 1.7) % 40.0]
        })
        .collect();
    let objects = Some((0..200).map(|i| i / 10).collect());
    let store = write(&Cloud { points, objects });
    let opts = options(vec![Step::new(2, 2), Step::new(2, 1)], vec![1, 2]);
    let summary = build_pyramid(store.clone(), &opts).unwrap();
    assert_eq!(summary.levels.len(), 2);
    assert_eq!(summary.levels[0].objects_kept, 10);
    check(&store, &opts);
    let zv = ZvStore::open(store.clone()).unwrap();
    let root = zv.root_attributes();
    let zvm = &root["zarr_vectors"];
    assert_eq!(zvm["cross_level_storage"], "explicit");
    assert_eq!(zvm["cross_level_depth"], 1);
    let caps = zvm["format_capabilities"].as_array().unwrap();
    assert!(caps.contains(&Value::from("multiscale_links")));
    assert!(caps.contains(&Value::from("preserved_object_ids")));
    let ds = root["multiscales"][0]["datasets"].as_array().unwrap();
    assert_eq!(ds.len(), 3);
    assert_eq!(
        ds[2]["coordinateTransformations"][0]["scale"],
        serde_json::json!([4.0, 4.0, 4.0])
    );
    assert_eq!(
        ds[2]["coordinateTransformations"][1]["translation"],
        serde_json::json!([10.0, 10.0, 10.0])
    );
    // levels of detail
    let counts: Vec<u64> = (0..3)
        .map(|l| zv.level(l).unwrap().metadata().vertex_count)
        .collect();
    assert_eq!(zv.level_for_budget(counts[0]).unwrap(), 0);
    assert_eq!(zv.level_for_budget(counts[1]).unwrap(), 1);
    assert_eq!(zv.level_for_budget(0).unwrap(), 2);
    assert_eq!(zv.level_for_resolution(1.0).unwrap(), 0);
    assert_eq!(zv.level_for_resolution(10.0).unwrap(), 1);
    assert_eq!(zv.level_for_resolution(100.0).unwrap(), 2);
    let l2 = zv.level(2).unwrap();
    assert_eq!(l2.chunk_shape(), vec![20.0; 3]);
    assert_eq!(l2.metadata().parent_level, Some(1));
    assert_eq!(l2.metadata().object_sparsity, 1.0);
    assert_eq!(zv.level(1).unwrap().metadata().object_sparsity, 0.5);
    assert_eq!(
        zv.level(1).unwrap().metadata().coarsening_method,
        "per_object"
    );
}

#[test]
fn refusals_name_the_problem() {
    let store = write(&Cloud {
        points: vec![[1.0, 1.0, 1.0]],
        objects: None,
    });
    // a bin of 15 does not divide a chunk of 10
    let err = build_pyramid(store.clone(), &options(vec![Step::new(3, 1)], vec![])).unwrap_err();
    assert!(err.to_string().contains("does not divide"), "{err}");
    build_pyramid(store.clone(), &options(vec![Step::new(2, 1)], vec![])).unwrap();
    let err = build_pyramid(store, &options(vec![Step::new(2, 1)], vec![])).unwrap_err();
    assert!(err.to_string().contains("already has levels"), "{err}");
}

#[test]
fn channel_names_are_kept_at_every_level() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![CHUNK; 3])
        .with_format_version(FormatVersion::V0_7);
    opts.bin_shape = Some(vec![BIN; 3]);
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let n = 60;
    let flat: Vec<f64> = (0..n)
        .flat_map(|i| [(i % 20) as f64, ((i * 7) % 20) as f64, 1.5])
        .collect();
    let rgb: Vec<f64> = (0..n * 3).map(|v| (v % 256) as f64).collect();
    let mut attrs = BTreeMap::new();
    let rows = AttributeRows::from_f64s(zv_core::data_type::DataType::UInt8, 3, &rgb).unwrap();
    attrs.insert(
        "rgb".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows,
                present: None,
            },
            channel_names: Some(vec!["r".into(), "g".into(), "b".into()]),
        },
    );
    w.add_vertices_flat(&flat, None, &attrs).unwrap();
    w.finish().unwrap();
    let opts = options(vec![Step::new(2, 1), Step::new(2, 1)], vec![1, 2]);
    build_pyramid(store.clone(), &opts).unwrap();
    check(&store, &opts);
    let zv = ZvStore::open(store).unwrap();
    for level in 0..=2 {
        let infos = zv.level(level).unwrap().vertex_attribute_infos().unwrap();
        let rgb = infos.iter().find(|a| a.name == "rgb").unwrap();
        assert_eq!(
            rgb.channel_names.as_deref(),
            Some(&["r".to_owned(), "g".to_owned(), "b".to_owned()][..]),
            "level {level}"
        );
    }
}

#[test]
fn groups_and_their_attributes_are_kept_at_every_level() {
    let points: Vec<[f64; 3]> = (0..120)
        .map(|i| {
            let f = i as f64;
            [(f * 7.3) % 40.0, (f * 3.1) % 40.0, (f * 1.7) % 40.0]
        })
        .collect();
    let objects = Some((0..120).map(|i| i / 10).collect());
    let store = write(&Cloud { points, objects });
    // three groups (one empty) with an attribute; the first step drops half of the objects,
    // and the groups keep their members as they are (ids are kept, dropped objects are empty)
    let groups: BTreeMap<u64, Vec<u64>> =
        [(0, vec![0, 3, 5]), (1, vec![]), (2, vec![11, 1])].into();
    let weight =
        AttributeRows::from_f64s(zv_core::data_type::DataType::Float32, 1, &[0.5, 1.5, 2.5])
            .unwrap();
    let mut gattrs = BTreeMap::new();
    gattrs.insert(
        "weight".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows: weight,
                present: None,
            },
            channel_names: None,
        },
    );
    let store = {
        // the same points again, with the groups (the helper writes none)
        let zv = ZvStore::open(store).unwrap();
        let doc = zv_format::export::export_geometry(&zv).unwrap();
        let doc = zv_format::document::GeometryDocument::from_value(&doc).unwrap();
        let out: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut opts = WriterOptions::new(Geometry::PointCloud, vec![CHUNK; 3])
            .with_format_version(FormatVersion::V0_7);
        opts.bin_shape = Some(vec![BIN; 3]);
        let mut w = ZvWriter::create(out.clone(), opts).unwrap();
        let flat: Vec<f64> = doc.vertices.iter().flatten().copied().collect();
        w.add_vertices_flat(&flat, doc.object_ids.as_deref(), &BTreeMap::new())
            .unwrap();
        w.set_groups(groups.clone(), gattrs);
        w.finish().unwrap();
        out
    };
    let opts = options(vec![Step::new(2, 2), Step::new(2, 1)], vec![1, 2]);
    build_pyramid(store.clone(), &opts).unwrap();
    check(&store, &opts);
    let zv = ZvStore::open(store).unwrap();
    for level in 0..=2 {
        let l = zv.level(level).unwrap();
        let got = l.groups().unwrap().unwrap();
        let want: Vec<Vec<u64>> = groups.values().cloned().collect();
        assert_eq!(got.members, want, "level {level}");
        let attrs = l.group_attributes().unwrap();
        let w = &attrs["weight"].values.rows;
        let values: Vec<f64> = (0..3).map(|r| w.get_f64(r, 0).unwrap()).collect();
        assert_eq!(values, vec![0.5, 1.5, 2.5], "level {level}");
    }
}

#[test]
fn ancestors_and_descendants_compose_the_links_of_each_step() {
    for storage in [CrossLevel::Explicit, CrossLevel::Implicit] {
        let points: Vec<[f64; 3]> = (0..150)
            .map(|i| {
                let f = i as f64;
                [(f * 7.3) % 40.0, (f * 3.1) % 40.0, (f * 1.7) % 40.0]
            })
            .collect();
        let objects = Some((0..150).map(|i| i / 10).collect());
        let store = write(&Cloud { points, objects });
        let mut opts = options(vec![Step::new(2, 2), Step::new(2, 1)], vec![1, 2]);
        opts.cross_level = storage;
        build_pyramid(store.clone(), &opts).unwrap();
        let zv = ZvStore::open(store).unwrap();
        let fine: Vec<(ChunkKey, u64)> = vertices(&zv.level(0).unwrap()).into_keys().collect();
        let mut under: BTreeMap<(ChunkKey, u64), BTreeSet<(ChunkKey, u64)>> = BTreeMap::new();
        let mut dropped = 0;
        for v in &fine {
            assert_eq!(zv.ancestor(0, v, 0).unwrap().as_ref(), Some(v));
            let step = zv
                .parent(0, v)
                .unwrap()
                .and_then(|p| zv.parent(1, &p).unwrap());
            let a = zv.ancestor(0, v, 2).unwrap();
            assert_eq!(a, step, "{storage:?} {v:?}");
            match a {
                Some(a) => {
                    under.entry(a).or_default().insert(v.clone());
                }
                None => dropped += 1,
            }
        }
        assert!(dropped > 0 && !under.is_empty(), "{dropped} dropped");
        for (a, want) in &under {
            let got: BTreeSet<_> = zv.descendants(2, a, 0).unwrap().into_iter().collect();
            assert_eq!(&got, want, "{storage:?} {a:?}");
            assert_eq!(zv.descendants(2, a, 2).unwrap(), vec![a.clone()]);
        }
        assert!(zv.ancestor(2, &fine[0], 0).is_err());
        assert!(zv.descendants(0, &fine[0], 2).is_err());
    }
}

#[test]
fn deeper_links_are_the_one_step_links_composed() {
    let points: Vec<[f64; 3]> = (0..240)
        .map(|i| {
            let f = i as f64;
            [(f * 7.3) % 40.0, (f * 3.1) % 40.0, (f * 1.7) % 40.0]
        })
        .collect();
    let objects: Option<Vec<u64>> = Some((0..240).map(|i| i / 10).collect());
    type Pairs = BTreeSet<((ChunkKey, u64), (ChunkKey, u64))>;
    let compose = |a: &Pairs, b: &Pairs| -> Pairs {
        let up: BTreeMap<_, _> = b.iter().cloned().collect();
        a.iter()
            .filter_map(|(f, m)| up.get(m).map(|c| (f.clone(), c.clone())))
            .collect()
    };
    for (depth, storage) in [
        (2, CrossLevel::Explicit),
        (3, CrossLevel::Implicit),
        (-1, CrossLevel::Explicit),
    ] {
        let store = write(&Cloud {
            points: points.clone(),
            objects: objects.clone(),
        });
        let mut opts = options(
            vec![Step::new(2, 2), Step::new(2, 1), Step::new(1, 2)],
            vec![1, 2, 1],
        );
        opts.cross_level = storage;
        opts.depth = depth;
        build_pyramid(store.clone(), &opts).unwrap();
        check(&store, &opts);
        let zv = ZvStore::open(store).unwrap();
        assert_eq!(
            zv.root_attributes()["zarr_vectors"]["cross_level_depth"],
            depth
        );
        let level = |l: u32| zv.level(l).unwrap();
        let one: Vec<Pairs> = (0..3).map(|l| pairs(&level(l), 1)).collect();
        let deepest = if depth < 0 { 3 } else { depth as u32 };
        for k in 2..=3u32 {
            for l in 0..=3 - k {
                let stored = pairs(&level(l), k as i32);
                if k > deepest {
                    assert!(stored.is_empty(), "depth {depth}: +{k} at level {l}");
                    continue;
                }
                let mut want = one[l as usize].clone();
                for step in l + 1..l + k {
                    want = compose(&want, &one[step as usize]);
                }
                assert!(!want.is_empty());
                assert_eq!(stored, want, "depth {depth}: +{k} at level {l}");
                let down = pairs(&level(l + k), -(k as i32));
                if storage == CrossLevel::Explicit {
                    let flipped: Pairs = want.iter().map(|(f, c)| (c.clone(), f.clone())).collect();
                    assert_eq!(down, flipped, "depth {depth}: -{k} at level {}", l + k);
                } else {
                    assert!(down.is_empty());
                }
            }
        }
    }
}

/// A coarse level's writer spills its vertex records past `PyramidOptions::memory_budget`:
/// the store built with a budget of a few records is the store built with the default one,
/// key for key and byte for byte.
#[test]
fn the_memory_budget_changes_nothing_written() {
    let points: Vec<[f64; 3]> = (0..3000)
        .map(|i| {
            let f = i as f64;
            [
                (f * 7.3) % 60.0 - 20.0,
                (f * 3.1) % 60.0 - 20.0,
                (f * 1.7) % 60.0 - 20.0,
            ]
        })
        .collect();
    let objects = Some((0..3000).map(|i| i % 7).collect::<Vec<u64>>());
    let cloud = Cloud { points, objects };
    let mut stores = Vec::new();
    for budget in [zv_format::pyramid::PYRAMID_MEMORY_BUDGET, 512] {
        let store = write(&cloud);
        let mut opts = options(vec![Step::new(2, 1), Step::new(2, 2)], vec![2, 1]);
        opts.memory_budget = budget;
        build_pyramid(store.clone(), &opts).unwrap();
        stores.push(store);
    }
    let all = |s: &Arc<dyn Store>| -> Vec<(String, Vec<u8>)> {
        s.list_prefix(&zv_core::key::StorePrefix::root())
            .unwrap()
            .into_iter()
            .map(|k| (k.to_string(), s.get(&k).unwrap().unwrap().to_vec()))
            .collect()
    };
    let (a, b) = (all(&stores[0]), all(&stores[1]));
    assert!(a.iter().any(|(k, _)| k.starts_with("2/")), "no level 2");
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "{}", x.0);
    }
}
