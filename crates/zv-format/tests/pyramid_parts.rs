//! Pyramid levels built in parts (`zv_format::pyramid::parts`): for point clouds with and
//! without objects, with object, fragment and vertex attributes and groups, every cross-level
//! storage and sparse steps, N parts finishing in any order give the store `build_pyramid`
//! gives, byte for byte; a missing part blocks the commit; what cannot be built in parts is
//! refused before anything is written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use zv_core::data_type::DataType;
use zv_core::key::StorePrefix;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::pyramid::parts::{
    commit_level, missing_level_parts, prepare_level, write_level_part,
};
use zv_format::pyramid::{build_pyramid, CrossLevel, PyramidOptions, SparsityStrategy, Step};
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::Geometry;
use zv_store_mem::MemoryStore;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn numeric(dt: DataType, channels: usize, values: &[f64]) -> Attribute {
    Attribute {
        values: AttributeValues::Numeric {
            rows: AttributeRows::from_f64s(dt, channels, values).unwrap(),
            present: None,
        },
        channel_names: None,
    }
}

/// `n` points in `[0, 80)^3` (chunk 10, bins 2.5), with object ids below `objects` (or none),
/// two numeric vertex attributes, and with objects an object attribute, a fragment attribute
/// and groups.
fn store(seed: u64, n: usize, objects: Option<u64>) -> Arc<dyn Store> {
    let mut rng = Rng(seed | 1);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut o = WriterOptions::new(Geometry::PointCloud, vec![10.0; 3])
        .with_format_version(FormatVersion::V0_7);
    o.bin_shape = Some(vec![2.5; 3]);
    o.codecs = zv_format::writer::CodecChoice::parse("zstd:1").unwrap();
    let mut w = ZvWriter::create(store.clone(), o).unwrap();
    let coords: Vec<f64> = (0..n * 3)
        .map(|_| (rng.unit() * 800.0).floor() / 10.0)
        .collect();
    let ids: Option<Vec<u64>> =
        objects.map(|k| (0..n).map(|_| (rng.unit() * k as f64) as u64).collect());
    let w1: Vec<f64> = (0..n).map(|_| rng.unit()).collect();
    let rgb: Vec<f64> = (0..n * 3).map(|_| (rng.unit() * 255.0).floor()).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert("w".to_owned(), numeric(DataType::Float32, 1, &w1));
    attrs.insert("rgb".to_owned(), numeric(DataType::UInt8, 3, &rgb));
    w.add_vertices_flat(&coords, ids.as_deref(), &attrs)
        .unwrap();
    if let Some(k) = objects {
        let per: Vec<f64> = (0..k).map(|i| i as f64 * 0.5).collect();
        let mut oa = BTreeMap::new();
        oa.insert("size".to_owned(), numeric(DataType::Float64, 1, &per));
        w.set_object_attributes(oa);
        let mut fa = BTreeMap::new();
        fa.insert("tag".to_owned(), numeric(DataType::Int32, 1, &per));
        w.set_fragment_attributes(fa);
        let mut groups = BTreeMap::new();
        groups.insert(0, (0..k).step_by(2).collect());
        groups.insert(1, (1..k.min(3)).collect());
        w.set_groups(groups, BTreeMap::new());
    }
    w.finish().unwrap();
    store
}

/// Every key of `store` with its bytes.
fn contents(store: &Arc<dyn Store>) -> BTreeMap<String, Vec<u8>> {
    store
        .list_prefix(&StorePrefix::root())
        .unwrap()
        .into_iter()
        .map(|k| (k.to_string(), store.get(&k).unwrap().unwrap().to_vec()))
        .collect()
}

fn options(steps: &[(u32, u32)], cross: CrossLevel, strategy: SparsityStrategy) -> PyramidOptions {
    let mut o = PyramidOptions::new(steps.iter().map(|&(c, s)| Step::new(c, s)).collect());
    o.cross_level = cross;
    o.strategy = strategy;
    o.seed = 11;
    o.codecs = zv_format::writer::CodecChoice::parse("zstd:1").unwrap();
    o
}

/// Builds every step of `opts` in `n` parts run in `order` (a rotation per step).
fn build_in_parts(store: &Arc<dyn Store>, opts: &PyramidOptions, n: u32, rotate: usize) {
    for step in 0..opts.steps.len() {
        prepare_level(store.clone(), opts, step, n).unwrap();
        let mut order: Vec<u32> = (0..n).collect();
        order.rotate_left((rotate + step) % n as usize);
        for part in order {
            write_level_part(store.clone(), part).unwrap();
        }
        commit_level(store.clone()).unwrap();
    }
}

fn assert_same(got: &BTreeMap<String, Vec<u8>>, want: &BTreeMap<String, Vec<u8>>, what: &str) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}"
    );
    for (k, v) in want {
        assert!(got[k] == *v, "{k} differs ({what})");
    }
}

