//! `sharding_indexed` between zv and zarr-python 3, both ways, over a matrix: 1-D to 3-D,
//! partial edge shards, inner chunk shapes equal to and smaller than the shard, every inner
//! codec chain zv supports (bytes, transpose, blosc, zstd, gzip, crc32c), the index at the
//! start and the end, with and without its crc32c, missing inner chunks and shards, fill
//! values, nested sharding. Values and the metadata's interpretation must agree; the
//! `zv zarr get --region` reads (partial) and `zv zarr info` are checked on the same stores.
//! The Python side is `tests/interop/zarr_interop.py` (`write-meta`, `read`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value};
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::{DataType, FillValue};
use zv_core::grid::Region;
use zv_core::metadata::ArrayMetadata;
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_store_fs::FilesystemStore;
use zv_testkit::env::{workspace_root, zarr_python};

struct Case {
    name: &'static str,
    data_type: DataType,
    shape: Vec<u64>,
    shard: Vec<u64>,
    sharding: Value,
    fill_value: Value,
    written_rows: Option<u64>,
}

fn bytes_le() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

fn sharding(inner: &[u64], codecs: Value, location: &str, crc: bool) -> Value {
    let index = if crc {
        json!([bytes_le(), {"name": "crc32c"}])
    } else {
        json!([bytes_le()])
    };
    json!({"name": "sharding_indexed", "configuration": {"chunk_shape": inner, "codecs": codecs,
        "index_codecs": index, "index_location": location}})
}

#[allow(clippy::too_many_arguments)]
fn case(
    name: &'static str,
    dt: DataType,
    shape: &[u64],
    shard: &[u64],
    inner: &[u64],
    codecs: Value,
    location: &str,
    crc: bool,
) -> Case {
    Case {
        name,
        data_type: dt,
        shape: shape.to_vec(),
        shard: shard.to_vec(),
        sharding: sharding(inner, codecs, location, crc),
        fill_value: FillValue::zero(dt).to_json(dt),
        written_rows: None,
    }
}

