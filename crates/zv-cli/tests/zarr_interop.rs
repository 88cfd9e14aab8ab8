//! Interoperability of zv's Zarr v3 layer with zarr-python 3 (a real client), both ways, over
//! a matrix of data types, shapes (partial edge chunks, 0-d, 1-d), codecs and chains, chunk key
//! encodings and fill values. The Python side is `tests/interop/zarr_interop.py`.
//!
//! - zarr-python writes → zv reads (library and `zv zarr get --raw`): equal values, same
//!   interpretation of the metadata;
//! - zv writes → zarr-python reads: equal values, same interpretation of the metadata;
//! - zarr-python's `variable_length_bytes` arrays read in zv.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{json, Value};
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::grid::Region;
use zv_core::metadata::ArrayMetadata;
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_store_fs::FilesystemStore;
use zv_testkit::env::{workspace_root, zarr_python};

mod zarr_cases;

use zarr_cases::{matrix, to_le, Case};

fn write_spec(dir: &Path, cases: &[Case]) -> std::path::PathBuf {
    for c in cases {
        std::fs::write(
            dir.join(format!("{}.expected.bin", c.name)),
            to_le(&c.expected(), c.data_type),
        )
        .unwrap();
    }
    let spec = json!({"cases": cases.iter().map(|c| c.spec(dir)).collect::<Vec<_>>()});
    let path = dir.join("spec.json");
    std::fs::write(&path, spec.to_string()).unwrap();
    path
}

fn run_python(args: &[&str]) -> Value {
    let script = workspace_root().join("tests/interop/zarr_interop.py");
    let out = Command::new(zarr_python())
        .arg(&script)
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "zarr_interop.py {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python report")
}

fn store(dir: &Path) -> Arc<dyn Store> {
    zv_format::link_plugins();
    Arc::new(FilesystemStore::new(dir).unwrap())
}