#[test]
fn levels_built_in_parts_are_build_pyramids_byte_for_byte() {
    for (objects, cross, steps) in [
        (Some(30), CrossLevel::Explicit, vec![(2, 1), (2, 2)]),
        (Some(30), CrossLevel::Implicit, vec![(4, 3)]),
        (None, CrossLevel::Explicit, vec![(2, 1), (2, 1)]),
        (None, CrossLevel::None, vec![(4, 1)]),
    ] {
        let opts = options(&steps, cross, SparsityStrategy::Random);
        let single = store(3, 3000, objects);
        build_pyramid(single.clone(), &opts).unwrap();
        let want = contents(&single);
        assert!(want
            .keys()
            .any(|k| k.starts_with("2/") || k.starts_with("1/")));
        for (n, rotate) in [(1, 0), (2, 1), (3, 2), (5, 3)] {
            let parts = store(3, 3000, objects);
            build_in_parts(&parts, &opts, n, rotate);
            let what = format!("objects {objects:?}, {cross:?}, {steps:?}, {n} parts");
            assert_same(&contents(&parts), &want, &what);
        }
    }
}

#[test]
fn a_missing_part_blocks_the_commit_and_nothing_is_refused_silently() {
    let opts = options(&[(2, 1)], CrossLevel::Explicit, SparsityStrategy::Length);
    let s = store(5, 800, Some(10));
    prepare_level(s.clone(), &opts, 0, 3).unwrap();
    // preparing again with the same arguments is the same plan; others are refused
    prepare_level(s.clone(), &opts, 0, 3).unwrap();
    let e = prepare_level(s.clone(), &opts, 0, 4)
        .unwrap_err()
        .to_string();
    assert!(e.contains("another pyramid level is staged"), "{e}");
    write_level_part(s.clone(), 0).unwrap();
    write_level_part(s.clone(), 2).unwrap();
    assert_eq!(missing_level_parts(s.as_ref()).unwrap(), vec![1]);
    let e = commit_level(s.clone()).unwrap_err().to_string();
    assert!(e.contains("1 of 3 parts") && e.ends_with(": 1"), "{e}");
    let level_doc = zv_core::key::StoreKey::new("1/zarr.json").unwrap();
    assert!(!s.exists(&level_doc).unwrap(), "level 1 is not committed");
    assert!(write_level_part(s.clone(), 3).is_err(), "part 3 of 3");
    // the part run again (twice: a retried task) and the commit complete the level
    write_level_part(s.clone(), 1).unwrap();
    write_level_part(s.clone(), 1).unwrap();
    commit_level(s.clone()).unwrap();
    let single = store(5, 800, Some(10));
    build_pyramid(single.clone(), &opts).unwrap();
    assert_same(&contents(&s), &contents(&single), "after the rerun");
    assert!(commit_level(s.clone()).is_err(), "nothing staged any more");
}

#[test]
fn what_cannot_be_built_in_parts_is_refused_before_anything_is_written() {
    let s = store(7, 500, Some(5));
    let before = contents(&s);
    let mut deep = options(
        &[(2, 1), (2, 1)],
        CrossLevel::Explicit,
        SparsityStrategy::Random,
    );
    deep.depth = 2;
    let e = prepare_level(s.clone(), &deep, 0, 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("depth 1"), "{e}");
    let mut scaled = options(&[(2, 1)], CrossLevel::Implicit, SparsityStrategy::Random);
    scaled.chunk_scale = vec![2];
    let e = prepare_level(s.clone(), &scaled, 0, 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("chunk-scale 1"), "{e}");
    let e = prepare_level(s.clone(), &scaled, 1, 2)
        .unwrap_err()
        .to_string();
    assert!(e.contains("level 1"), "{e}");
    assert_same(&contents(&s), &before, "refusals write nothing");
    // a chunk-scale factor without links is fine
    scaled.cross_level = CrossLevel::None;
    let single = store(7, 500, Some(5));
    build_pyramid(single.clone(), &scaled).unwrap();
    build_in_parts(&s, &scaled, 3, 1);
    assert_same(&contents(&s), &contents(&single), "chunk-scale 2, no links");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn any_parts_and_order_give_build_pyramids_store(
        seed in 1u64..10_000,
        n in 1u32..5,
        rotate in 0usize..5,
        objects in prop::option::of(1u64..40),
        coarsen in prop::sample::select(vec![2u32, 4]),
        sparsity in 1u32..4,
        explicit in any::<bool>(),
    ) {
        let cross = if explicit { CrossLevel::Explicit } else { CrossLevel::Implicit };
        let opts = options(&[(coarsen, sparsity)], cross, SparsityStrategy::Coverage);
        let single = store(seed, 400, objects);
        build_pyramid(single.clone(), &opts).unwrap();
        let parts = store(seed, 400, objects);
        build_in_parts(&parts, &opts, n, rotate);
        let (got, want) = (contents(&parts), contents(&single));
        prop_assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
        for (k, v) in &want {
            prop_assert!(got[k] == *v, "{} differs", k);
        }
    }
}
