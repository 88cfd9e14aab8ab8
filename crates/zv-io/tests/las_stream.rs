//! LAS and LAZ stream into a file ([`zv_io::export_file`]) chunk by chunk: the file equals the
//! one assembled in memory ([`zv_io::export`]), reads back with the store's points, advances the progress once per chunk, and an unfit value in a late chunk is an error
//! naming its vertex by its place in the level.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;
use std::path::Path;
use std::sync::{Arc, Mutex};

use zv_format::document::{AttributeValues, GeometryDocument};
use zv_format::progress::{Progress, Reporter};
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};

/// Every total set and the sum of the advances.
#[derive(Default)]
struct Recorder(Mutex<(Vec<(u64, String)>, u64)>);

impl Progress for Recorder {
    fn set_total(&self, total: u64, unit: &str) {
        self.0.lock().unwrap().0.push((total, unit.to_owned()));
    }

    fn advance(&self, n: u64) {
        self.0.lock().unwrap().1 += n;
    }
}

/// `n` points with intensity and classification over chunks of 4 (positions in [0, 40)^3,
/// so up to 1000 chunks); `bad`: one intensity too large for LAS, at the last CSV row.
fn store(dir: &Path, n: usize, bad: bool) -> ZvStore {
    let mut text = String::from("x,y,z,intensity,classification\n");
    for i in 0..n {
        let intensity = if bad && i == n - 1 {
            70_000
        } else {
            i % 65_536
        };
        text += &format!(
            "{}.125,{}.5,{}.75,{intensity},{}\n",
            i % 37,
            (i / 37) % 40,
            (i * 31) % 40,
            i % 32
        );
    }
    let csv = dir.join("points.csv");
    std::fs::write(&csv, text).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        chunk_shape: Some(vec![4.0; 3]),
        ..Default::default()
    };
    zv_io::import_file(&csv, Format::Csv, store.clone(), &opts).unwrap();
    ZvStore::open(store).unwrap()
}

fn level(s: &ZvStore) -> GeometryDocument {
    GeometryDocument::from_value(&zv_format::export::export_geometry(s).unwrap()).unwrap()
}

fn values(doc: &GeometryDocument, name: &str) -> Vec<f64> {
    let AttributeValues::Numeric { rows, .. } = &doc.vertex_attributes[name].values else {
        panic!("{name} is categorical")
    };
    (0..rows.num_rows())
        .map(|r| rows.get_f64(r, 0).unwrap())
        .collect()
}

/// Each point with its intensity and classification, sorted.
fn records(doc: &GeometryDocument) -> Vec<Vec<f64>> {
    let (i, c) = (values(doc, "intensity"), values(doc, "classification"));
    let mut out: Vec<Vec<f64>> = doc
        .vertices
        .iter()
        .enumerate()
        .map(|(r, p)| [p.as_slice(), &[i[r], c[r]]].concat())
        .collect();
    out.sort_by(|a, b| a.partial_cmp(b).unwrap());
    out
}

#[test]
fn streamed_files_equal_the_assembled_ones_and_read_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let zv = store(dir.path(), 3000, false);
    let chunks = zv.level(0).unwrap().chunk_keys().unwrap().len() as u64;
    assert!(chunks > 500, "{chunks} chunks");
    let before = level(&zv);
    for (format, name) in [(Format::Las, "out.las"), (Format::Laz, "out.laz")] {
        let path = dir.path().join(name);
        let recorder = Arc::new(Recorder::default());
        let opts = ExportOptions {
            progress: Reporter::new(recorder.clone()),
            ..Default::default()
        };
        let file = std::fs::File::create(&path).unwrap();
        zv_io::export_file(&zv, format, &file, name, &opts).unwrap();
        drop(file);
        let streamed = std::fs::read(&path).unwrap();
        assert_eq!(
            *recorder.0.lock().unwrap(),
            (vec![(chunks, "chunks".into())], chunks),
            "{name}"
        );

        let mut assembled = Vec::new();
        zv_io::export(&zv, format, &mut assembled, name, &ExportOptions::default()).unwrap();
        assert_eq!(streamed.len(), assembled.len(), "{name}");
        assert!(streamed == assembled, "{name}: the bytes differ");

        let back = Arc::new(zv_store_mem::MemoryStore::new());
        zv_io::import_file(&path, Format::Las, back.clone(), &ImportOptions::default()).unwrap();
        let after = level(&ZvStore::open(back).unwrap());
        // the import chunks the points again (so orders them by its own chunks)
        assert!(records(&after) == records(&before), "{name}: other points");
    }
}

