//! The array matrix of `zarr_interop.rs`: data types, shapes, codecs and chains, chunk key
//! encodings and fill values, with deterministic values for each array.
#![allow(dead_code)]

use std::path::Path;

use half::f16;
use serde_json::{json, Value};
use zv_core::data_type::{DataType, FillValue, ALL_DATA_TYPES};
use zv_core::metadata::ArrayMetadata;

/// One array of the matrix.
#[derive(Clone, Debug)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) data_type: DataType,
    pub(crate) shape: Vec<u64>,
    pub(crate) chunk_shape: Vec<u64>,
    pub(crate) codecs: Value,
    pub(crate) chunk_key_encoding: Value,
    pub(crate) fill_value: Value,
    pub(crate) dimension_names: Option<Value>,
    pub(crate) attributes: Value,
    /// Only the first rows (along dimension 0) are written; the rest reads as fill value.
    pub(crate) written_rows: Option<u64>,
}

pub(crate) fn bytes_le() -> Value {
    json!({"name": "bytes", "configuration": {"endian": "little"}})
}

pub(crate) fn default_cke() -> Value {
    json!({"name": "default", "configuration": {"separator": "/"}})
}

pub(crate) fn case(name: &str, dt: DataType, shape: &[u64], chunks: &[u64], codecs: Value) -> Case {
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

pub(crate) fn matrix() -> Vec<Case> {
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
pub(crate) fn values(dt: DataType, n: usize, seed: u64) -> Vec<u8> {
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

pub(crate) fn to_le(bytes: &[u8], dt: DataType) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if cfg!(target_endian = "big") {
        if let Some(w) = dt.component_size().filter(|&w| w > 1) {
            v.chunks_exact_mut(w).for_each(<[u8]>::reverse);
        }
    }
    v
}

impl Case {
    pub(crate) fn num_elements(&self) -> usize {
        self.shape.iter().product::<u64>() as usize
    }

    pub(crate) fn metadata(&self) -> ArrayMetadata {
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

    pub(crate) fn fill(&self) -> FillValue {
        FillValue::from_json(self.data_type, &self.fill_value).unwrap()
    }

    /// The whole array, native order: generated values in the written rows, fill elsewhere.
    pub(crate) fn expected(&self) -> Vec<u8> {
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

    pub(crate) fn spec(&self, dir: &Path) -> Value {
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
