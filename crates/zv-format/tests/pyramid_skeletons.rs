//! Skeleton pyramids (`zv_format::pyramid`), checked over random forests against a model
//! computed here, independently of the builder: the fine vertices of a kept object are joined
//! (union–find) along each link whose two ends are chain vertices (one parent, one child) in
//! the same coarse bin; the `+1` parents must group the fine vertices exactly into these
//! classes, each parent the mean of its class, in the same object; roots, branch points and
//! leaves are alone in their class and kept exactly; the coarse object is a forest with the fine
//! object's root count, whose links are the fine links between classes; `-1` is `+1` reversed;
//! vertex counts do not grow; kept objects keep their ids and attributes; zv's validator passes
//! at level 5.
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
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;

mod pyramid_common;
use pyramid_common::pairs;

const CHUNK: f64 = 10.0;
const BIN: f64 = 5.0;

/// One tree per object: vertex `i > 0` hangs from a random earlier vertex (often the previous
/// one, so chains form) and sits a random step away from it.
#[derive(Debug, Clone)]
struct Tree {
    positions: Vec<[f64; 3]>,
    parents: Vec<Option<usize>>,
}

fn tree() -> impl Strategy<Value = Tree> {
    (
        [-20.0f64..40.0, -20.0f64..40.0, -20.0f64..40.0],
        proptest::collection::vec(
            (
                any::<bool>(),
                any::<prop::sample::Index>(),
                [-4.0f64..4.0, -4.0f64..4.0, -4.0f64..4.0],
            ),
            0..40,
        ),
    )
        .prop_map(|(start, steps)| {
            let mut t = Tree {
                positions: vec![start],
                parents: vec![None],
            };
            for (chain, pick, d) in steps {
                let i = t.positions.len();
                let p = if chain { i - 1 } else { pick.index(i) };
                let q = t.positions[p];
                t.positions.push([q[0] + d[0], q[1] + d[1], q[2] + d[2]]);
                t.parents.push(Some(p));
            }
            t
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

fn write(trees: &[Tree]) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::Skeleton, vec![CHUNK; 3])
        .with_format_version(FormatVersion::V0_7);
    opts.bin_shape = Some(vec![BIN; 3]);
    opts.codecs = CodecChoice::parse("zstd").unwrap();
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let (mut flat, mut ids, mut edges) = (Vec::new(), Vec::new(), Vec::new());
    for (o, t) in trees.iter().enumerate() {
        let first = ids.len() as u64;
        for (i, p) in t.positions.iter().enumerate() {
            flat.extend_from_slice(p);
            ids.push(o as u64);
            if let Some(q) = t.parents[i] {
                edges.push([first + i as u64, first + q as u64]);
            }
        }
    }
    let radius: Vec<f64> = (0..ids.len()).map(|i| i as f64 * 0.25).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert("radius".to_owned(), numeric(DataType::Float32, &radius));
    w.add_vertices_flat(&flat, Some(&ids), &attrs).unwrap();
    w.add_edges(&edges, &BTreeMap::new()).unwrap();
    let score: Vec<f64> = (0..trees.len()).map(|o| o as f64 + 0.5).collect();
    let mut oa = BTreeMap::new();
    oa.insert("score".to_owned(), numeric(DataType::Float64, &score));
    w.set_object_attributes(oa);
    w.finish().unwrap();
    store
}

fn find(up: &mut [usize], v: usize) -> usize {
    let mut r = v;
    while up[r] != r {
        r = up[r];
    }
    up[v] = r;
    r
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
        let up = pairs(&fine, 1);
        let parent_of: BTreeMap<(ChunkKey, u64), (ChunkKey, u64)> = up.iter().cloned().collect();
        assert_eq!(parent_of.len(), up.len(), "a fine vertex with two parents");
        for id in 0..n {
            let (a, b) = (fine.object(id).unwrap(), coarse.object(id).unwrap());
            if b.vertices.is_empty() {
                assert!(b.attributes.values().all(Option::is_none), "object {id}");
                for (k, r) in a.rows.iter() {
                    assert!(
                        !parent_of.contains_key(&(k.clone(), r)),
                        "dropped vertex linked"
                    );
                }
                continue;
            }
            assert_eq!(a.attributes, b.attributes, "object {id}");
            let fp = a.vertices.to_rows();
            let cp = b.vertices.to_rows();
            let fl = a.links.clone().unwrap();
            let nf = fp.len();
            let mut parent = vec![None; nf];
            let mut children = vec![0; nf];
            for l in &fl {
                parent[l[0] as usize] = Some(l[1] as usize);
                children[l[1] as usize] += 1;
            }
            let chain = |v: usize| parent[v].is_some() && children[v] == 1;
            let bin_of = |p: &[f64]| {
                p.iter()
                    .map(|x| (x / bin).floor() as i64)
                    .collect::<Vec<_>>()
            };
            let mut uf: Vec<usize> = (0..nf).collect();
            for v in 0..nf {
                if let Some(p) = parent[v] {
                    if chain(v) && chain(p) && bin_of(&fp[v]) == bin_of(&fp[p]) {
                        let (x, y) = (find(&mut uf, v), find(&mut uf, p));
                        uf[x] = y;
                    }
                }
            }
            // the classes the +1 parents make must be the model's
            let mut by_parent: BTreeMap<(ChunkKey, u64), BTreeSet<usize>> = BTreeMap::new();
            for (v, (k, r)) in a.rows.iter().enumerate() {
                let p = parent_of
                    .get(&(k.clone(), r))
                    .unwrap_or_else(|| panic!("object {id} vertex {v} has no parent"));
                by_parent.entry(p.clone()).or_default().insert(v);
            }
            let mut model: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
            for v in 0..nf {
                model.entry(find(&mut uf, v)).or_default().insert(v);
            }
            let got: BTreeSet<_> = by_parent.values().cloned().collect();
            let want: BTreeSet<_> = model.values().cloned().collect();
            assert_eq!(got, want, "object {id}: the +1 classes");
            assert_eq!(
                cp.len(),
                want.len(),
                "object {id}: one metavertex per class"
            );
            let coarse_index: BTreeMap<(ChunkKey, u64), usize> = b
                .rows
                .iter()
                .enumerate()
                .map(|(m, (k, r))| ((k.clone(), r), m))
                .collect();
            let mut class_of = vec![0usize; nf];
            for (p, class) in &by_parent {
                let m = *coarse_index
                    .get(p)
                    .unwrap_or_else(|| panic!("object {id}: parent {p:?} is another object's"));
                for axis in 0..3 {
                    let mean = class.iter().map(|&v| fp[v][axis]).sum::<f64>() / class.len() as f64;
                    assert!((cp[m][axis] - mean).abs() <= 1e-5 * mean.abs().max(1.0));
                }
                for &v in class {
                    class_of[v] = m;
                    if !chain(v) {
                        assert_eq!(class.len(), 1, "object {id}: key vertex {v} merged");
                        assert_eq!(cp[m], fp[v], "object {id}: key vertex {v} moved");
                    }
                }
            }
            // a forest with the same roots, linked as the fine links between classes
            let cl: BTreeSet<(usize, usize)> = b
                .links
                .clone()
                .unwrap()
                .iter()
                .map(|l| (l[0] as usize, l[1] as usize))
                .collect();
            let roots = parent.iter().filter(|p| p.is_none()).count();
            assert_eq!(cl.len(), cp.len() - roots, "object {id}: not a forest");
            let want_links: BTreeSet<(usize, usize)> = fl
                .iter()
                .map(|l| (class_of[l[0] as usize], class_of[l[1] as usize]))
                .filter(|(c, p)| c != p)
                .collect();
            assert_eq!(cl, want_links, "object {id}: coarse links");
        }
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

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_skeleton_pyramids_match_the_model(
        trees in proptest::collection::vec(tree(), 1..7),
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
        let store = write(&trees);
        let mut opts = PyramidOptions::new(steps.iter().map(|&(a, b)| Step::new(a, b)).collect());
        opts.chunk_scale = steps.iter().map(|s| s.0).collect();
        opts.codecs = CodecChoice::parse("zstd").unwrap();
        opts.strategy = strategy;
        opts.seed = seed;
        if implicit {
            opts.cross_level = CrossLevel::Implicit;
        }
        build_pyramid(store.clone(), &opts).unwrap();
        check(&store, &opts);
    }
}
