//! Malformed files give an error naming the file and the line or byte offset, and leave the
//! store empty; SWC round trips; hand-written files of each format import as written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use zv_core::key::StorePrefix;
use zv_core::store::ListableStore;
use zv_format::document::{AttributeValues, GeometryDocument};
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions};

/// Imports `bytes` as `name`; the error's message, and that the store stayed empty.
fn import_error(dir: &Path, name: &str, bytes: &[u8], format: Format) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        batch: 2,
        ..Default::default()
    };
    let err = zv_io::import_file(&path, format, store.clone(), &opts)
        .err()
        .unwrap_or_else(|| panic!("{name} imported"))
        .to_string();
    assert!(
        store.list_prefix(&StorePrefix::root()).unwrap().is_empty(),
        "{name}: the store is not empty"
    );
    assert!(err.contains(&path.display().to_string()), "{name}: {err}");
    err
}

fn binary_points(n_header: usize, n_body: usize) -> Vec<u8> {
    let mut b = format!(
        "ply\nformat binary_little_endian 1.0\nelement vertex {n_header}\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
    )
    .into_bytes();
    for i in 0..n_body {
        for v in [i as f32, 1.0, 2.0] {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    b
}

#[test]
fn truncated_binary_ply_names_the_byte() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = binary_points(5, 5);
    let header_len = b.len() - 60;
    b.truncate(b.len() - 6); // vertex 4 ends early: its y is cut
    let err = import_error(dir.path(), "cut.ply", &b, Format::Ply);
    let at = header_len + 4 * 12 + 4;
    assert!(
        err.contains(&format!(
            "byte {at}: the file is truncated in vertex 4, property `y`"
        )),
        "{err}"
    );
}

#[test]
fn header_lies_are_caught_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    // more records than the header says
    let b = binary_points(3, 4);
    let err = import_error(dir.path(), "more.ply", &b, Format::Ply);
    assert!(err.contains("data after the last element"), "{err}");
    // ascii, fewer records than the header says
    let text = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nend_header\n0 0\n1 1\n";
    let err = import_error(dir.path(), "fewer.ply", text.as_bytes(), Format::Ply);
    assert!(
        err.contains("end of file: the file ends in vertex 2"),
        "{err}"
    );
    // a value that does not fit the declared type
    let text = "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty uchar red\nend_header\n0 0 300\n";
    let err = import_error(dir.path(), "type.ply", text.as_bytes(), Format::Ply);
    assert!(
        err.contains("line 8: vertex 0, property `red`: `300` is not a uchar value"),
        "{err}"
    );
}

/// Fuzz finding (`io_ply`): a vertex property declared twice (four axis values for three
/// axes) indexed past the end of a point and panicked; with `x, x, y` it would have written
/// three values per 2-D vertex. Any repeated vertex property name is refused.
#[test]
fn a_vertex_property_declared_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, props, row) in [
        ("xxyz.ply", "x x y z", "0 1 2 3"),
        ("xxy.ply", "x x y", "0 1 2"),
        ("ids.ply", "x y object_id object_id", "0 1 2 3"),
        ("cols.ply", "x y w w", "0 1 2 3"),
    ] {
        let header: String = props
            .split(' ')
            .map(|p| {
                let ty = if p == "object_id" { "int" } else { "float" };
                format!("property {ty} {p}\n")
            })
            .collect();
        let text = format!("ply\nformat ascii 1.0\nelement vertex 1\n{header}end_header\n{row}\n");
        let err = import_error(dir.path(), name, text.as_bytes(), Format::Ply);
        assert!(err.contains("is declared twice"), "{name}: {err}");
    }
}

#[test]
fn a_face_naming_a_missing_vertex_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nelement face 2\nproperty list uchar int vertex_indices\nend_header\n0 0\n1 0\n0 1\n3 0 1 2\n3 0 2 7\n";
    let err = import_error(dir.path(), "face.ply", text.as_bytes(), Format::Ply);
    assert!(
        err.contains("line 13: face 1 names vertex 7, but the file has 3 vertices"),
        "{err}"
    );
    let text = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n0 0\n1 0\n0 1\n5 0 1 2 0 1\n";
    let err = import_error(dir.path(), "penta.ply", text.as_bytes(), Format::Ply);
    assert!(err.contains("line 12: face 0 has 5 vertices"), "{err}");
}

#[test]
fn swc_cycles_and_bad_csv_cells_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let swc = "# a cycle\n1 1 0 0 0 1 -1\n2 3 1 0 0 1 4\n3 3 2 0 0 1 2\n4 3 3 0 0 1 3\n";
    let err = import_error(dir.path(), "cycle.swc", swc.as_bytes(), Format::Swc);
    assert!(
        err.contains("line 3: sample 2 is its own ancestor (a parent cycle)"),
        "{err}"
    );
    let csv = "x,y,z,v\n1,2,3,4\n5,6,7,8\n9,10,11,12\n1,2,oops,4\n";
    let err = import_error(dir.path(), "cell.csv", csv.as_bytes(), Format::Csv);
    assert!(
        err.contains("line 5: column `z`: `oops` is not a number"),
        "{err}"
    );
    let csv = "x,y,z\n1,2,3\n4,5\n";
    let err = import_error(dir.path(), "short.csv", csv.as_bytes(), Format::Csv);
    assert!(err.contains("line 3"), "{err}");
    let csv = "a,b\n1,2\n";
    let err = import_error(dir.path(), "cols.csv", csv.as_bytes(), Format::Csv);
    assert!(err.contains("line 1: no column `x`"), "{err}");
}

fn level0(store: &ZvStore) -> GeometryDocument {
    GeometryDocument::from_value(&zv_format::export::export_geometry(store).unwrap()).unwrap()
}

