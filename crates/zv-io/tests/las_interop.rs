//! LAS and LAZ against laspy (PyPI, with lazrs): files laspy writes (LAS 1.2 point formats 1
//! and 3, LAS 1.4 formats 6, 7 and 8, each also as LAZ) import with positions bit for bit equal to laspy's
//! scaled doubles and every dimension equal; the LAS and LAZ files zv exports read back in
//! laspy equal, with the same version, point format, scale and offset.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use zv_format::document::{AttributeValues, GeometryDocument};
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};
use zv_testkit::env::io_script;

fn python(args: &[&str]) -> Value {
    io_script("las_interop.py", args)
}

fn import(path: &Path) -> ZvStore {
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        batch: 300,
        ..ImportOptions::default()
    };
    zv_io::import_file(path, Format::Las, store.clone(), &opts).unwrap_or_else(|e| panic!("{e}"));
    ZvStore::open(store).unwrap()
}

fn export(store: &ZvStore, path: &Path) {
    let format = Format::from_path(path).unwrap();
    let name = path.display().to_string();
    let mut out = Vec::new();
    zv_io::export(store, format, &mut out, &name, &ExportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(path, out).unwrap();
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// A laspy content as one row per point (x, y, z, then the dimensions by name) of bit
/// patterns, sorted: the store's vertex order is its chunk order, not the file's.
fn content_rows(content: &Value) -> (Vec<String>, Vec<Vec<u64>>) {
    let dims = content["dims"].as_object().unwrap();
    let mut names: Vec<String> = dims.keys().cloned().collect();
    names.sort();
    let mut cols: Vec<Vec<f64>> = ["x", "y", "z"]
        .iter()
        .map(|a| numbers(&content[a]))
        .collect();
    cols.extend(names.iter().map(|n| numbers(&dims[n])));
    (names, sorted_rows(&cols))
}

/// Columns as sorted rows of bit patterns.
fn sorted_rows(cols: &[Vec<f64>]) -> Vec<Vec<u64>> {
    let n = cols[0].len();
    let mut rows: Vec<Vec<u64>> = (0..n)
        .map(|i| cols.iter().map(|c| c[i].to_bits()).collect())
        .collect();
    rows.sort();
    rows
}

/// The store's level 0 checked against laspy's content: positions bit for bit, every
/// dimension present and equal, nothing else.
fn assert_store_is(store: &ZvStore, content: &Value, case: &str) {
    let doc =
        GeometryDocument::from_value(&zv_format::export::export_geometry(store).unwrap()).unwrap();
    let (want_names, want) = content_rows(content);
    let mut names: Vec<String> = doc.vertex_attributes.keys().cloned().collect();
    names.sort();
    assert_eq!(names, want_names, "{case}: the dimensions");
    let mut cols: Vec<Vec<f64>> = (0..3)
        .map(|a| doc.vertices.iter().map(|p| p[a]).collect())
        .collect();
    for name in &names {
        let AttributeValues::Numeric { rows, .. } = &doc.vertex_attributes[name].values else {
            panic!("{case}: {name} is categorical")
        };
        cols.push(
            (0..rows.num_rows())
                .map(|r| rows.get_f64(r, 0).unwrap())
                .collect(),
        );
    }
    let got = sorted_rows(&cols);
    assert_eq!(got.len(), want.len(), "{case}: the number of points");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "{case}: a point (x, y, z, {names:?})");
    }
}

/// Two laspy contents equal (the compression flag aside; points in any order).
fn assert_same_file(got: &Value, want: &Value, case: &str) {
    for key in ["version", "point_format", "scale", "offset"] {
        assert_eq!(got[key], want[key], "{case}: {key}");
    }
    assert_eq!(content_rows(got), content_rows(want), "{case}: the points");
}

#[test]
fn laspy_files_import_equal_and_zv_exports_read_back_equal_in_laspy() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("1.2", 1, "las"),
        ("1.2", 3, "las"),
        ("1.4", 6, "las"),
        ("1.4", 7, "las"),
        ("1.4", 8, "las"),
        ("1.2", 1, "laz"),
        ("1.2", 3, "laz"),
        ("1.4", 6, "laz"),
        ("1.4", 7, "laz"),
        ("1.4", 8, "laz"),
    ];
    for (version, format, ext) in cases {
        let case = format!("LAS {version} format {format} .{ext}");
        let input = dir.path().join(format!("in-{format}.{ext}"));
        let content = python(&[
            "write",
            input.to_str().unwrap(),
            version,
            &format.to_string(),
        ]);
        assert_eq!(content["compressed"], Value::Bool(ext == "laz"), "{case}");
        let store = import(&input);
        assert_store_is(&store, &content, &case);
        for out_ext in ["las", "laz"] {
            let out = dir.path().join(format!("out-{format}-{ext}.{out_ext}"));
            export(&store, &out);
            let back = python(&["read", out.to_str().unwrap()]);
            assert_eq!(back["compressed"], Value::Bool(out_ext == "laz"), "{case}");
            assert_same_file(&back, &content, &format!("{case} → .{out_ext}"));
            // and zv reads its own file back to the same store content
            assert_store_is(
                &import(&out),
                &content,
                &format!("{case} → .{out_ext} → zv"),
            );
        }
    }
}

#[test]
fn a_point_cloud_from_elsewhere_exports_as_las_1_2_with_its_dimensions() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("points.csv");
    std::fs::write(
        &csv,
        "x,y,z,intensity,red,green,blue\n1.25,2.5,-3,100,65535,0,7\n10.125,-4,0.001,7,1,2,3\n",
    )
    .unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(&csv, Format::Csv, store.clone(), &ImportOptions::default()).unwrap();
    let store = ZvStore::open(store).unwrap();
    let out = dir.path().join("out.las");
    export(&store, &out);
    let back = python(&["read", out.to_str().unwrap()]);
    assert_eq!(back["version"], "1.2");
    assert_eq!(back["point_format"], 2);
    // positions on the 0.001 grid (the default scale), within half a step
    let near =
        |got: Vec<f64>, want: [f64; 2]| got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 0.0005);
    assert!(near(numbers(&back["x"]), [1.25, 10.125]), "{back}");
    assert!(near(numbers(&back["y"]), [2.5, -4.0]), "{back}");
    assert!(near(numbers(&back["z"]), [-3.0, 0.001]), "{back}");
    assert_eq!(numbers(&back["dims"]["intensity"]), [100.0, 7.0]);
    assert_eq!(numbers(&back["dims"]["red"]), [65535.0, 1.0]);
    assert_eq!(numbers(&back["dims"]["blue"]), [7.0, 3.0]);
    assert_eq!(numbers(&back["dims"]["classification"]), [0.0, 0.0]);
}
