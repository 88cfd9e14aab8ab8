//! TRK and TCK: property round trips (streamlines written by zv, exported, imported back with
//! the same content) and malformed files (errors naming the file and the byte, nothing
//! written).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use zv_core::data_type::DataType;
use zv_format::document::{Attribute, AttributeValues, GeometryDocument};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_io::{ExportOptions, Format, ImportOptions};

type Lines = Vec<Vec<[f32; 3]>>;

fn attr(channels: usize, values: &[f32]) -> Attribute {
    let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Attribute {
        values: AttributeValues::Numeric {
            rows: AttributeRows::from_le(DataType::Float32, channels, bytes).unwrap(),
            present: None,
        },
        channel_names: None,
    }
}

/// A streamline store; with `values`, a 1-channel `fa` and a 3-channel `rgb` per point and a
/// `len` per streamline.
fn store_of(lines: &Lines, values: bool) -> ZvStore {
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::Streamline, vec![32.0; 3]),
    )
    .unwrap();
    let coords: Vec<f64> = lines
        .iter()
        .flatten()
        .flatten()
        .map(|&v| f64::from(v))
        .collect();
    let mut offsets = vec![0];
    for l in lines {
        offsets.push(offsets.last().unwrap() + l.len());
    }
    let n = coords.len() / 3;
    let mut vattrs = BTreeMap::new();
    if values {
        let fa: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
        let rgb: Vec<f32> = (0..3 * n).map(|i| -(i as f32)).collect();
        vattrs.insert("fa".to_owned(), attr(1, &fa));
        vattrs.insert("rgb".to_owned(), attr(3, &rgb));
    }
    w.add_polylines_flat(&coords, &offsets, &vattrs).unwrap();
    if values {
        let len: Vec<f32> = lines.iter().map(|l| l.len() as f32).collect();
        w.set_object_attributes(BTreeMap::from([("len".to_owned(), attr(1, &len))]));
    }
    w.finish().unwrap();
    ZvStore::open(store).unwrap()
}

fn level0(store: &ZvStore) -> GeometryDocument {
    GeometryDocument::from_value(&zv_format::export::export_geometry(store).unwrap()).unwrap()
}