fn matrix() -> Vec<Case> {
    let u8b = json!([{"name": "bytes"}]);
    let b = json!([bytes_le()]);
    let blosc = |cname: &str, shuffle: &str, ts: u32| json!({"name": "blosc", "configuration": {"cname": cname, "clevel": 5, "shuffle": shuffle, "typesize": ts, "blocksize": 0}});
    let zstd = json!({"name": "zstd", "configuration": {"level": 3, "checksum": false}});
    let t10 = json!({"name": "transpose", "configuration": {"order": [1, 0]}});
    use DataType::*;
    let mut cases = vec![
        case(
            "s1d_end_crc",
            UInt16,
            &[100],
            &[20],
            &[5],
            b.clone(),
            "end",
            true,
        ),
        case(
            "s1d_edge_start",
            UInt16,
            &[97],
            &[20],
            &[4],
            b.clone(),
            "start",
            false,
        ),
        case(
            "s1d_inner_is_shard",
            Int32,
            &[50],
            &[25],
            &[25],
            b.clone(),
            "end",
            true,
        ),
        case(
            "s2d_edge",
            Float32,
            &[30, 17],
            &[10, 8],
            &[5, 4],
            b.clone(),
            "end",
            true,
        ),
        case(
            "s2d_transpose",
            Float32,
            &[30, 17],
            &[10, 8],
            &[5, 2],
            json!([t10, bytes_le()]),
            "start",
            true,
        ),
        case(
            "s2d_blosc",
            UInt16,
            &[40, 40],
            &[16, 16],
            &[8, 8],
            json!([bytes_le(), blosc("zstd", "shuffle", 2)]),
            "end",
            true,
        ),
        case(
            "s2d_zstd",
            Int32,
            &[33, 21],
            &[12, 9],
            &[4, 3],
            json!([bytes_le(), zstd]),
            "end",
            false,
        ),
        case(
            "s2d_gzip",
            Float64,
            &[20, 20],
            &[10, 10],
            &[5, 5],
            json!([bytes_le(), {"name": "gzip", "configuration": {"level": 5}}]),
            "start",
            false,
        ),
        case(
            "s2d_crc32c",
            UInt16,
            &[20, 20],
            &[10, 10],
            &[5, 5],
            json!([bytes_le(), {"name": "crc32c"}]),
            "end",
            true,
        ),
        case(
            "s2d_chain",
            Float32,
            &[20, 21],
            &[10, 7],
            &[5, 7],
            json!([t10, {"name": "bytes", "configuration": {"endian": "big"}}, zstd, {"name": "crc32c"}]),
            "end",
            true,
        ),
        case(
            "s3d",
            UInt8,
            &[9, 10, 11],
            &[4, 6, 4],
            &[2, 3, 2],
            u8b.clone(),
            "end",
            true,
        ),
        case(
            "s3d_blosc_start",
            Float32,
            &[9, 10, 11],
            &[4, 6, 4],
            &[2, 3, 2],
            json!([bytes_le(), blosc("lz4", "bitshuffle", 4)]),
            "start",
            true,
        ),
        case(
            "nested",
            UInt16,
            &[32, 32],
            &[16, 16],
            &[8, 8],
            json!([sharding(
                &[4, 4],
                json!([bytes_le(), {"name": "crc32c"}]),
                "end",
                true
            )]),
            "end",
            true,
        ),
    ];
    let mut c = case(
        "missing_inner",
        UInt16,
        &[40, 10],
        &[16, 10],
        &[4, 5],
        b.clone(),
        "end",
        true,
    );
    c.written_rows = Some(6);
    cases.push(c);
    let mut c = case(
        "fill_nonzero",
        Int32,
        &[40, 10],
        &[16, 10],
        &[4, 5],
        b.clone(),
        "start",
        false,
    );
    c.fill_value = json!(-7);
    c.written_rows = Some(10);
    cases.push(c);
    let mut c = case("fill_nan", Float32, &[40], &[16], &[4], b, "end", true);
    c.fill_value = json!("NaN");
    c.written_rows = Some(10);
    cases.push(c);
    cases
}

impl Case {
    fn metadata_json(&self) -> Value {
        json!({"zarr_format": 3, "node_type": "array", "shape": self.shape,
            "data_type": self.data_type.name(),
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": self.shard}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": self.fill_value, "codecs": [self.sharding], "attributes": {}})
    }

    fn metadata(&self) -> ArrayMetadata {
        ArrayMetadata::from_json(self.metadata_json().to_string().as_bytes()).unwrap()
    }

