//! Imports and exports report their progress: a total (the file's bytes, level 0's chunks)
//! and advances that add up to exactly that total.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use zv_format::progress::{Progress, Reporter};
use zv_io::{ExportOptions, Format, ImportOptions};

/// Every report, in order.
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

/// 1000 points over a 10 × 10 × 10 grid of chunks, as CSV.
fn csv_text() -> String {
    let mut text = String::from("x,y,z,v\n");
    for i in 0..1000 {
        let (x, y, z) = (i % 10, (i / 10) % 10, i / 100);
        text += &format!("{}.5,{}.25,{}.75,{i}\n", x * 10, y * 10, z * 10);
    }
    text
}

#[test]
fn import_and_export_advance_to_their_totals() {
    let dir = tempfile::tempdir().unwrap();
    let text = csv_text();
    for format in [Format::Csv, Format::Ply] {
        let path = dir.path().join("points.csv");
        std::fs::write(&path, &text).unwrap();
        let store = Arc::new(zv_store_mem::MemoryStore::new());
        let path = if format == Format::Ply {
            // the PLY file comes from the CSV import's store
            let zv = {
                let s = Arc::new(zv_store_mem::MemoryStore::new());
                zv_io::import_file(&path, Format::Csv, s.clone(), &ImportOptions::default())
                    .unwrap();
                zv_format::ZvStore::open(s).unwrap()
            };
            let ply = dir.path().join("points.ply");
            let mut out = Vec::new();
            zv_io::export(
                &zv,
                Format::Ply,
                &mut out,
                "points.ply",
                &Default::default(),
            )
            .unwrap();
            std::fs::write(&ply, out).unwrap();
            ply
        } else {
            path
        };
        let size = std::fs::metadata(&path).unwrap().len();
        let import = Arc::new(Recorder::default());
        let opts = ImportOptions {
            chunk_shape: Some(vec![10.0; 3]),
            batch: 64,
            progress: Reporter::new(import.clone()),
            ..Default::default()
        };
        let summary = zv_io::import_file(&path, format, store.clone(), &opts).unwrap();
        assert_eq!(summary.vertices, 1000);
        assert_eq!(
            import.seen(),
            (vec![(size, "bytes".into())], size),
            "{format:?}"
        );

        let zv = zv_format::ZvStore::open(store).unwrap();
        for out_format in [Format::Csv, Format::Ply, Format::Obj] {
            let export = Arc::new(Recorder::default());
            let opts = ExportOptions {
                progress: Reporter::new(export.clone()),
                ..Default::default()
            };
            let mut out = Vec::new();
            zv_io::export(&zv, out_format, &mut out, "out", &opts).unwrap();
            assert!(out.len() > 10_000, "{out_format:?}");
            assert_eq!(
                export.seen(),
                (vec![(1000, "chunks".into())], 1000),
                "{format:?} → {out_format:?}"
            );
        }
    }
}
