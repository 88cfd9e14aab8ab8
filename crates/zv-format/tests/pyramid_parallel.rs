//! The cross-level links of a pyramid step are made and written a window of chunks at a time,
//! the chunks of a window in parallel (`pyramid/links.rs`, `pyramid/links_v09.rs`); ZV 0.7's
//! cross-chunk records are still streamed in chunk order. A pyramid built on 4 threads is the
//! pyramid built on 1, key for key and byte for byte, in both layouts, for point clouds and
//! graphs, over steps whose fine chunks are many windows and whose links cross chunks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::store::Store;
use zv_format::pyramid::{build_pyramid, PyramidOptions, Step};
use zv_format::writer::{CodecChoice, FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;
use zv_testkit::data::Rng;

/// Level 0: `n` points in `[0, 100)^3` in chunks of 10 (1,000 chunks) and bins of 2.5; for a
/// graph, each point joined to the two after it in x order (edges that cross chunks).
fn level0(geometry: Geometry, version: FormatVersion, n: usize) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut rng = Rng::new(7);
    let coords: Vec<f64> = (0..n * 3).map(|_| rng.unit() * 100.0).collect();
    let mut opts = WriterOptions::new(geometry.clone(), vec![10.0; 3]).with_format_version(version);
    opts.bin_shape = Some(vec![2.5; 3]);
    opts.bounds = Some([vec![0.0; 3], vec![100.0; 3]]);
    opts.codecs = CodecChoice::parse("zstd").unwrap();
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    w.add_vertices_flat(&coords, None, &BTreeMap::new())
        .unwrap();
    if geometry == Geometry::Graph {
        let mut order: Vec<u64> = (0..n as u64).collect();
        order.sort_by(|&a, &b| coords[a as usize * 3].total_cmp(&coords[b as usize * 3]));
        let edges: Vec<[u64; 2]> = (1..3)
            .flat_map(|j| {
                order
                    .windows(j + 1)
                    .map(|w| [w[0], w[j]])
                    .collect::<Vec<_>>()
            })
            .collect();
        w.add_edges(&edges, &BTreeMap::new()).unwrap();
    }
    w.finish().unwrap();
    store
}

/// Two steps (bins twice as wide, chunks twice as large, each), links between every pair of
/// levels, explicit, built in a pool of `threads` threads.
fn pyramid(store: &Arc<dyn Store>, threads: usize) {
    let mut opts = PyramidOptions::new(vec![Step::new(2, 1), Step::new(2, 1)]);
    opts.chunk_scale = vec![2, 2];
    opts.depth = -1;
    opts.codecs = CodecChoice::parse("zstd").unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| build_pyramid(store.clone(), &opts))
        .unwrap();
}

/// Every key of `store` with its bytes.
fn contents(store: &Arc<dyn Store>) -> BTreeMap<String, Vec<u8>> {
    store
        .list()
        .unwrap()
        .into_iter()
        .map(|k| {
            let bytes = store.get(&k).unwrap().unwrap().to_vec();
            (k.as_str().to_owned(), bytes)
        })
        .collect()
}

fn same_on_one_and_four_threads(geometry: Geometry, version: FormatVersion) {
    let one = level0(geometry.clone(), version, 4000);
    let four = level0(geometry.clone(), version, 4000);
    assert_eq!(contents(&one), contents(&four), "level 0 differs");
    pyramid(&one, 1);
    pyramid(&four, 4);
    let (a, b) = (contents(&one), contents(&four));
    // not vacuous: three levels and links between them. ZV 0.9 stores each family as cells
    // of the source level's chunks; ZV 0.7 stores as ragged blobs only the pairs whose chunk
    // keys are equal as tuples (here chunk 0.0.0), the others as cross-chunk records
    assert_eq!(ZvStore::open(one.clone()).unwrap().level_ids(), [0, 1, 2]);
    for (level, delta) in [
        (0, "+1"),
        (1, "+1"),
        (0, "+2"),
        (1, "-1"),
        (2, "-1"),
        (2, "-2"),
    ] {
        if version == FormatVersion::V0_9 {
            let family = format!("{level}/links/{delta}/");
            let cells = a.keys().filter(|k| k.starts_with(&family)).count();
            assert!(cells > 8, "{family} has {cells} keys");
        } else {
            let records = format!("{level}/cross_chunk_links/{delta}/data/c/0");
            assert!(a[&records].len() > 1000, "{records}");
        }
    }
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (key, bytes) in &a {
        assert!(bytes == &b[key], "{key} differs between 1 and 4 threads");
    }
}

#[test]
fn a_point_pyramid_is_the_same_on_one_and_four_threads_zv07() {
    same_on_one_and_four_threads(Geometry::PointCloud, FormatVersion::V0_7);
}

#[test]
fn a_point_pyramid_is_the_same_on_one_and_four_threads_zv09() {
    same_on_one_and_four_threads(Geometry::PointCloud, FormatVersion::V0_9);
}

#[test]
fn a_graph_pyramid_is_the_same_on_one_and_four_threads_zv07() {
    same_on_one_and_four_threads(Geometry::Graph, FormatVersion::V0_7);
}

#[test]
fn a_graph_pyramid_is_the_same_on_one_and_four_threads_zv09() {
    same_on_one_and_four_threads(Geometry::Graph, FormatVersion::V0_9);
}
