//! Polyline, streamline and line pyramids (`zv_format::pyramid`), checked over random paths against
//! a model computed here, independently of the builder: each kept polyline becomes its first
//! vertex, then one metavertex per maximal run of consecutive interior vertices in the same
//! coarse bin (mean position and attribute), then its last vertex — so endpoints are kept
//! exactly and a path that leaves a bin and comes back gets a new metavertex; every fine vertex
//! of a kept object has exactly one `+1` parent, the metavertex of its run; `-1` is `+1`
//! reversed; the coarse polyline is one connected path (consecutive vertices in different
//! chunks joined by a cross-chunk record); vertex counts do not grow; kept objects keep their
//! ids and attributes, dropped ones are empty with absent attributes; zv's validator passes at
//! level 5. Lines (two vertices, both endpoints) are therefore kept whole.
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
const BIN: f64 = 5.0;

/// Random walks: each polyline starts in [-20, 40)³ and steps by up to 4 per axis, so runs of
/// one bin, bin changes and returns to a bin all occur.
fn paths() -> impl Strategy<Value = Vec<Vec<[f64; 3]>>> {
    let path = (
        [-20.0f64..40.0, -20.0f64..40.0, -20.0f64..40.0],
        proptest::collection::vec([-4.0f64..4.0, -4.0f64..4.0, -4.0f64..4.0], 0..40),
    )
        .prop_map(|(start, steps)| {
            let mut p = start;
            let mut out = vec![p];
            for s in steps {
                for a in 0..3 {
                    p[a] += s[a];
                }
                out.push(p);
            }
            out
        });
    proptest::collection::vec(path, 1..9)
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

fn write(paths: &[Vec<[f64; 3]>], geometry: Geometry) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts =
        WriterOptions::new(geometry, vec![CHUNK; 3]).with_format_version(FormatVersion::V0_7);
    opts.bin_shape = Some(vec![BIN; 3]);
    opts.codecs = CodecChoice::parse("zstd").unwrap();
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let n: usize = paths.iter().map(Vec::len).sum();
    let intensity: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let kind: Vec<Option<String>> = (0..n).map(|i| Some(["a", "b"][i % 2].into())).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "intensity".to_owned(),
        numeric(DataType::Float32, &intensity),
    );
    attrs.insert(
        "kind".to_owned(),
        Attribute {
            values: AttributeValues::Categorical(kind),
            channel_names: None,
        },
    );
    let pls: Vec<Vec<Vec<f64>>> = paths
        .iter()
        .map(|p| p.iter().map(|v| v.to_vec()).collect())
        .collect();
    w.add_polylines(&pls, &attrs).unwrap();
    let score: Vec<f64> = (0..paths.len()).map(|o| o as f64 * 10.0 + 1.0).collect();
    let mut oa = BTreeMap::new();
    oa.insert("score".to_owned(), numeric(DataType::Float64, &score));
    w.set_object_attributes(oa);
    w.finish().unwrap();
    store
}

fn bin_of(p: &[f64], bin: f64) -> Vec<i64> {
    p.iter().map(|x| (x / bin).floor() as i64).collect()
}

/// The model's runs of one polyline: lists of vertex indices.
fn model_runs(positions: &[Vec<f64>], bin: f64) -> Vec<Vec<usize>> {
    let n = positions.len();
    let mut runs: Vec<Vec<usize>> = Vec::new();
    if n == 0 {
        return runs;
    }
    runs.push(vec![0]);
    let mut interior: Vec<Vec<usize>> = Vec::new();
    for i in 1..n.saturating_sub(1) {
        match interior.last_mut() {
            Some(run)
                if bin_of(&positions[*run.last().unwrap()], bin) == bin_of(&positions[i], bin) =>
            {
                run.push(i)
            }
            _ => interior.push(vec![i]),
        }
    }
    runs.extend(interior);
    if n >= 2 {
        runs.push(vec![n - 1]);
    }
    runs
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1.0)
}

