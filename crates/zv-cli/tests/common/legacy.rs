//! Legacy arrays built by hand with zv's blosc codec (no Python): a zarr 0.4 array of `<f8`
//! and a bcolz ctable of `float64` columns.

use std::path::{Path, PathBuf};

use serde_json::json;
use zv_codecs::blosc::{BloscCodec, BloscCompressor, BloscConfig, BloscShuffle};

/// Writes `bytes` at `path`, creating its directory.
pub fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A blosc frame (zstd, shuffle, 8-byte items) of `data`.
pub fn blosc(data: &[u8]) -> Vec<u8> {
    let config = BloscConfig {
        cname: BloscCompressor::Zstd,
        clevel: 5,
        shuffle: BloscShuffle::Shuffle,
        typesize: Some(8),
        blocksize: 0,
    };
    BloscCodec::new(&config, 8).unwrap().compress(data).unwrap()
}

/// The little-endian bytes of `values`.
pub fn f64s(values: impl IntoIterator<Item = f64>) -> Vec<u8> {
    values.into_iter().flat_map(f64::to_le_bytes).collect()
}

/// A zarr 0.4 array `DIR/old.zarr` of `<f8` (fill -1, attribute `units`), every chunk stored
/// at the full chunk shape (edge padding included) with value `10 × row + column`, except the
/// chunks in `missing`.
pub fn zarr04(dir: &Path, shape: [u32; 2], chunks: [u32; 2], missing: &[(u32, u32)]) -> PathBuf {
    let root = dir.join("old.zarr");
    write(
        &root.join("__zmeta__"),
        json!({"shape": shape, "chunks": chunks, "dtype": "<f8", "fill_value": -1.0,
               "cname": "zstd", "clevel": 5, "shuffle": 1})
        .to_string()
        .as_bytes(),
    );
    write(&root.join("__zattr__"), br#"{"units": "K"}"#);
    let [rows, cols] = chunks;
    for i in 0..shape[0].div_ceil(rows) {
        for j in 0..shape[1].div_ceil(cols) {
            if missing.contains(&(i, j)) {
                continue;
            }
            let values = (0..rows).flat_map(|r| {
                (0..cols).map(move |c| f64::from(10 * (rows * i + r) + cols * j + c))
            });
            write(
                &root.join(format!("__zdata__/{i}.{j}.blosc")),
                &blosc(&f64s(values)),
            );
        }
    }
    root
}

/// A bcolz ctable `DIR/table.bcolz` of `rows` rows in chunks of `chunklen` (the last one short
/// where `chunklen` does not divide `rows`), with a `float64` column per name: row `r` of the
/// `k`-th column holds `100 k + r`.
pub fn ctable(dir: &Path, rows: u32, chunklen: u32, names: &[&str]) -> PathBuf {
    let root = dir.join("table.bcolz");
    write(
        &root.join("__rootdirs__"),
        json!({"names": names}).to_string().as_bytes(),
    );
    write(&root.join("__attrs__"), br#"{"origin": "test"}"#);
    for (k, name) in names.iter().enumerate() {
        let offset = 100.0 * k as f64;
        let col = root.join(name);
        write(
            &col.join("meta/storage"),
            json!({"dtype": "float64", "cparams": {"clevel": 5, "shuffle": 1, "cname": "zstd"},
                   "chunklen": chunklen, "expectedlen": rows, "dflt": 0.0})
            .to_string()
            .as_bytes(),
        );
        write(
            &col.join("meta/sizes"),
            json!({"shape": [rows], "nbytes": 8 * rows, "cbytes": 0})
                .to_string()
                .as_bytes(),
        );
        for i in 0..rows.div_ceil(chunklen) {
            let range = i * chunklen..(rows.min((i + 1) * chunklen));
            let mut file = b"blpk\x01\0\0\0".to_vec();
            file.extend(1i64.to_le_bytes());
            file.extend(blosc(&f64s(range.map(|r| offset + f64::from(r)))));
            write(&col.join(format!("data/__{i}.blp")), &file);
        }
    }
    root
}
