//! Files written by widely used Python libraries (plyfile, trimesh, pandas, from PyPI) import
//! into ZV stores with the same content, bit for bit; files zv exports are read by them with
//! the same content.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use zv_format::document::{AttributeValues, GeometryDocument};
use zv_format::ZvStore;
use zv_io::{ExportOptions, Format, ImportOptions, PlyEncoding};
use zv_testkit::env::io_script;

fn python(args: &[&str]) -> Value {
    io_script("io_interop.py", args)
}

fn import(path: &Path, format: Format) -> ZvStore {
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    zv_io::import_file(path, format, store.clone(), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    ZvStore::open(store).unwrap()
}

fn level0(store: &ZvStore) -> GeometryDocument {
    GeometryDocument::from_value(&zv_format::export::export_geometry(store).unwrap()).unwrap()
}

fn column(doc: &GeometryDocument, name: &str) -> Vec<f64> {
    match &doc.vertex_attributes[name].values {
        AttributeValues::Numeric { rows, .. } => (0..rows.num_rows())
            .map(|r| rows.get_f64(r, 0).unwrap())
            .collect(),
        AttributeValues::Categorical(_) => panic!("{name} is categorical"),
    }
}

/// Rows as bit patterns, sorted (the store's vertex order is its chunk order).
fn sorted_bits(rows: impl IntoIterator<Item = Vec<f64>>) -> Vec<Vec<u64>> {
    let mut v: Vec<Vec<u64>> = rows
        .into_iter()
        .map(|r| r.iter().map(|x| x.to_bits()).collect())
        .collect();
    v.sort();
    v
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Faces as sorted triples of vertex positions (bit patterns), sorted.
fn face_positions(vertices: &[Vec<f64>], faces: &[Vec<u64>]) -> Vec<Vec<Vec<u64>>> {
    let mut out: Vec<Vec<Vec<u64>>> = faces
        .iter()
        .map(|f| {
            let mut c: Vec<Vec<u64>> = f
                .iter()
                .map(|&i| vertices[i as usize].iter().map(|x| x.to_bits()).collect())
                .collect();
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

#[test]
fn plyfile_point_clouds_import_bit_exact_in_every_encoding() {
    let dir = tempfile::tempdir().unwrap();
    python(&["write-ply", dir.path().to_str().unwrap()]);
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("expected.json")).unwrap()).unwrap();
    let want = sorted_bits(expected["points"].as_array().unwrap().iter().map(f64s));
    assert_eq!(want.len(), 500);
    for name in ["points_ascii.ply", "points_le.ply", "points_be.ply"] {
        let store = import(&dir.path().join(name), Format::Ply);
        let doc = level0(&store);
        assert_eq!(
            doc.vertex_dtype,
            Some(zv_core::data_type::DataType::Float32),
            "{name}"
        );
        let (red, intensity, s) = (
            column(&doc, "red"),
            column(&doc, "intensity"),
            column(&doc, "s"),
        );
        let got = sorted_bits(doc.vertices.iter().enumerate().map(|(i, p)| {
            let mut r = p.clone();
            r.extend([red[i], intensity[i], s[i]]);
            r
        }));
        assert_eq!(got, want, "{name}");
        let types: Vec<String> = ["red", "intensity", "s"]
            .iter()
            .map(|n| match &doc.vertex_attributes[*n].values {
                AttributeValues::Numeric { rows, .. } => rows.data_type().name().to_owned(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(types, ["uint8", "float64", "int16"], "{name}");
    }
}

#[test]
fn trimesh_and_plyfile_meshes_import_with_the_same_faces() {
    let dir = tempfile::tempdir().unwrap();
    python(&["write-ply", dir.path().to_str().unwrap()]);
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("expected.json")).unwrap()).unwrap();
    for (file, key) in [("mesh.ply", "mesh"), ("quads_be.ply", "quads")] {
        let e = &expected[key];
        let ev: Vec<Vec<f64>> = e["vertices"].as_array().unwrap().iter().map(f64s).collect();
        let ef: Vec<Vec<u64>> = e["faces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                f.as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_u64().unwrap())
                    .collect()
            })
            .collect();
        let doc = level0(&import(&dir.path().join(file), Format::Ply));
        assert_eq!(doc.geometry, zv_format::Geometry::Mesh);
        assert_eq!(
            sorted_bits(doc.vertices.clone()),
            sorted_bits(ev.clone()),
            "{file}"
        );
        assert_eq!(
            face_positions(&doc.vertices, &doc.faces),
            face_positions(&ev, &ef),
            "{file}"
        );
        if key == "quads" {
            // the face attribute follows its face
            let q = match &doc.link_attributes["quality"].values {
                AttributeValues::Numeric { rows, .. } => (0..2)
                    .map(|r| rows.get_f64(r, 0).unwrap())
                    .collect::<Vec<_>>(),
                _ => panic!(),
            };
            let eq = f64s(&e["quality"]);
            for (f, face) in doc.faces.iter().enumerate() {
                let pos = face_positions(&doc.vertices, std::slice::from_ref(face));
                let k = ef
                    .iter()
                    .position(|g| face_positions(&ev, std::slice::from_ref(g)) == pos)
                    .unwrap();
                assert_eq!(q[f].to_bits(), eq[k].to_bits());
            }
        }
    }
}

#[test]
fn zv_exported_ply_is_read_by_plyfile_and_trimesh_with_the_same_content() {
    let dir = tempfile::tempdir().unwrap();
    python(&["write-ply", dir.path().to_str().unwrap()]);
    for (src, mesh) in [
        ("points_le.ply", false),
        ("quads_be.ply", true),
        ("mesh.ply", true),
    ] {
        let store = import(&dir.path().join(src), Format::Ply);
        let doc = level0(&store);
        for enc in [
            PlyEncoding::Ascii,
            PlyEncoding::BinaryLittleEndian,
            PlyEncoding::BinaryBigEndian,
        ] {
            let out = dir.path().join(format!("out_{}_{src}", enc.header_name()));
            let mut f = std::fs::File::create(&out).unwrap();
            zv_io::export(
                &store,
                Format::Ply,
                &mut f,
                "out.ply",
                &ExportOptions {
                    ply_encoding: enc,
                    ..Default::default()
                },
            )
            .unwrap();
            drop(f);
            let read = python(&["read-ply", out.to_str().unwrap()]);
            assert_eq!(read["text"], Value::Bool(enc == PlyEncoding::Ascii));
            let v = &read["elements"]["vertex"];
            let props = &v["properties"];
            let got: Vec<Vec<f64>> = (0..doc.vertices.len())
                .map(|i| {
                    ["x", "y", "z"]
                        .iter()
                        .map(|a| props[a][i].as_f64().unwrap())
                        .collect()
                })
                .collect();
            assert_eq!(
                sorted_bits(got.clone()),
                sorted_bits(doc.vertices.clone()),
                "{src} {enc:?}"
            );
            // same order as the level, so attributes compare row by row
            assert_eq!(got, doc.vertices);
            for name in doc.vertex_attributes.keys() {
                assert_eq!(f64s(&props[name]), column(&doc, name), "{src} {name}");
            }
            if mesh {
                let faces: Vec<Vec<u64>> = read["elements"]["face"]["properties"]["vertex_indices"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        f.as_array()
                            .unwrap()
                            .iter()
                            .map(|i| i.as_u64().unwrap())
                            .collect()
                    })
                    .collect();
                assert_eq!(faces, doc.faces, "{src} {enc:?}");
                if doc.faces[0].len() == 3 {
                    let tv: Vec<Vec<f64>> = read["trimesh"]["vertices"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(f64s)
                        .collect();
                    let tf: Vec<Vec<u64>> = read["trimesh"]["faces"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| {
                            f.as_array()
                                .unwrap()
                                .iter()
                                .map(|i| i.as_u64().unwrap())
                                .collect()
                        })
                        .collect();
                    assert_eq!(
                        face_positions(&tv, &tf),
                        face_positions(&doc.vertices, &doc.faces)
                    );
                }
            }
        }
    }
}

#[test]
fn pandas_csv_imports_and_zv_csv_reads_back_in_pandas() {
    let dir = tempfile::tempdir().unwrap();
    python(&["write-csv", dir.path().to_str().unwrap()]);
    let e: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("expected.json")).unwrap()).unwrap();
    let store = import(&dir.path().join("points.csv"), Format::Csv);
    let doc = level0(&store);
    let n = 300;
    // rows keyed by position bits: (x, y, z) → (label, value, object_id)
    let want: std::collections::BTreeMap<Vec<u64>, (String, u64, u64)> = (0..n)
        .map(|i| {
            let p = ["x", "y", "z"]
                .iter()
                .map(|c| e[c][i].as_f64().unwrap().to_bits())
                .collect();
            (
                p,
                (
                    e["label"][i].as_str().unwrap().to_owned(),
                    e["value"][i].as_f64().unwrap().to_bits(),
                    e["object_id"][i].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let labels = match &doc.vertex_attributes["label"].values {
        AttributeValues::Categorical(v) => v.clone(),
        _ => panic!("label is not categorical"),
    };
    let value = column(&doc, "value");
    let ids = doc.object_ids.clone().unwrap();
    let got: std::collections::BTreeMap<Vec<u64>, (String, u64, u64)> = (0..n)
        .map(|i| {
            (
                doc.vertices[i].iter().map(|x| x.to_bits()).collect(),
                (labels[i].clone().unwrap(), value[i].to_bits(), ids[i]),
            )
        })
        .collect();
    assert_eq!(got, want);
    // and back out, read by pandas
    let out = dir.path().join("zv.csv");
    let mut f = std::fs::File::create(&out).unwrap();
    zv_io::export(
        &store,
        Format::Csv,
        &mut f,
        "zv.csv",
        &ExportOptions::default(),
    )
    .unwrap();
    drop(f);
    let read = python(&["read-csv", out.to_str().unwrap()]);
    let c = &read["columns"];
    let back: std::collections::BTreeMap<Vec<u64>, (String, u64, u64)> = (0..n)
        .map(|i| {
            let p = ["x", "y", "z"]
                .iter()
                .map(|a| c[a][i].as_f64().unwrap().to_bits())
                .collect();
            (
                p,
                (
                    c["label"][i].as_str().unwrap().to_owned(),
                    c["value"][i].as_f64().unwrap().to_bits(),
                    c["object_id"][i].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(back, want);
    assert_eq!(read["dtypes"]["object_id"], "int64");
}

fn mesh_json(v: &Value) -> (Vec<Vec<f64>>, Vec<Vec<u64>>) {
    let vertices = v["vertices"].as_array().unwrap().iter().map(f64s).collect();
    let faces = v["faces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f.as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap())
                .collect()
        })
        .collect();
    (vertices, faces)
}

#[test]
fn trimesh_stl_imports_merged_and_zv_stl_reads_back_in_trimesh() {
    let dir = tempfile::tempdir().unwrap();
    python(&["write-stl", dir.path().to_str().unwrap()]);
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("expected.json")).unwrap()).unwrap();
    let (ev, ef) = mesh_json(&expected);
    for name in ["mesh.stl", "mesh_ascii.stl"] {
        let store = import(&dir.path().join(name), Format::Stl);
        let doc = level0(&store);
        // shared corners merged exactly: as many vertices as the mesh has
        assert_eq!(doc.vertices.len(), ev.len(), "{name}");
        assert_eq!(
            face_positions(&doc.vertices, &doc.faces),
            face_positions(&ev, &ef),
            "{name}"
        );
        let out = dir.path().join(format!("zv_{name}"));
        let mut f = std::fs::File::create(&out).unwrap();
        zv_io::export(
            &store,
            Format::Stl,
            &mut f,
            "zv.stl",
            &ExportOptions::default(),
        )
        .unwrap();
        drop(f);
        let (tv, tf) = mesh_json(&python(&["read-mesh", out.to_str().unwrap()]));
        assert_eq!(face_positions(&tv, &tf), face_positions(&ev, &ef), "{name}");
    }
}

#[test]
fn trimesh_obj_imports_and_zv_obj_reads_back_in_trimesh() {
    let dir = tempfile::tempdir().unwrap();
    python(&["write-stl", dir.path().to_str().unwrap()]);
    let expected: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("expected_obj.json")).unwrap())
            .unwrap();
    let (ev, ef) = mesh_json(&expected);
    let store = import(&dir.path().join("mesh.obj"), Format::Obj);
    let doc = level0(&store);
    assert_eq!(
        doc.vertex_dtype,
        Some(zv_core::data_type::DataType::Float64)
    );
    assert_eq!(
        face_positions(&doc.vertices, &doc.faces),
        face_positions(&ev, &ef)
    );
    let out = dir.path().join("zv.obj");
    let mut f = std::fs::File::create(&out).unwrap();
    zv_io::export(
        &store,
        Format::Obj,
        &mut f,
        "zv.obj",
        &ExportOptions::default(),
    )
    .unwrap();
    drop(f);
    let (tv, tf) = mesh_json(&python(&["read-mesh", out.to_str().unwrap()]));
    assert_eq!(face_positions(&tv, &tf), face_positions(&ev, &ef));
}
