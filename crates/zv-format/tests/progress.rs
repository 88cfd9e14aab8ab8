//! Validation, pyramids and the streaming point export report their progress: one total,
//! and advances that add up to exactly that total.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use zv_format::document::GeometryDocument;
use zv_format::export::points::PointStream;
use zv_format::progress::Progress;
use zv_format::pyramid::{build_pyramid_with_progress, PyramidOptions, Step};

/// Every report.
#[derive(Default)]
struct Recorder {
    totals: Mutex<Vec<(u64, String)>>,
    advanced: Mutex<u64>,
}

impl Progress for Recorder {
    fn set_total(&self, total: u64, unit: &str) {
        self.totals.lock().unwrap().push((total, unit.to_owned()));
    }

    fn advance(&self, n: u64) {
        *self.advanced.lock().unwrap() += n;
    }
}

impl Recorder {
    fn seen(&self) -> (Vec<(u64, String)>, u64) {
        (
            self.totals.lock().unwrap().clone(),
            *self.advanced.lock().unwrap(),
        )
    }
}

/// 200 points in 3-D over 8 chunks (4 × 4 × 4 grid of edge 10), with object ids.
fn point_store() -> Arc<zv_store_mem::MemoryStore> {
    let vertices: Vec<[f64; 3]> = (0..200)
        .map(|i| {
            let i = f64::from(i);
            [(i * 7.3) % 20.0, (i * 3.1) % 20.0, (i * 1.7) % 20.0]
        })
        .collect();
    let ids: Vec<u64> = (0..200).map(|i| i % 5).collect();
    let doc = serde_json::json!({"format": "zv-geometry/1", "geometry": "point_cloud",
        "chunk_shape": [10, 10, 10], "bin_shape": [2.5, 2.5, 2.5], "bounds": [[0, 0, 0], [20, 20, 20]],
        "vertices": vertices, "object_ids": ids});
    let doc = GeometryDocument::from_value(&doc).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_format::import::write_document(store.clone(), &doc, 50).unwrap();
    store
}

#[test]
fn a_pyramid_advances_one_unit_per_level() {
    let store = point_store();
    let rec = Recorder::default();
    let opts = PyramidOptions::new(vec![Step::new(2, 1), Step::new(2, 1)]);
    let summary = build_pyramid_with_progress(store, &opts, &rec).unwrap();
    assert_eq!(summary.levels.len(), 2);
    assert_eq!(rec.seen(), (vec![(2, "levels".into())], 2));
}

#[test]
fn validation_advances_per_chunk_and_level() {
    let store = point_store();
    build_pyramid_with_progress(
        store.clone(),
        &PyramidOptions::new(vec![Step::new(2, 1)]),
        &zv_format::progress::NoProgress,
    )
    .unwrap();
    let zv = zv_format::ZvStore::open(store.clone()).unwrap();
    let chunks: u64 = [0, 1]
        .iter()
        .map(|&l| zv.level(l).unwrap().chunk_keys().unwrap().len() as u64)
        .sum();
    assert!(chunks >= 9, "{chunks}");
    let rec = Recorder::default();
    let report = zv_format::validate::validate_with_progress(store, 5, &rec);
    assert!(report.is_valid(), "{report}");
    // every chunk of both levels, one step per level, one for the store-wide checks
    let total = chunks + 2 + 1;
    assert_eq!(rec.seen(), (vec![(total, "steps".into())], total));
}

#[test]
fn the_point_stream_advances_one_unit_per_chunk_and_gives_every_point() {
    let store = point_store();
    let zv = zv_format::ZvStore::open(store).unwrap();
    let stream = PointStream::open(&zv, true).unwrap();
    assert_eq!(stream.count(), Some(200));
    assert!(stream.has_object_ids());
    let rec = Recorder::default();
    let mut points = Vec::new();
    let mut ids = Vec::new();
    stream
        .for_each(&rec, |c| {
            points.extend(c.positions.iter().map(<[f64]>::to_vec));
            ids.extend(c.object_ids.unwrap());
            Ok(())
        })
        .unwrap();
    let n = stream.chunks() as u64;
    assert_eq!(n, 8);
    assert_eq!(rec.seen(), (vec![(n, "chunks".into())], n));
    // the same points, in the same order, with the same objects as the whole-level export
    let doc = zv_format::export::export_geometry(&zv).unwrap();
    let whole: Vec<Vec<f64>> = serde_json::from_value(doc["vertices"].clone()).unwrap();
    let whole_ids: Vec<u64> = serde_json::from_value(doc["object_ids"].clone()).unwrap();
    assert_eq!(points, whole);
    assert_eq!(ids, whole_ids);
}