/// The delta-0 cross-chunk records of a level, as unordered endpoint pairs.
fn crossings(level: &Level) -> BTreeSet<[(ChunkKey, u64); 2]> {
    let mut out = BTreeSet::new();
    if let Some(c) = level.cross_chunk_links(0).unwrap() {
        for r in 0..c.links.len() {
            let (a, ra) = c.links.endpoint(r, 0).unwrap();
            let (b, rb) = c.links.endpoint(r, 1).unwrap();
            let mut e = [(ChunkKey(a.to_vec()), ra), (ChunkKey(b.to_vec()), rb)];
            e.sort();
            out.insert(e);
        }
    }
    out
}

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
        let bin = BIN * ratio;
        let fine = zv.level(i as u32).unwrap();
        let coarse = zv.level(i as u32 + 1).unwrap();
        assert_eq!(coarse.geometry(), fine.geometry());
        let (fc, cc) = (fine.metadata().vertex_count, coarse.metadata().vertex_count);
        assert!(cc <= fc, "level {} grew: {cc} > {fc}", i + 1);
        let n = fine.object_index().unwrap().unwrap().num_objects;
        assert_eq!(coarse.object_index().unwrap().unwrap().num_objects, n);
        assert!(coarse.metadata().preserves_object_ids);
        let up = pairs(&fine, 1);
        let mut parent_of = BTreeMap::new();
        for (f, c) in &up {
            assert!(
                parent_of.insert(f.clone(), c.clone()).is_none(),
                "two parents of {f:?}"
            );
        }
        let links = crossings(&coarse);
        let mut expected_up = BTreeSet::new();
        let mut coarse_total = 0u64;
        for id in 0..n {
            let (a, b) = (fine.object(id).unwrap(), coarse.object(id).unwrap());
            coarse_total += b.vertices.len() as u64;
            if b.vertices.is_empty() {
                assert!(b.attributes.values().all(Option::is_none), "object {id}");
                continue;
            }
            assert_eq!(a.attributes, b.attributes, "object {id}");
            let fp = a.vertices.to_rows();
            let cp = b.vertices.to_rows();
            let runs = model_runs(&fp, bin);
            assert_eq!(runs.len(), cp.len(), "object {id}: one metavertex per run");
            // endpoints kept exactly
            assert_eq!(cp.first(), fp.first(), "object {id}: first vertex");
            assert_eq!(cp.last(), fp.last(), "object {id}: last vertex");
            let fi = &a.vertex_attributes["intensity"];
            let ci = &b.vertex_attributes["intensity"];
            for (m, run) in runs.iter().enumerate() {
                for axis in 0..3 {
                    let mean = run.iter().map(|&v| fp[v][axis]).sum::<f64>() / run.len() as f64;
                    assert!(
                        close(cp[m][axis], mean),
                        "object {id} run {m}: {cp:?} vs {fp:?}"
                    );
                }
                let mean =
                    run.iter().map(|&v| fi.get_f64(v, 0).unwrap()).sum::<f64>() / run.len() as f64;
                assert!(
                    close(ci.get_f64(m, 0).unwrap(), mean),
                    "object {id} run {m}"
                );
                let parent = b.rows.get(m).map(|(k, r)| (k.clone(), r)).unwrap();
                for &v in run {
                    let (k, r) = a.rows.get(v).unwrap();
                    expected_up.insert(((k.clone(), r), parent.clone()));
                }
            }
            // one connected path: consecutive vertices in different chunks have a record
            for m in 1..cp.len() {
                let (ka, ra) = b.rows.get(m - 1).unwrap();
                let (kb, rb) = b.rows.get(m).unwrap();
                if ka != kb {
                    let mut e = [(ka.clone(), ra), (kb.clone(), rb)];
                    e.sort();
                    assert!(links.contains(&e), "object {id}: no record joins {e:?}");
                }
            }
        }
        assert_eq!(
            coarse_total, cc,
            "every coarse vertex belongs to one polyline"
        );
        assert_eq!(up, expected_up, "level {i}: +1 parents");
        if opts.cross_level == CrossLevel::Explicit {
            let down: BTreeSet<_> = pairs(&coarse, -1)
                .into_iter()
                .map(|(c, f)| (f, c))
                .collect();
            assert_eq!(down, up, "-1 is not +1 reversed");
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
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn random_polyline_pyramids_match_the_model(
        p in paths(),
        kind in 0..3u8,
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
        let (geometry, p) = match kind {
            0 => (Geometry::Polyline, p),
            1 => (Geometry::Streamline, p),
            // lines: each walk's first step (a line has two vertices)
            _ => (Geometry::Line, p.iter().map(|w| {
                vec![w[0], w.get(1).copied().unwrap_or([w[0][0] + 1.0, w[0][1], w[0][2]])]
            }).collect()),
        };
        let store = write(&p, geometry);
        let scale = steps.iter().map(|s| s.0).collect();
        let mut opts = options(steps.iter().map(|&(a, b)| Step::new(a, b)).collect(), scale);
        opts.strategy = strategy;
        opts.seed = seed;
        if implicit {
            opts.cross_level = CrossLevel::Implicit;
        }
        build_pyramid(store.clone(), &opts).unwrap();
        check(&store, &opts);
    }
}

#[test]
fn a_path_that_returns_to_a_bin_gets_a_second_metavertex() {
    // bins of 10 at level 1: A A A | B | A A A (x = 1, 2, 3, 12, 4, 5, 6)
    let path: Vec<[f64; 3]> = [1.0, 2.0, 3.0, 12.0, 4.0, 5.0, 6.0]
        .iter()
        .map(|&x| [x, 1.0, 1.0])
        .collect();
    let store = write(&[path], Geometry::Polyline);
    let opts = options(vec![Step::new(2, 1)], vec![2]);
    build_pyramid(store.clone(), &opts).unwrap();
    check(&store, &opts);
    let zv = ZvStore::open(store).unwrap();
    let o = zv.level(1).unwrap().object(0).unwrap();
    let xs: Vec<f64> = o.vertices.to_rows().iter().map(|p| p[0]).collect();
    assert_eq!(xs, vec![1.0, 2.5, 12.0, 4.5, 6.0]);
}
