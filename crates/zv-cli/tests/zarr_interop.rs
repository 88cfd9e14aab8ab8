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
use half::f16;
use serde_json::{json, Value};
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::{DataType, FillValue, ALL_DATA_TYPES};
use zv_core::grid::Region;
use zv_core::metadata::ArrayMetadata;
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_store_fs::FilesystemStore;
use zv_testkit::env::{workspace_root, zarr_python};

/// One array of the matrix.
#[derive(Clone, Debug)]
struct Case {
    name: String,
    data_type: DataType,
    shape: Vec<u64>,
    chunk_shape: Vec<u64>,
    codecs: Value,
    chunk_key_encoding: Value,
    fill_value: Value,
    dimension_names: Option<Value>,
    attributes: Value,
    /// Only the first rows (along dimension 0) are written; the rest reads as fill value.
    written_rows: Option<u64>,
}

fn bytes_le() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

fn default_cke() -> Value {
    json!({"name": "default", "configuration": {"separator": "/"}})
}

fn case(name: &str, dt: DataType, shape: &[u64], chunks: &[u64], codecs: Value) -> Case {
    Case {
        name: name.to_owned(),
        data_type: dt,
        shape: shape.to_vec(),
        chunk_shape: chunks.to_vec(),
        codecs,
        chunk_key_encoding: default_cke(),
        fill_value: FillValue::zero(dt).to_json(dt),
        dimension_names: None,
        attributes: json!({}),
        written_rows: None,
    }
}