    fn num_elements(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    /// The whole array, little-endian: values in the written rows, the fill value elsewhere.
    fn expected(&self) -> Vec<u8> {
        let es = self.data_type.size().unwrap();
        let n = self.num_elements();
        let row: usize = self.shape[1..].iter().product::<u64>() as usize;
        let written = self.written_rows.map_or(n, |r| r as usize * row);
        let fill = FillValue::from_json(self.data_type, &self.fill_value).unwrap();
        let mut out = Vec::with_capacity(n * es);
        for i in 0..n {
            if i >= written {
                out.extend_from_slice(fill.as_bytes());
                continue;
            }
            let v = (i as u64).wrapping_mul(2_654_435_761) % 50_000;
            match self.data_type {
                DataType::UInt8 => out.push(v as u8),
                DataType::UInt16 => out.extend_from_slice(&(v as u16).to_ne_bytes()),
                DataType::Int32 => out.extend_from_slice(&(v as i32 - 25_000).to_ne_bytes()),
                DataType::Float32 => out.extend_from_slice(&(v as f32 / 7.0).to_ne_bytes()),
                DataType::Float64 => out.extend_from_slice(&(v as f64 / 3.0).to_ne_bytes()),
                other => panic!("no values for {other}"),
            }
        }
        to_le(&out, self.data_type)
    }

    fn spec(&self, dir: &Path) -> Value {
        json!({"name": self.name, "data_type": self.data_type.name(), "shape": self.shape,
            "metadata": self.metadata_json(), "written_rows": self.written_rows,
            "expected": dir.join(format!("{}.expected.bin", self.name))})
    }
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

fn write_spec(dir: &Path, cases: &[Case]) -> std::path::PathBuf {
    for c in cases {
        std::fs::write(dir.join(format!("{}.expected.bin", c.name)), c.expected()).unwrap();
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

/// Every value of `ours` is in `theirs` (objects: each of our keys, recursively; arrays:
/// element-wise, same length). A one-byte type's `endian` may be left out by either side.
fn subset(path: &str, ours: &Value, theirs: &Value, problems: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                match b.get(k) {
                    Some(w) => subset(&format!("{path}.{k}"), v, w, problems),
                    None if k == "endian" => {}
                    None => problems.push(format!("{path}.{k}: zarr-python has none")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (v, w)) in a.iter().zip(b).enumerate() {
                subset(&format!("{path}[{i}]"), v, w, problems);
            }
        }
        _ if ours == theirs => {}
        _ => problems.push(format!("{path}: zv {ours} vs zarr-python {theirs}")),
    }
}

fn check_interpretation(case: &Case, zv: &ArrayMetadata, py: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let name = case.name;
    let inner = case.sharding["configuration"]["chunk_shape"].clone();
    for (what, ours, theirs) in [
        ("data_type", json!(zv.data_type.name()), &py["data_type"]),
        ("shape", json!(zv.shape), &py["shape"]),
        // zarr-python's `chunks` of a sharded array is the inner chunk shape
        ("inner chunks", inner, &py["chunks"]),
    ] {
        if &ours != theirs {
            problems.push(format!("{name}: {what}: zv {ours} vs zarr-python {theirs}"));
        }
    }
    let fill_hex: String = to_le(zv.fill_value.as_bytes(), zv.data_type)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if json!(fill_hex) != py["fill_value_le_hex"] {
        problems.push(format!("{name}: fill value bits differ"));
    }
    let codecs = serde_json::to_value(&zv.codecs).unwrap();
    subset(
        &format!("{name}: codecs"),
        &codecs,
        &py["codecs"],
        &mut problems,
    );
    // and zarr-python's sharding entry has nothing zv lacks, apart from defaults zv omits
    let theirs = &py["codecs"][0]["configuration"];
    for key in ["chunk_shape", "codecs", "index_codecs", "index_location"] {
        if theirs.get(key).is_none() {
            problems.push(format!("{name}: zarr-python's sharding entry lacks {key}"));
        }
    }
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

fn zv(args: &[&str], dir: &Path) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_zv"))
        .arg("zarr")
        .arg(args[0])
        .arg(dir)
        .args(&args[1..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "zv zarr {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The elements of `region` of a C-order little-endian buffer of `shape`.
fn cut(all: &[u8], es: usize, shape: &[u64], region: &[(u64, u64)]) -> Vec<u8> {
    let mut out = Vec::new();
    let strides: Vec<u64> = (0..shape.len())
        .map(|d| shape[d + 1..].iter().product())
        .collect();
    let mut idx: Vec<u64> = region.iter().map(|r| r.0).collect();
    'outer: loop {
        let lin = idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<u64>() as usize;
        out.extend_from_slice(&all[lin * es..(lin + 1) * es]);
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
    out
}

#[test]
fn zarr_python_writes_zv_reads() {
    let dir = tempfile::tempdir().unwrap();
    let cases = matrix();
    let spec = write_spec(dir.path(), &cases);
    let store_dir = dir.path().join("py.zarr");
    std::fs::create_dir_all(&store_dir).unwrap();
    let report = run_python(&[
        "write-meta",
        spec.to_str().unwrap(),
        store_dir.to_str().unwrap(),
    ]);
    let store = store(&store_dir);
    let mut problems = Vec::new();
    for case in &cases {
        let array = Array::open(store.clone(), &NodePath::new(case.name).unwrap())
            .unwrap_or_else(|e| panic!("{}: zv cannot open: {e}", case.name));
        problems.extend(check_interpretation(
            case,
            array.metadata(),
            &report["report"][case.name],
        ));
        let expected = case.expected();
        let zarrpy = std::fs::read(store_dir.join(format!("{}.zarrpy.bin", case.name))).unwrap();
        assert_eq!(
            zarrpy, expected,
            "{}: zarr-python does not read back what it wrote",
            case.name
        );
        if read_all_le(&array) != expected {
            problems.push(format!("{}: values read by zv differ", case.name));
        }
        // partial reads through the CLI: one element, a small box across inner chunks, the
        // second half of every dimension
        let es = case.data_type.size().unwrap();
        let regions: Vec<Vec<(u64, u64)>> = vec![
            case.shape.iter().map(|&n| (n / 3, n / 3 + 1)).collect(),
            case.shape
                .iter()
                .map(|&n| (n / 4, (n / 4 + 5).min(n)))
                .collect(),
            case.shape.iter().map(|&n| (n / 2, n)).collect(),
        ];
        for region in regions {
            let text: Vec<String> = region.iter().map(|(a, b)| format!("{a}:{b}")).collect();
            let got = zv(
                &["get", case.name, "--raw", "--region", &text.join(",")],
                &store_dir,
            );
            if got != cut(&expected, es, &case.shape, &region) {
                problems.push(format!(
                    "{}: `zv zarr get --region {}` differs",
                    case.name,
                    text.join(",")
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(cases.len() >= 16, "matrix has only {} cases", cases.len());
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
            &NodePath::new(case.name).unwrap(),
            case.metadata(),
        )
        .unwrap();
        let mut data = case.expected();
        if cfg!(target_endian = "big") {
            data = to_le(&data, case.data_type);
        }
        let mut shape = case.shape.clone();
        if let Some(rows) = case.written_rows {
            data.truncate(data.len() / shape[0] as usize * rows as usize);
            shape[0] = rows;
        }
        let region = Region::new(vec![0; shape.len()], shape).unwrap();
        array
            .store_region(&region, ArrayBytes::Fixed(data.into()))
            .unwrap();
    }
    let report = run_python(&["read", spec.to_str().unwrap(), store_dir.to_str().unwrap()]);
    let mut problems = Vec::new();
    for case in &cases {
        problems.extend(check_interpretation(
            case,
            &case.metadata(),
            &report["report"][case.name],
        ));
        let zarrpy = std::fs::read(store_dir.join(format!("{}.zarrpy.bin", case.name))).unwrap();
        if zarrpy != case.expected() {
            problems.push(format!("{}: values read by zarr-python differ", case.name));
        }
    }
    // missing inner chunks are not written: the first shard of `missing_inner` holds rows
    // 0..6 only, i.e. 4 of its 8 inner chunks (4 × 5 uint16 each: rows 0..4 and 4..8, two
    // column blocks), and the index
    let shard = std::fs::read(store_dir.join("missing_inner/c/0/0")).unwrap();
    assert_eq!(shard.len(), 4 * 40 + 8 * 16 + 4);
    assert!(!store_dir.join("missing_inner/c/1/0").exists());
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn zv_zarr_info_shows_shard_and_inner_chunk_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let case = matrix().into_iter().find(|c| c.name == "nested").unwrap();
    Array::create(store, &NodePath::new("a").unwrap(), case.metadata()).unwrap();
    let info: Value = serde_json::from_slice(&zv(&["info", "a"], dir.path())).unwrap();
    assert_eq!(
        info["sharding"],
        json!({"shard_shape": [16, 16], "inner_chunk_shape": [8, 8], "inner_chunks_per_shard": 4,
            "index_location": "end", "nested": {"shard_shape": [8, 8], "inner_chunk_shape": [4, 4],
            "inner_chunks_per_shard": 4, "index_location": "end"}})
    );
    assert_eq!(
        info["chunk_grid"]["configuration"]["chunk_shape"],
        json!([16, 16])
    );
}
