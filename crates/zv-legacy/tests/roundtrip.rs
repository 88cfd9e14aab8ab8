//! Property tests of the whole path: random zarr 0.4 arrays and bcolz carrays (shapes, chunk
//! shapes, byte orders, missing chunks, short leftovers) are written here with zv's blosc
//! codec, read by zv-legacy equal to the values written, converted to Zarr v3 and read back
//! by zv-core's own array reader equal again.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use zv_codecs::blosc::{BloscCodec, BloscCompressor, BloscConfig, BloscShuffle};
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::grid::{Region, RegularGrid};
use zv_core::node::NodePath;
use zv_legacy::dtype::NumpyDtype;
use zv_legacy::Legacy;
use zv_store_mem::MemoryStore;

const DTYPES: [&str; 8] = ["<i4", ">i4", "<f8", ">f8", "|u1", "<c8", ">u2", "|S3"];

fn compress(data: &[u8], typesize: usize, shuffle: BloscShuffle) -> Vec<u8> {
    BloscCodec::new(
        &BloscConfig {
            cname: BloscCompressor::Zstd,
            clevel: 3,
            shuffle,
            typesize: Some(typesize.min(255) as u32),
            blocksize: 0,
        },
        1,
    )
    .unwrap()
    .compress(data)
    .unwrap()
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Element `i` of the test values, native order (never NaN, so bytes compare as values).
fn element(dt: &NumpyDtype, i: u64) -> Vec<u8> {
    let v = (i * 7 % 23) as u8;
    let mut e = vec![0u8; dt.size()];
    e[0] = v;
    if dt.size() == 3 {
        e = vec![b'a' + v % 26, b'x', 0];
    }
    e
}

/// The stored-order bytes of the box `region` of the test values (padded to `box_shape`
/// with `pad`).
fn stored_box(
    dt: &NumpyDtype,
    shape: &[u64],
    region: &Region,
    box_shape: &[u64],
    pad: u8,
) -> Vec<u8> {
    let n: u64 = box_shape.iter().product();
    let mut out = Vec::new();
    for flat in 0..n {
        let mut rem = flat;
        let mut idx = vec![0u64; box_shape.len()];
        for d in (0..box_shape.len()).rev() {
            idx[d] = rem % box_shape[d];
            rem /= box_shape[d];
        }
        let inside = idx.iter().zip(region.shape()).all(|(i, s)| i < s);
        if inside {
            let mut g = 0u64;
            for d in 0..shape.len() {
                g = g * shape[d] + region.start()[d] + idx[d];
            }
            let mut e = element(dt, g);
            dt.swap_to_native(&mut e);
            out.extend(e);
        } else {
            out.extend(vec![pad; dt.size()]);
        }
    }
    out
}

/// Reads the Zarr v3 copy with zv-core and compares with the legacy read.
fn check_conversion(legacy: &Legacy, expect: &[u8]) {
    zv_codecs::link();
    let store: Arc<dyn zv_core::store::Store> = Arc::new(MemoryStore::new());
    zv_legacy::convert::convert(legacy, store.as_ref(), &mut |_| {}).unwrap();
    let meta = zv_core::array::read_node_metadata(store.as_ref(), &NodePath::root()).unwrap();
    let Some(zv_core::metadata::NodeMetadata::Array(_)) = meta else {
        panic!("no array written");
    };
    let array = Array::open(store, &NodePath::root()).unwrap();
    let ArrayBytes::Fixed(got) = array
        .retrieve_region(&Region::whole(array.shape()))
        .unwrap()
    else {
        panic!("variable-length data");
    };
    assert_eq!(got.as_ref(), expect);
}

fn expected_native(
    dt: &NumpyDtype,
    shape: &[u64],
    missing: &dyn Fn(u64) -> bool,
    fill: &[u8],
) -> Vec<u8> {
    let n: u64 = shape.iter().product();
    (0..n)
        .flat_map(|i| {
            if missing(i) {
                fill.to_vec()
            } else {
                element(dt, i)
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn zarr04_arrays_read_and_convert_equal(
        dims in prop::collection::vec((1u64..12, 1u64..6), 1..3),
        dtype in prop::sample::select(DTYPES.to_vec()),
        missing_mask in any::<u64>(),
        shuffle in prop::sample::select(vec![BloscShuffle::Noshuffle, BloscShuffle::Shuffle, BloscShuffle::Bitshuffle]),
    ) {
        let dt = NumpyDtype::parse(dtype).unwrap();
        let shape: Vec<u64> = dims.iter().map(|d| d.0).collect();
        let chunks: Vec<u64> = dims.iter().map(|d| d.1).collect();
        let dir = tempfile::tempdir().unwrap();
        let fill = if dt.size() == 3 { json!("z") } else { json!(5) };
        write(&dir.path().join("__zmeta__"), json!({"shape": shape, "chunks": chunks, "dtype": dtype,
            "fill_value": fill, "cname": "zstd", "clevel": 3, "shuffle": 1}).to_string().as_bytes());
        let grid = RegularGrid::new(shape.clone(), chunks.clone());
        let mut missing_chunks = Vec::new();
        for (k, coords) in grid.chunks_in(&Region::whole(&shape)).enumerate() {
            if missing_mask >> (k % 64) & 1 == 1 {
                missing_chunks.push(grid.chunk_region(&coords).unwrap());
                continue;
            }
            let region = grid.chunk_region(&coords).unwrap();
            let name: Vec<String> = coords.iter().map(u64::to_string).collect();
            write(&dir.path().join(format!("__zdata__/{}.blosc", name.join("."))),
                &compress(&stored_box(&dt, &shape, &region, &chunks, 0xAB), dt.size(), shuffle));
        }
        let mut fill_native = dt.fill_from_json(&fill).unwrap();
        dt.swap_to_native(&mut fill_native);
        let is_missing = |i: u64| {
            let mut rem = i;
            let mut idx = vec![0u64; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = rem % shape[d];
                rem /= shape[d];
            }
            missing_chunks.iter().any(|r| idx.iter().zip(r.start()).zip(r.shape()).all(|((i, s), n)| *i >= *s && *i < s + n))
        };
        let expect = expected_native(&dt, &shape, &is_missing, &fill_native);
        let legacy = zv_legacy::open(dir.path()).unwrap();
        let Legacy::Array(a) = &legacy else { panic!() };
        prop_assert_eq!(a.read_all().unwrap(), expect.clone());
        if dt.size() != 3 {
            // zv-core has no fixed-size byte string type; zarr-python reads those (see python_stores).
            check_conversion(&legacy, &expect);
        }
    }

    #[test]
    fn bcolz_carrays_read_and_convert_equal(
        rows in 0u64..40,
        row_shape in prop::collection::vec(1u64..4, 0..2),
        chunklen in 1u64..9,
        dtype in prop::sample::select(DTYPES.to_vec()),
        full_leftover in any::<bool>(),
    ) {
        let dt = NumpyDtype::parse(dtype).unwrap();
        let mut shape = vec![rows];
        shape.extend(&row_shape);
        let dir = tempfile::tempdir().unwrap();
        let dflt = if dt.size() == 3 { json!("") } else { json!(0) };
        write(&dir.path().join("meta/storage"), json!({"dtype": dtype, "cparams": {"clevel": 3, "shuffle": 2, "cname": "zstd"},
            "chunklen": chunklen, "expectedlen": rows, "dflt": dflt}).to_string().as_bytes());
        write(&dir.path().join("meta/sizes"), json!({"shape": shape}).to_string().as_bytes());
        let mut chunk_shape = shape.clone();
        chunk_shape[0] = chunklen;
        for i in 0..rows.div_ceil(chunklen) {
            let n = chunklen.min(rows - i * chunklen);
            let mut start = vec![0u64; shape.len()];
            start[0] = i * chunklen;
            let mut part = shape.clone();
            part[0] = n;
            let region = Region::new(start, part.clone()).unwrap();
            // The leftover is short, as bcolz writes it, or (accepted too) full-size.
            let box_shape = if full_leftover { chunk_shape.clone() } else { part };
            let mut file = b"blpk\x01\0\0\0".to_vec();
            file.extend(1i64.to_le_bytes());
            file.extend(compress(&stored_box(&dt, &shape, &region, &box_shape, 0), dt.size(), BloscShuffle::Bitshuffle));
            write(&dir.path().join(format!("data/__{i}.blp")), &file);
        }
        let expect = expected_native(&dt, &shape, &|_| false, &[]);
        let legacy = zv_legacy::open(dir.path()).unwrap();
        let Legacy::Array(a) = &legacy else { panic!() };
        prop_assert_eq!(a.read_all().unwrap(), expect.clone());
        if dt.size() != 3 {
            check_conversion(&legacy, &expect);
        }
    }
}