#[test]
fn an_unfit_value_in_a_late_chunk_names_its_vertex() {
    let dir = tempfile::tempdir().unwrap();
    let zv = store(dir.path(), 2000, true);
    let doc = level(&zv);
    let at = values(&doc, "intensity")
        .iter()
        .position(|v| *v == 70_000.0)
        .unwrap();
    assert!(at > 0, "the bad point is not the first of the level");
    for (format, name) in [(Format::Las, "bad.las"), (Format::Laz, "bad.laz")] {
        let path = dir.path().join(name);
        let file = std::fs::File::create(&path).unwrap();
        let e = zv_io::export_file(&zv, format, &file, name, &ExportOptions::default())
            .unwrap_err()
            .to_string();
        let want = format!("{name}: vertex {at}: intensity = 70000 does not fit LAS 1.2");
        assert!(e.contains(&want), "{e}");
    }
}

/// A LAS file the fuzzer found (`io_las`, under AddressSanitizer): its header's offset is
/// -41255400998277.516 and a point's z lies 2^31 − 1 units below it, which rounds to a
/// 32-bit integer but whose bound, rounded down as the `las` writer does when it closes, does
/// not. The export failed only then, and the writer that could not close was leaked.
const BOUND_PAST_I32: [&str; 19] = [
    "4c41534600001000000000000000000000000000000000000104000000000000000000000000000000000000",
    "00000000000000000000000000007a7600000000000000000000000000000000000000000000000000000000",
    "000000000000770177010000000000000724000c0000000000000000000000000000000000000000000000fc",
    "a9f1d24d62503ffca9f1d24d62503ffca9f1d24d62503f00000000000000000000000000000000c2c2c2c2c2",
    "c2c2c2c2c2c2c200000000000026c00000000000802640000000000000d03f0000000000c040400000000000",
    "00e03f00000000f8ffffff00000000000026c000000000000000000000000000000000000000000c00000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000009d00",
    "000000000000000000000000000000000000000000000000000000000000000000000000e2040000ac0d0000",
    "1027000000000010000001000000000000000000f03f000001000000ca080000641900002823000001000008",
    "0000000000000000000000000000010000000100b20c00001c250000401f0000000000100000010000000000",
    "00000000f03f0000010000009a00000000000000006250100000d4300000581b000001000008006000000000",
    "0000000000000000010000000100821400008c3c00007017000000000010000001000000000000000000f03f",
    "000001000000fa000000f4010000f82a00000100000800000000000000000000000000000100000001006a18",
    "00004448000088130000010000080000000000000000000000000000010000000100521c0000fc530000a00f",
    "00000000001000000100000000000000000062503f0000000000000000000000000000000000000000000026",
    "c00000000000802640000000000000d03f0000000000c04040000000000000e03f0000000000000000000000",
    "0000f03f0000010000000a28000024770000e803000001000008000000000000000000200000000001000000",
    "0100f22b0000dc8200000000000000000010000001000000000000000000f03f000001000000",
];

#[test]
fn a_point_whose_bound_leaves_the_integers_is_refused_before_the_writer_closes() {
    let dir = tempfile::tempdir().unwrap();
    let (result, store) = common::import_hex(dir.path(), "in.las", &BOUND_PAST_I32, 830);
    result.unwrap();
    let zv = ZvStore::open(store).unwrap();
    for (format, name) in [(Format::Las, "out.las"), (Format::Laz, "out.laz")] {
        let mut out = Vec::new();
        let e = zv_io::export(&zv, format, &mut out, name, &ExportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(
                "{name}: vertex 0: z = -41255403145761.164 does not fit"
            )),
            "{e}"
        );
    }
}