fn through(store: &ZvStore, format: Format, name: &str) -> ZvStore {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let mut out = Vec::new();
    zv_io::export(store, format, &mut out, name, &ExportOptions::default()).unwrap();
    std::fs::write(&path, out).unwrap();
    let back = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(&path, format, back.clone(), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    ZvStore::open(back).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-5 * a.abs().max(1.0)
}

fn lines_strategy() -> impl Strategy<Value = Lines> {
    prop::collection::vec(
        prop::collection::vec(prop::array::uniform3(-200.0f32..200.0), 1..12),
        1..10,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn tck_round_trips_bit_for_bit(lines in lines_strategy()) {
        let a = level0(&store_of(&lines, false));
        let b = level0(&through(&store_of(&lines, false), Format::Tck, "s.tck"));
        prop_assert_eq!(&a.polylines, &b.polylines);
        prop_assert_eq!(b.geometry, Geometry::Streamline);
    }

    #[test]
    fn trk_round_trips_positions_scalars_and_properties(lines in lines_strategy()) {
        let a = level0(&store_of(&lines, true));
        let b = level0(&through(&store_of(&lines, true), Format::Trk, "s.trk"));
        prop_assert_eq!(a.polylines.len(), b.polylines.len());
        for (pa, pb) in a.polylines.iter().zip(&b.polylines) {
            prop_assert_eq!(pa.len(), pb.len());
            for (x, y) in pa.iter().flatten().zip(pb.iter().flatten()) {
                prop_assert!(close(*x, *y), "{} vs {}", x, y);
            }
        }
        // scalars and properties are float32 in TRK: exact
        prop_assert_eq!(&a.vertex_attributes, &b.vertex_attributes);
        prop_assert_eq!(&a.object_attributes, &b.object_attributes);
    }
}

/// A little-endian TRK: the default header (zv's export of an empty-named store), then `body`.
fn trk_file(n_count: i32, n_scalars: i16, body: &[u8]) -> Vec<u8> {
    let store = store_of(&vec![vec![[1.0, 2.0, 3.0]]], false);
    let mut out = Vec::new();
    zv_io::export(
        &store,
        Format::Trk,
        &mut out,
        "x",
        &ExportOptions::default(),
    )
    .unwrap();
    out.truncate(1000);
    out[36..38].copy_from_slice(&n_scalars.to_le_bytes());
    out[988..992].copy_from_slice(&n_count.to_le_bytes());
    out.extend_from_slice(body);
    out
}

fn import_err(bytes: &[u8], name: &str, format: Format) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let e = zv_io::import_file(&path, format, store.clone(), &ImportOptions::default())
        .expect_err("a malformed file must be refused");
    assert!(
        {
            let s: Arc<dyn zv_core::store::Store> = store.clone();
            s.list().unwrap().is_empty()
        },
        "nothing is written"
    );
    e.to_string().replace(&path.display().to_string(), name)
}

fn points(n: i32, values: &[f32]) -> Vec<u8> {
    let mut b = n.to_le_bytes().to_vec();
    b.extend(values.iter().flat_map(|v| v.to_le_bytes()));
    b
}

#[test]
fn malformed_trk_files_are_errors_naming_the_byte() {
    let one = points(1, &[1.0, 2.0, 3.0]);
    // a header claiming 2^31 - 1 streamlines on a 1 KB file
    let e = import_err(&trk_file(i32::MAX, 0, &one), "a.trk", Format::Trk);
    assert_eq!(
        e,
        "a.trk: byte 1016: the file ends after 1 streamlines, the header says 2147483647"
    );
    // a streamline claiming 2^31 - 1 points: refused before any allocation
    let e = import_err(
        &trk_file(0, 0, &points(i32::MAX, &[])),
        "a.trk",
        Format::Trk,
    );
    assert!(e.starts_with("a.trk: byte 1000: streamline 0 claims 2147483647 points, more than the 0 bytes left hold"), "{e}");
    let e = import_err(&trk_file(0, 0, &points(-3, &[])), "a.trk", Format::Trk);
    assert!(
        e.contains("byte 1000: streamline 0 claims -3 points"),
        "{e}"
    );
    // the header says 1, two follow
    let mut two = one.clone();
    two.extend_from_slice(&one);
    let e = import_err(&trk_file(1, 0, &two), "a.trk", Format::Trk);
    assert_eq!(
        e,
        "a.trk: byte 1016: the header says 1 streamlines, but bytes follow the last"
    );
    // truncated inside a point count, inside the header
    let e = import_err(&trk_file(0, 0, &one[..2]), "a.trk", Format::Trk);
    assert!(
        e.starts_with("a.trk: byte 1000: the file ends after 0 streamlines"),
        "{e}"
    );
    let e = import_err(&trk_file(0, 0, &[])[..500], "a.trk", Format::Trk);
    assert_eq!(
        e,
        "a.trk: byte 500: the file ends inside the 1000-byte header"
    );
    // scalars the points do not have room for
    let e = import_err(&trk_file(0, 2, &one), "a.trk", Format::Trk);
    assert!(
        e.contains("byte 1000: streamline 0 claims 1 points, more than the 12 bytes left"),
        "{e}"
    );
    let e = import_err(&trk_file(0, 0, &[]), "a.trk", Format::Trk);
    assert_eq!(e, "a.trk: the file holds no streamlines");
}

#[test]
fn malformed_tck_files_are_errors_naming_the_byte() {
    let head = "mrtrix tracks\ndatatype: Float32LE\ncount: 2\nfile: . 64\nEND\n";
    let mut f = head.as_bytes().to_vec();
    f.resize(64, 0);
    let p = |f: &mut Vec<u8>, v: [f32; 3]| f.extend(v.iter().flat_map(|x| x.to_le_bytes()));
    p(&mut f, [1.0, 2.0, 3.0]);
    p(&mut f, [f32::NAN; 3]);
    let mut one = f.clone();
    p(&mut one, [f32::INFINITY; 3]);
    let e = import_err(&one, "a.tck", Format::Tck);
    assert_eq!(
        e,
        "a.tck: byte 100: the header says 2 streamlines, the file has 1"
    );
    let mut cut = f.clone();
    p(&mut cut, [4.0, 5.0, 6.0]);
    cut.truncate(cut.len() - 2);
    let e = import_err(&cut, "a.tck", Format::Tck);
    assert_eq!(e, "a.tck: byte 88: the file ends inside a point");
    let mut open = f.clone();
    p(&mut open, [4.0, 5.0, 6.0]);
    let e = import_err(&open, "a.tck", Format::Tck);
    assert_eq!(e, "a.tck: byte 100: the file ends inside a streamline");
    let e = import_err(&f[..34], "a.tck", Format::Tck);
    assert!(
        e.starts_with("a.tck: end of file: the header has no `END`"),
        "{e}"
    );
    let bad = head.replace(". 64", ". 10");
    let e = import_err(bad.as_bytes(), "a.tck", Format::Tck);
    assert!(e.contains("the data offset 10 is inside the header"), "{e}");
    let e = import_err(b"\x00\x01garbage", "a.tck", Format::Tck);
    assert!(e.starts_with("a.tck: line 1: not a TCK file"), "{e}");
}

#[test]
fn stores_that_are_not_3d_streamlines_are_refused_by_the_exporters() {
    let store: Arc<dyn zv_core::store::Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::PointCloud, vec![8.0; 3]),
    )
    .unwrap();
    w.add_vertices_flat(&[1.0, 2.0, 3.0], None, &BTreeMap::new())
        .unwrap();
    w.finish().unwrap();
    let zv = ZvStore::open(store).unwrap();
    for f in [Format::Trk, Format::Tck] {
        let e = zv_io::export(&zv, f, &mut Vec::new(), "o", &ExportOptions::default()).unwrap_err();
        assert!(
            e.to_string()
                .contains("holds 3-D streamlines; the store is a 3-D point_cloud"),
            "{e}"
        );
    }
}
