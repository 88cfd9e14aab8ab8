//! Duplicate coarse links far apart. A graph or mesh step leaves out every coarse link whose
//! set of metavertices a link before it already has. Within one coarse chunk the step's
//! filter only knows the last few thousand links (`pyramid/coarsen/linked.rs`), and the
//! writer leaves out the others as it writes the chunk (`ZvWriter::drop_duplicate_links`).
//! Here every fine link comes back reversed (or rewound) tens of thousands of links later,
//! all in one chunk: level 1 must hold each set once, in the direction of its first link,
//! as an independent count of the coarse bins says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use zv_core::store::Store;
use zv_format::pyramid::{build_pyramid, PyramidOptions, Step};
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;
use zv_testkit::data::Rng;

/// Vertices per axis: a grid of `G^3` vertices at `i + 0.5`, in bins of 1 and one chunk.
const G: u64 = 40;

/// Links in the first pass; the second pass repeats them, reversed.
const LINKS: usize = 40_000;

/// The coarse bin (bins of 2) of grid vertex `v`, as one number.
fn coarse_bin(v: u64) -> u64 {
    let (x, y, z) = (v % G, (v / G) % G, v / (G * G));
    let h = G / 2;
    (x / 2) + (y / 2) * h + (z / 2) * h * h
}

/// The first pass's links: random vertices, `width` each, distinct within a link.
fn first_pass(width: usize) -> Vec<Vec<u64>> {
    let mut rng = Rng::new(11);
    let n = G * G * G;
    (0..LINKS)
        .map(|_| loop {
            let l: Vec<u64> = (0..width)
                .map(|_| (rng.unit() * n as f64) as u64 % n)
                .collect();
            if l.iter().collect::<BTreeSet<_>>().len() == width {
                break l;
            }
        })
        .collect()
}

/// The coarse links the step must keep, as coarse bins: each non-degenerate set of bins
/// once, in the corner order of its first link.
fn expected(first: &[Vec<u64>]) -> BTreeSet<Vec<u64>> {
    let mut seen = BTreeSet::new();
    let mut kept = BTreeSet::new();
    for l in first {
        let bins: Vec<u64> = l.iter().map(|&v| coarse_bin(v)).collect();
        let set: BTreeSet<u64> = bins.iter().copied().collect();
        if set.len() == bins.len() && seen.insert(set) {
            kept.insert(bins);
        }
    }
    kept
}

fn level1_links(geometry: Geometry, version: FormatVersion, width: usize) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts =
        WriterOptions::new(geometry.clone(), vec![100.0; 3]).with_format_version(version);
    opts.bin_shape = Some(vec![1.0; 3]);
    opts.bounds = Some([vec![0.0; 3], vec![100.0; 3]]);
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let coords: Vec<f64> = (0..G * G * G)
        .flat_map(|v| [v % G, (v / G) % G, v / (G * G)].map(|c| c as f64 + 0.5))
        .collect();
    w.add_vertices_flat(&coords, None, &BTreeMap::new())
        .unwrap();
    let first = first_pass(width);
    let mut links = first.clone();
    links.extend(
        first
            .iter()
            .map(|l| l.iter().rev().copied().collect::<Vec<u64>>()),
    );
    if geometry == Geometry::Mesh {
        w.add_faces(&links, &BTreeMap::new()).unwrap();
    } else {
        let edges: Vec<[u64; 2]> = links.iter().map(|l| [l[0], l[1]]).collect();
        w.add_edges(&edges, &BTreeMap::new()).unwrap();
    }
    w.finish().unwrap();
    build_pyramid(store.clone(), &PyramidOptions::new(vec![Step::new(2, 1)])).unwrap();

    let level = ZvStore::open(store).unwrap().level(1).unwrap();
    assert_eq!(level.chunk_keys().unwrap().len(), 1, "one coarse chunk");
    let object = level.object(0).unwrap();
    let bin_of = |v: u64| {
        let p = &object.vertices[v as usize];
        let b: Vec<u64> = p.iter().map(|&c| (c / 2.0).floor() as u64).collect();
        b[0] + b[1] * (G / 2) + b[2] * (G / 2) * (G / 2)
    };
    let read: Vec<Vec<u64>> = object
        .links
        .unwrap()
        .iter()
        .map(|l| l.iter().map(|&v| bin_of(v)).collect())
        .collect();
    let want = expected(&first);
    // not vacuous: far more distinct links in the chunk than the filter's 16,384 slots
    assert!(want.len() > 30_000, "{}", want.len());
    assert_eq!(read.len(), want.len(), "each set once");
    assert_eq!(read.into_iter().collect::<BTreeSet<_>>(), want);
}

#[test]
fn graph_duplicates_far_apart_are_left_out_in_both_layouts() {
    level1_links(Geometry::Graph, FormatVersion::V0_7, 2);
    level1_links(Geometry::Graph, FormatVersion::V0_9, 2);
}

#[test]
fn mesh_duplicates_far_apart_are_left_out_in_both_layouts() {
    level1_links(Geometry::Mesh, FormatVersion::V0_7, 3);
    level1_links(Geometry::Mesh, FormatVersion::V0_9, 3);
}