fn matrix() -> Vec<Case> {
    let mut cases = Vec::new();
    // Every fixed-size data type; shape with partial edge chunks.
    for dt in ALL_DATA_TYPES.iter().copied().filter(|d| !d.is_variable()) {
        let bytes = if dt.component_size() == Some(1) {
            json!({"name": "bytes"})
        } else {
            bytes_le()
        };
        cases.push(case(
            &format!("dtype_{dt}"),
            dt,
            &[7, 5],
            &[3, 2],
            json!([bytes]),
        ));
        if dt.component_size() != Some(1) {
            cases.push(case(
                &format!("big_{dt}"),
                dt,
                &[5, 4],
                &[2, 3],
                json!([{"name": "bytes", "configuration": {"endian": "big"}}]),
            ));
        }
    }
    // 0-d and 1-d arrays.
    for dt in [
        DataType::Float64,
        DataType::Int32,
        DataType::Bool,
        DataType::Complex64,
    ] {
        let bytes = if dt == DataType::Bool {
            json!({"name": "bytes"})
        } else {
            bytes_le()
        };
        cases.push(case(&format!("scalar_{dt}"), dt, &[], &[], json!([bytes])));
    }
    cases.push(case(
        "one_d_u16",
        DataType::UInt16,
        &[10],
        &[4],
        json!([bytes_le()]),
    ));
    cases.push(case(
        "one_d_f32_zstd",
        DataType::Float32,
        &[1000],
        &[128],
        json!([bytes_le(), {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
    ));
    // transpose (F order) and a 3-d permutation.
    cases.push(case(
        "transpose_f_order",
        DataType::Int16,
        &[7, 5],
        &[3, 2],
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}}, bytes_le()]),
    ));
    cases.push(case(
        "transpose_3d",
        DataType::Float64,
        &[4, 3, 5],
        &[3, 2, 2],
        json!([{"name": "transpose", "configuration": {"order": [2, 0, 1]}}, bytes_le()]),
    ));
    // blosc: every cname × every shuffle.
    for cname in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"] {
        for shuffle in ["noshuffle", "shuffle", "bitshuffle"] {
            cases.push(case(
                &format!("blosc_{cname}_{shuffle}"),
                DataType::Float32,
                &[40, 30],
                &[16, 16],
                json!([bytes_le(), {"name": "blosc", "configuration":
                    {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": 4, "blocksize": 0}}]),
            ));
        }
    }
    cases.push(case(
        "blosc_u8_typesize1",
        DataType::UInt8,
        &[100],
        &[33],
        json!([{"name": "bytes"}, {"name": "blosc", "configuration":
            {"cname": "zstd", "clevel": 9, "shuffle": "bitshuffle", "typesize": 1, "blocksize": 0}}]),
    ));
    // zstd, gzip, crc32c and chains.
    cases.push(case(
        "zstd_checksum",
        DataType::Int64,
        &[9, 9],
        &[4, 4],
        json!([bytes_le(), {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]),
    ));
    for level in [1, 6] {
        cases.push(case(
            &format!("gzip_{level}"),
            DataType::UInt32,
            &[9, 9],
            &[4, 4],
            json!([bytes_le(), {"name": "gzip", "configuration": {"level": level}}]),
        ));
    }
    cases.push(case(
        "crc32c",
        DataType::Float64,
        &[6, 6],
        &[4, 4],
        json!([bytes_le(), {"name": "crc32c"}]),
    ));
    cases.push(case(
        "chain_transpose_blosc_crc32c",
        DataType::Float32,
        &[10, 7],
        &[4, 3],
        json!([{"name": "transpose", "configuration": {"order": [1, 0]}},
               {"name": "bytes", "configuration": {"endian": "big"}},
               {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}},
               {"name": "crc32c"}]),
    ));
    cases.push(case(
        "chain_zstd_crc32c",
        DataType::Int32,
        &[10, 7],
        &[4, 3],
        json!([bytes_le(), {"name": "zstd", "configuration": {"level": 5, "checksum": false}}, {"name": "crc32c"}]),
    ));
    cases.push(case(
        "chain_crc32c_gzip",
        DataType::UInt16,
        &[10, 7],
        &[4, 3],
        json!([bytes_le(), {"name": "crc32c"}, {"name": "gzip", "configuration": {"level": 5}}]),
    ));
    // Chunk key encodings.
    for (name, cke) in [
        (
            "cke_default_dot",
            json!({"name": "default", "configuration": {"separator": "."}}),
        ),
        (
            "cke_v2_dot",
            json!({"name": "v2", "configuration": {"separator": "."}}),
        ),
        (
            "cke_v2_slash",
            json!({"name": "v2", "configuration": {"separator": "/"}}),
        ),
    ] {
        let mut c = case(name, DataType::Int32, &[7, 5], &[3, 2], json!([bytes_le()]));
        c.chunk_key_encoding = cke;
        cases.push(c);
    }
    let mut c = case(
        "cke_v2_scalar",
        DataType::Int8,
        &[],
        &[],
        json!([{"name": "bytes"}]),
    );
    c.chunk_key_encoding = json!({"name": "v2", "configuration": {"separator": "."}});
    cases.push(c);
    // Fill values, with unwritten chunks so that the fill value is read.
    for (name, dt, fill) in [
        ("fill_nan_f32", DataType::Float32, json!("NaN")),
        ("fill_inf_f64", DataType::Float64, json!("Infinity")),
        ("fill_neginf_f32", DataType::Float32, json!("-Infinity")),
        ("fill_hex_f32", DataType::Float32, json!("0x7fc00001")),
        (
            "fill_hex_f64",
            DataType::Float64,
            json!("0x3ff0000000000000"),
        ),
        ("fill_hex_f16", DataType::Float16, json!("0x7c00")),
        (
            "fill_nan_c128",
            DataType::Complex128,
            json!(["NaN", "-Infinity"]),
        ),
        ("fill_i8", DataType::Int8, json!(-3)),
        ("fill_u64_max", DataType::UInt64, json!(u64::MAX)),
        ("fill_bool", DataType::Bool, json!(true)),
    ] {
        let bytes = if dt.component_size() == Some(1) {
            json!({"name": "bytes"})
        } else {
            bytes_le()
        };
        let mut c = case(name, dt, &[9, 4], &[2, 3], json!([bytes]));
        c.fill_value = fill;
        c.written_rows = Some(3);
        cases.push(c);
    }
    // Dimension names and attributes.
    let mut c = case(
        "named_dims",
        DataType::Float32,
        &[4, 3],
        &[2, 2],
        json!([bytes_le()]),
    );
    c.dimension_names = Some(json!(["vertex", null]));
    c.attributes = json!({"units": "um", "nested": {"a": [1, 2.5, null, true]}});
    cases.push(c);
    cases
}

/// Deterministic element values (native order) with the special values of each type.
fn values(dt: DataType, n: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::new();
    for i in 0..n {
        let r = next();
        match dt {
            DataType::Bool => out.push((r & 1) as u8),
            DataType::Int8 | DataType::UInt8 => out.push(r as u8),
            DataType::Int16 | DataType::UInt16 => out.extend_from_slice(&(r as u16).to_ne_bytes()),
            DataType::Int32 | DataType::UInt32 => out.extend_from_slice(&(r as u32).to_ne_bytes()),
            DataType::Int64 | DataType::UInt64 => out.extend_from_slice(&r.to_ne_bytes()),
            DataType::Float16 => {
                let specials = [
                    f16::NAN,
                    f16::INFINITY,
                    f16::NEG_INFINITY,
                    f16::NEG_ZERO,
                    f16::MIN_POSITIVE_SUBNORMAL,
                    f16::MAX,
                ];
                let v = specials
                    .get(i)
                    .copied()
                    .unwrap_or_else(|| f16::from_f32((r % 20000) as f32 / 7.0 - 1000.0));
                out.extend_from_slice(&v.to_ne_bytes());
            }
            DataType::Float32 | DataType::Complex64 => {
                let specials = [
                    f32::NAN,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    -0.0,
                    f32::MIN_POSITIVE / 8.0,
                    f32::MAX,
                ];
                let v = specials
                    .get(i)
                    .copied()
                    .unwrap_or((r % 1_000_000) as f32 / 3.0 - 100_000.0);
                out.extend_from_slice(&v.to_ne_bytes());
                if dt == DataType::Complex64 {
                    out.extend_from_slice(&(-v * 0.5).to_ne_bytes());
                }
            }
            DataType::Float64 | DataType::Complex128 => {
                let specials = [
                    f64::NAN,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    -0.0,
                    f64::MIN_POSITIVE / 8.0,
                    f64::MIN,
                ];
                let v = specials
                    .get(i)
                    .copied()
                    .unwrap_or((r % 1_000_000_000) as f64 / 7.0 - 1e8);
                out.extend_from_slice(&v.to_ne_bytes());
                if dt == DataType::Complex128 {
                    out.extend_from_slice(&(v * 2.0).to_ne_bytes());
                }
            }
            DataType::VariableLengthBytes => unreachable!(),
            _ => unreachable!(),
        }
    }
    out
}

fn to_le(bytes: &[u8], dt: DataType) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if cfg!(target_endian = "big") {
        if let Some(w) = dt.component_size().filter(|&w| w > 1) {
            v.chunks_exact_mut(w).for_each(<[u8]>::reverse);
        }
    }
    v
}

impl Case {
    fn num_elements(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    fn metadata(&self) -> ArrayMetadata {
        let mut doc = json!({
            "zarr_format": 3, "node_type": "array", "shape": self.shape, "data_type": self.data_type.name(),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": self.chunk_shape}},
            "chunk_key_encoding": self.chunk_key_encoding, "fill_value": self.fill_value,
            "codecs": self.codecs, "attributes": self.attributes,
        });
        if let Some(d) = &self.dimension_names {
            doc["dimension_names"] = d.clone();
        }
        ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap()
    }

    fn fill(&self) -> FillValue {
        FillValue::from_json(self.data_type, &self.fill_value).unwrap()
    }

    /// The whole array, native order: generated values in the written rows, fill elsewhere.
    fn expected(&self) -> Vec<u8> {
        let es = self.data_type.size().unwrap();
        let n = self.num_elements();
        let mut data = values(self.data_type, n, self.name.len() as u64 * 31 + 7);
        if let Some(rows) = self.written_rows {
            let row_elems: usize = self.shape[1..].iter().product::<u64>() as usize;
            let fill = self.fill();
            for e in (rows as usize * row_elems)..n {
                data[e * es..(e + 1) * es].copy_from_slice(fill.as_bytes());
            }
        }
        data
    }

    fn spec(&self, dir: &Path) -> Value {
        let mut v = json!({
            "name": self.name, "data_type": self.data_type.name(), "shape": self.shape,
            "chunk_shape": self.chunk_shape, "codecs": self.codecs,
            "chunk_key_encoding": self.chunk_key_encoding, "fill_value": self.fill_value,
            "attributes": self.attributes,
            "expected": dir.join(format!("{}.expected.bin", self.name)),
            "written_rows": self.written_rows,
        });
        if let Some(d) = &self.dimension_names {
            v["dimension_names"] = d.clone();
        }
        v
    }
}

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
