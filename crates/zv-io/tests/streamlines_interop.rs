//! TRK and TCK against nibabel (PyPI): files nibabel writes import into ZV stores with what
//! nibabel's `streamlines` API reads (RAS+mm, within float32), export back to files nibabel
//! reads equal; files zv exports load in nibabel equal to what zv stored.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use zv_format::document::{AttributeValues, GeometryDocument};
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};
use zv_testkit::env::io_script;

fn python(args: &[&str]) -> Value {
    io_script("streamlines_interop.py", args)
}

fn import(path: &Path, format: Format) -> ZvStore {
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(path, format, store.clone(), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    ZvStore::open(store).unwrap()
}

fn export(store: &ZvStore, format: Format, path: &Path) {
    let mut out = Vec::new();
    zv_io::export(store, format, &mut out, "out", &ExportOptions::default()).unwrap();
    std::fs::write(path, out).unwrap();
}

fn level0(store: &ZvStore) -> GeometryDocument {
    GeometryDocument::from_value(&zv_format::export::export_geometry(store).unwrap()).unwrap()
}

/// Streamlines, per-point values (name → per streamline → rows) and per-streamline values.
struct Content {
    lines: Vec<Vec<Vec<f64>>>,
    points: Vec<(String, Vec<Vec<f64>>)>,
    per_line: Vec<(String, Vec<Vec<f64>>)>,
}

fn rows(v: &Value) -> Vec<Vec<f64>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        })
        .collect()
}

fn from_python(v: &Value) -> Content {
    let lines = v["streamlines"]
        .as_array()
        .unwrap()
        .iter()
        .map(rows)
        .collect();
    let mut points: Vec<(String, Vec<Vec<f64>>)> = v["data_per_point"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, per)| {
            (
                k.clone(),
                per.as_array().unwrap().iter().flat_map(rows).collect(),
            )
        })
        .collect();
    let mut per_line: Vec<(String, Vec<Vec<f64>>)> = v["data_per_streamline"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, r)| (k.clone(), rows(r)))
        .collect();
    points.sort_by(|a, b| a.0.cmp(&b.0));
    per_line.sort_by(|a, b| a.0.cmp(&b.0));
    Content {
        lines,
        points,
        per_line,
    }
}

fn attr_rows(a: &zv_format::document::Attribute) -> Vec<Vec<f64>> {
    let AttributeValues::Numeric { rows, .. } = &a.values else {
        panic!("categorical")
    };
    (0..rows.num_rows())
        .map(|r| {
            (0..rows.channels())
                .map(|c| rows.get_f64(r, c).unwrap())
                .collect()
        })
        .collect()
}

fn from_store(store: &ZvStore) -> Content {
    let doc = level0(store);
    Content {
        lines: doc.polylines.clone(),
        points: doc
            .vertex_attributes
            .iter()
            .map(|(k, a)| (k.clone(), attr_rows(a)))
            .collect(),
        per_line: doc
            .object_attributes
            .iter()
            .map(|(k, a)| (k.clone(), attr_rows(a)))
            .collect(),
    }
}

/// Equal within float32 (values are float32 in every file; the affine is applied in f32 by
/// nibabel and in f64 then rounded by zv).
fn assert_close(a: &[Vec<f64>], b: &[Vec<f64>], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: row counts");
    for (i, (ra, rb)) in a.iter().zip(b).enumerate() {
        assert_eq!(ra.len(), rb.len(), "{what}: row {i}");
        for (x, y) in ra.iter().zip(rb) {
            assert!(
                (x - y).abs() <= 1e-5 * x.abs().max(1.0),
                "{what}: row {i}: {x} vs {y}"
            );
        }
    }
}

fn assert_same(a: &Content, b: &Content, what: &str) {
    assert_eq!(a.lines.len(), b.lines.len(), "{what}: streamline counts");
    for (i, (la, lb)) in a.lines.iter().zip(&b.lines).enumerate() {
        assert_close(la, lb, &format!("{what}: streamline {i}"));
    }
    let names = |c: &Content| -> Vec<String> { c.points.iter().map(|p| p.0.clone()).collect() };
    assert_eq!(names(a), names(b), "{what}: per-point names");
    for ((n, ra), (_, rb)) in a.points.iter().zip(&b.points) {
        assert_close(ra, rb, &format!("{what}: {n}"));
    }
    let names = |c: &Content| -> Vec<String> { c.per_line.iter().map(|p| p.0.clone()).collect() };
    assert_eq!(names(a), names(b), "{what}: per-streamline names");
    for ((n, ra), (_, rb)) in a.per_line.iter().zip(&b.per_line) {
        assert_close(ra, rb, &format!("{what}: {n}"));
    }
}

#[test]
fn nibabel_files_import_export_and_read_back_equal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    python(&["write", d]);
    for (name, format) in [("nib.trk", Format::Trk), ("nib.tck", Format::Tck)] {
        let src = dir.path().join(name);
        let nib = from_python(&python(&["read", src.to_str().unwrap()]));
        assert!(nib.lines.len() >= 20, "{name}: nibabel wrote streamlines");
        if format == Format::Trk {
            assert_eq!(nib.points.len(), 2, "{name}: fa and rgb");
            assert_eq!(nib.per_line.len(), 1, "{name}: len");
        }
        let store = import(&src, format);
        let zv = from_store(&store);
        assert_same(&nib, &zv, &format!("{name} imported"));
        let out = dir.path().join(format!("zv-{name}"));
        export(&store, format, &out);
        let back = from_python(&python(&["read", out.to_str().unwrap()]));
        assert_same(
            &nib,
            &back,
            &format!("{name} exported by zv, read by nibabel"),
        );
        assert_same(&zv, &back, &format!("{name}: nibabel reads what zv stored"));
    }
}