#[test]
fn swc_forests_round_trip_with_type_and_radius() {
    let dir = tempfile::tempdir().unwrap();
    let text = "# neuron\n1 1 0 0 0 2.5 -1\n2 3 1.5 0 0 0.5 1\n3 3 2.5 0.25 0 0.5 2\n4 4 1.5 1 0 0.75 2\n10 1 40 40 40 3 -1\n11 2 41 40 40 1 10\n";
    let path = dir.path().join("n.swc");
    std::fs::write(&path, text).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    let opts = ImportOptions {
        chunk_shape: Some(vec![2.0, 2.0, 2.0]),
        ..Default::default()
    };
    let summary = zv_io::import_file(&path, Format::Swc, store.clone(), &opts).unwrap();
    assert_eq!((summary.vertices, summary.objects), (6, 2));
    let zv = ZvStore::open(store).unwrap();
    let mut out = Vec::new();
    zv_io::export(
        &zv,
        Format::Swc,
        &mut out,
        "n2.swc",
        &ExportOptions::default(),
    )
    .unwrap();
    // the exported file describes the same trees: sample → (type, position, radius, parent's position)
    let parse = |t: &str| {
        let rows: Vec<Vec<f64>> = t
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split_whitespace().map(|w| w.parse().unwrap()).collect())
            .collect();
        let pos = |id: f64| {
            rows.iter()
                .find(|r| r[0] == id)
                .map(|r| vec![r[2], r[3], r[4]])
        };
        let mut v: Vec<String> = rows
            .iter()
            .map(|r| format!("{:?}", (r[1], &r[2..6], pos(r[6]))))
            .collect();
        v.sort();
        v
    };
    assert_eq!(parse(&String::from_utf8(out).unwrap()), parse(text));
    let doc = level0(&zv);
    match &doc.vertex_attributes["type"].values {
        AttributeValues::Numeric { rows, .. } => assert_eq!(rows.data_type().name(), "int32"),
        _ => panic!(),
    }
}

#[test]
fn exports_refuse_geometries_their_format_cannot_hold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("n.swc");
    std::fs::write(&path, "1 1 0 0 0 1 -1\n2 1 1 0 0 1 1\n").unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(&path, Format::Swc, store.clone(), &ImportOptions::default()).unwrap();
    let zv = ZvStore::open(store).unwrap();
    for f in [Format::Ply, Format::Csv] {
        let err = zv_io::export(&zv, f, &mut Vec::new(), "out", &ExportOptions::default())
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("the store is a") && err.contains("skeleton"),
            "{err}"
        );
    }
}

#[test]
fn stl_truncated_or_malformed_names_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = vec![b' '; 80];
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&[0u8; 50]);
    b.extend_from_slice(&[0u8; 20]); // facet 1 is cut
    let err = import_error(dir.path(), "cut.stl", &b, Format::Stl);
    assert!(
        err.contains("byte 134: the file is truncated in facet 1 (the header says 2)"),
        "{err}"
    );
    let text = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\nendsolid t\n";
    let err = import_error(dir.path(), "two.stl", text.as_bytes(), Format::Stl);
    assert!(
        err.contains("line 6: facet 0 has 2 vertices, not 3"),
        "{err}"
    );
}

#[test]
fn obj_negative_indices_polylines_and_large_polygons() {
    let dir = tempfile::tempdir().unwrap();
    // negative indices count back from the last vertex defined
    let path = dir.path().join("q.obj");
    std::fs::write(
        &path,
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf -4 -3 -2 -1\nf 1/1/1 2/2/2 3/3/3 4/4/4\n",
    )
    .unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(&path, Format::Obj, store.clone(), &ImportOptions::default()).unwrap();
    let doc = level0(&ZvStore::open(store).unwrap());
    let quad = |f: &Vec<u64>| {
        f.iter()
            .map(|&i| doc.vertices[i as usize].clone())
            .collect::<Vec<_>>()
    };
    let want = vec![
        vec![0.0, 0.0, 0.0],
        vec![1.0, 0.0, 0.0],
        vec![1.0, 1.0, 0.0],
        vec![0.0, 1.0, 0.0],
    ];
    assert_eq!(doc.faces.len(), 2);
    for f in &doc.faces {
        // the same cycle of corners, from wherever the store starts it
        let q = quad(f);
        let k = q.iter().position(|p| *p == want[0]).unwrap();
        let rotated: Vec<_> = (0..4).map(|i| q[(k + i) % 4].clone()).collect();
        assert_eq!(rotated, want);
    }
    // polylines round trip
    let path = dir.path().join("l.obj");
    std::fs::write(
        &path,
        "v 0 0 0\nv 5 0 0\nv 5 5 0\nv 9 9 9\nl 1 2 3\nl 4 -1\n",
    )
    .unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(&path, Format::Obj, store.clone(), &ImportOptions::default()).unwrap();
    let zv = ZvStore::open(store).unwrap();
    let mut out = Vec::new();
    zv_io::export(
        &zv,
        Format::Obj,
        &mut out,
        "l2.obj",
        &ExportOptions::default(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "# written by zv\nv 0 0 0\nv 5 0 0\nv 5 5 0\nl 1 2 3\nv 9 9 9\nv 9 9 9\nl 4 5\n"
    );
    let err = import_error(
        dir.path(),
        "penta.obj",
        b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 2 0\nf 1 2 3 4 5\n",
        Format::Obj,
    );
    assert!(err.contains("line 6: a face of 5 vertices"), "{err}");
    let err = import_error(
        dir.path(),
        "far.obj",
        b"v 0 0 0\nv 1 0 0\nf 1 2 3\n",
        Format::Obj,
    );
    assert!(
        err.contains("line 3: `3` names no vertex (2 are defined so far)"),
        "{err}"
    );
}
