//! A level-of-detail box query at a coarse pyramid level reads far fewer bytes than the same
//! query at level 0, counted through `zv_core::metered::MeteredStore` (the figure for 10
//! million points is `scripts/bench-pyramid.sh`'s; this is the same measure on 60,000).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::metered::MeteredStore;
use zv_core::store::Store;
use zv_format::pyramid::{build_pyramid, PyramidOptions, Step};
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};

#[test]
fn a_box_query_at_the_coarsest_level_reads_ten_times_fewer_bytes() {
    zv_format::link_plugins();
    let inner: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![100.0; 3]);
    opts.bin_shape = Some(vec![12.5; 3]);
    opts.bounds = Some([vec![0.0; 3], vec![1000.0; 3]]);
    let mut w = ZvWriter::create(inner.clone(), opts).unwrap();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let coords: Vec<f64> = (0..60_000 * 3)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 999.0
        })
        .collect();
    w.add_vertices_flat(&coords, None, &BTreeMap::new())
        .unwrap();
    w.finish().unwrap();
    let steps = vec![Step::new(2, 1), Step::new(2, 1), Step::new(2, 1)];
    // coarser chunks at coarser levels, as a pyramid meant for level-of-detail reads has
    let mut popts = PyramidOptions::new(steps);
    popts.chunk_scale = vec![2, 2, 2];
    build_pyramid(inner.clone(), &popts).unwrap();

    let metered = Arc::new(MeteredStore::new(inner));
    let zv = ZvStore::open(metered.clone() as Arc<dyn Store>).unwrap();
    assert_eq!(zv.level_ids(), &[0, 1, 2, 3]);
    let (lo, hi) = ([0.0; 3], [500.0; 3]);
    let mut bytes = Vec::new();
    let mut points = Vec::new();
    for &l in zv.level_ids() {
        metered.reset();
        let hits = zv.level(l).unwrap().query_box_with(&lo, &hi, &[]).unwrap();
        let m = metered.meter();
        assert!(m.reads > 0 && m.bytes_read > 0, "level {l}: {m:?}");
        bytes.push(m.bytes_read);
        points.push(hits.positions.len());
    }
    // every level answers the query, each coarser level with fewer points and bytes
    let in_box = coords
        .chunks(3)
        .filter(|p| p.iter().all(|&c| c < 500.0))
        .count();
    assert_eq!(points[0], in_box);
    assert!(points.windows(2).all(|w| w[1] < w[0]), "{points:?}");
    assert!(bytes.windows(2).all(|w| w[1] < w[0]), "{bytes:?}");
    assert!(
        bytes[3] * 10 <= bytes[0],
        "level 3 read {} bytes, level 0 {}",
        bytes[3],
        bytes[0]
    );
}