fn codec_names(codecs: &Value) -> Vec<String> {
    codecs
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Both sides must read the same metadata semantics.
fn check_interpretation(case: &Case, zv: &ArrayMetadata, py: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let mut check = |what: &str, ours: Value, theirs: &Value| {
        if &ours != theirs {
            problems.push(format!(
                "{}: {what}: zv {ours} vs zarr-python {theirs}",
                case.name
            ));
        }
    };
    check("data_type", json!(zv.data_type.name()), &py["data_type"]);
    check("shape", json!(zv.shape), &py["shape"]);
    check("chunks", json!(zv.chunk_shape()), &py["chunks"]);
    let fill_hex: String = to_le(zv.fill_value.as_bytes(), zv.data_type)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    check("fill value bits", json!(fill_hex), &py["fill_value_le_hex"]);
    let zv_codecs = serde_json::to_value(&zv.codecs).unwrap();
    check(
        "codec names",
        json!(codec_names(&zv_codecs)),
        &json!(codec_names(&py["codecs"])),
    );
    // Every configuration value zv has must be what zarr-python has.
    for (ours, theirs) in zv_codecs
        .as_array()
        .unwrap()
        .iter()
        .zip(py["codecs"].as_array().unwrap())
    {
        if let Some(cfg) = ours.get("configuration").and_then(Value::as_object) {
            for (k, v) in cfg {
                let one_byte_endian = k == "endian" && zv.data_type.component_size() == Some(1);
                if !one_byte_endian && theirs["configuration"].get(k) != Some(v) {
                    check(
                        &format!("codec {} {k}", ours["name"]),
                        v.clone(),
                        &theirs["configuration"][k],
                    );
                }
            }
        }
    }
    let cke = match zv.chunk_key_encoding {
        zv_core::metadata::ChunkKeyEncoding::Default { separator } => {
            json!({"name": "default", "configuration": {"separator": separator.to_string()}})
        }
        zv_core::metadata::ChunkKeyEncoding::V2 { separator } => {
            json!({"name": "v2", "configuration": {"separator": separator.to_string()}})
        }
    };
    check("chunk_key_encoding", cke, &py["chunk_key_encoding"]);
    check(
        "dimension_names",
        serde_json::to_value(&zv.dimension_names).unwrap(),
        &py["dimension_names"],
    );
    check(
        "attributes",
        Value::Object(zv.attributes.clone()),
        &py["attributes"],
    );
    problems
}

fn read_all_le(array: &Array) -> Vec<u8> {
    match array
        .retrieve_region(&Region::whole(array.shape()))
        .unwrap()
    {
        ArrayBytes::Fixed(b) => to_le(&b, array.data_type()),
        ArrayBytes::Variable { .. } => panic!("fixed-size expected"),
    }
}

fn zv_get_raw(dir: &Path, name: &str, region: Option<&str>) -> Vec<u8> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_zv"));
    cmd.args(["zarr", "get"]).arg(dir).arg(name).arg("--raw");
    if let Some(r) = region {
        cmd.args(["--region", r]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "zv zarr get {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn zarr_python_writes_zv_reads() {
    let dir = tempfile::tempdir().unwrap();
    let cases = matrix();
    let spec = write_spec(dir.path(), &cases);
    let store_dir = dir.path().join("py.zarr");
    std::fs::create_dir_all(&store_dir).unwrap();
    let report = run_python(&["write", spec.to_str().unwrap(), store_dir.to_str().unwrap()]);
    let store = store(&store_dir);
    let mut problems = Vec::new();
    for case in &cases {
        let py = &report["report"][&case.name];
        let array = Array::open(store.clone(), &NodePath::new(&case.name).unwrap())
            .unwrap_or_else(|e| panic!("{}: zv cannot open: {e}", case.name));
        problems.extend(check_interpretation(case, array.metadata(), py));
        let expected = to_le(&case.expected(), case.data_type);
        let zarrpy = std::fs::read(store_dir.join(format!("{}.zarrpy.bin", case.name))).unwrap();
        assert_eq!(
            zarrpy, expected,
            "{}: zarr-python does not read back what it wrote",
            case.name
        );
        if read_all_le(&array) != expected {
            problems.push(format!("{}: values read by zv differ", case.name));
        }
        if zv_get_raw(&store_dir, &case.name, None) != expected {
            problems.push(format!("{}: `zv zarr get --raw` differs", case.name));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(cases.len() >= 60, "matrix has only {} cases", cases.len());
}

#[test]
fn zv_writes_zarr_python_reads() {
    let dir = tempfile::tempdir().unwrap();
    let cases = matrix();
    let spec = write_spec(dir.path(), &cases);
    let store_dir = dir.path().join("zv.zarr");
    let store = store(&store_dir);
    for case in &cases {
        let array = Array::create(
            store.clone(),
            &NodePath::new(&case.name).unwrap(),
            case.metadata(),
        )
        .unwrap();
        let data = case.expected();
        match case.written_rows {
            Some(rows) if !case.shape.is_empty() => {
                let row_bytes = data.len() / case.shape[0] as usize * rows as usize;
                let mut shape = case.shape.clone();
                shape[0] = rows;
                let region = Region::new(vec![0; shape.len()], shape).unwrap();
                array
                    .store_region(
                        &region,
                        ArrayBytes::Fixed(data[..row_bytes].to_vec().into()),
                    )
                    .unwrap();
            }
            _ => array
                .store_region(&Region::whole(&case.shape), ArrayBytes::Fixed(data.into()))
                .unwrap(),
        }
    }
    let report = run_python(&["read", spec.to_str().unwrap(), store_dir.to_str().unwrap()]);
    let mut problems = Vec::new();
    for case in &cases {
        let py = &report["report"][&case.name];
        problems.extend(check_interpretation(case, &case.metadata(), py));
        let expected = to_le(&case.expected(), case.data_type);
        let zarrpy = std::fs::read(store_dir.join(format!("{}.zarrpy.bin", case.name))).unwrap();
        if zarrpy != expected {
            problems.push(format!("{}: values read by zarr-python differ", case.name));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn regions_through_the_cli_match() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<Case> = matrix()
        .into_iter()
        .filter(|c| {
            [
                "dtype_int16",
                "transpose_3d",
                "blosc_zstd_shuffle",
                "cke_v2_slash",
                "fill_nan_f32",
            ]
            .contains(&c.name.as_str())
        })
        .collect();
    assert_eq!(cases.len(), 5);
    let spec = write_spec(dir.path(), &cases);
    let store_dir = dir.path().join("py.zarr");
    std::fs::create_dir_all(&store_dir).unwrap();
    run_python(&["write", spec.to_str().unwrap(), store_dir.to_str().unwrap()]);
    for case in &cases {
        let es = case.data_type.size().unwrap();
        let expected = to_le(&case.expected(), case.data_type);
        // the second half of every dimension, and one interior element
        let region: Vec<(u64, u64)> = case.shape.iter().map(|&n| (n / 2, n)).collect();
        let text: Vec<String> = region.iter().map(|(a, b)| format!("{a}:{b}")).collect();
        let got = zv_get_raw(&store_dir, &case.name, Some(&text.join(",")));
        let mut want = Vec::new();
        let strides: Vec<u64> = (0..case.shape.len())
            .map(|d| case.shape[d + 1..].iter().product())
            .collect();
        let mut idx: Vec<u64> = region.iter().map(|r| r.0).collect();
        'outer: loop {
            let lin: u64 = idx.iter().zip(&strides).map(|(i, s)| i * s).sum();
            want.extend_from_slice(&expected[lin as usize * es..(lin as usize + 1) * es]);
            let mut d = idx.len();
            loop {
                if d == 0 {
                    break 'outer;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < region[d].1 {
                    break;
                }
                idx[d] = region[d].0;
            }
        }
        assert_eq!(got, want, "{}: region {text:?}", case.name);
    }
}

#[test]
fn zarr_python_variable_length_bytes_read_in_zv() {
    let dir = tempfile::tempdir().unwrap();
    let report = run_python(&["vlen", dir.path().to_str().unwrap()]);
    let store = store(dir.path());
    let cases = report["report"].as_object().unwrap();
    assert_eq!(cases.len(), 3);
    for (name, expected) in cases {
        let array = Array::open(store.clone(), &NodePath::new(name).unwrap()).unwrap();
        assert_eq!(array.data_type(), DataType::VariableLengthBytes);
        let data = array
            .retrieve_region(&Region::whole(array.shape()))
            .unwrap();
        let want: Vec<Vec<u8>> = expected["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| {
                base64::engine::general_purpose::STANDARD
                    .decode(v.as_str().unwrap())
                    .unwrap()
            })
            .collect();
        let got: Vec<Vec<u8>> = (0..want.len())
            .map(|i| data.element(i).unwrap().to_vec())
            .collect();
        assert_eq!(got, want, "{name}");
        // and a region across chunks
        if array.shape().len() == 1 && array.shape()[0] >= 5 {
            let part = array
                .retrieve_region(&Region::new(vec![2], vec![3]).unwrap())
                .unwrap();
            for i in 0..3 {
                assert_eq!(
                    part.element(i).unwrap(),
                    &want[2 + i][..],
                    "{name}[{}]",
                    2 + i
                );
            }
        }
    }
}
