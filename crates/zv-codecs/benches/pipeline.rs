//! Encodes and decodes 4 MiB chunks through the zv codec pipeline and through the raw library
//! calls (c-blosc, libzstd) in the same run.
//!
//! Criterion measures each variant in its own time window, which on a shared machine lets
//! drift dominate a few-percent difference. After the criterion groups, this benchmark
//! therefore also runs a *paired* measurement: rounds that time the raw call and the pipeline
//! back to back (alternating which goes first), and reports the median of the per-round
//! pipeline/raw ratios. It is printed and written to `target/criterion/paired-ratios.json`;
//! `scripts/bench-ratios.py` shows both.
#![allow(unsafe_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::hint::black_box;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use serde_json::json;
use zv_core::codec::{ArrayBytes, ChunkRepresentation, CodecChain};
use zv_core::data_type::{DataType, FillValue};
use zv_core::metadata::ExtensionMetadata;

const N: usize = 1 << 20; // float32 elements: 4 MiB

/// A smooth float32 signal (like vertex coordinates): compressible but not trivially.
fn data() -> Vec<u8> {
    let mut out = Vec::with_capacity(N * 4);
    let mut x = 0.0f32;
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..N {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        x += ((state % 1000) as f32 - 500.0) * 1e-3;
        let v = if i % 3 == 0 {
            x
        } else {
            x * 0.5 + i as f32 * 1e-4
        };
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

fn chain(codecs: serde_json::Value) -> CodecChain {
    zv_codecs::link();
    let metas: Vec<ExtensionMetadata> = serde_json::from_value(codecs).unwrap();
    let repr = ChunkRepresentation::new(
        vec![N as u64],
        DataType::Float32,
        FillValue::zero(DataType::Float32),
    )
    .unwrap();
    CodecChain::from_metadata(&metas, &repr).unwrap()
}

fn raw_blosc_compress(src: &[u8], clevel: i32, shuffle: i32, cname: &std::ffi::CStr) -> Vec<u8> {
    let mut out = vec![0u8; src.len() + 16];
    let n = unsafe {
        blosc_src::blosc_compress_ctx(
            clevel,
            shuffle,
            4,
            src.len(),
            src.as_ptr().cast(),
            out.as_mut_ptr().cast(),
            out.len(),
            cname.as_ptr(),
            0,
            1,
        )
    };
    assert!(n > 0);
    out.truncate(n as usize);
    out
}

fn raw_blosc_decompress(src: &[u8], nbytes: usize) -> Vec<u8> {
    let mut out = vec![0u8; nbytes];
    let n = unsafe {
        blosc_src::blosc_decompress_ctx(src.as_ptr().cast(), out.as_mut_ptr().cast(), nbytes, 1)
    };
    assert_eq!(n as usize, nbytes);
    out
}

fn bench(c: &mut Criterion) {
    let input = data();
    let mut group = c.benchmark_group("chunk4MiB");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.sample_size(20);

    for (label, cname, shuffle) in [
        ("blosc-zstd5-shuffle", c"zstd", 1),
        ("blosc-lz4-bitshuffle", c"lz4", 2),
    ] {
        let shuffle_name = if shuffle == 1 {
            "shuffle"
        } else {
            "bitshuffle"
        };
        let pipeline = chain(json!([
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "blosc", "configuration": {"cname": cname.to_str().unwrap(), "clevel": 5,
             "shuffle": shuffle_name, "typesize": 4, "blocksize": 0}}
        ]));
        let encoded = pipeline
            .encode(ArrayBytes::Fixed(Cow::Borrowed(&input)))
            .unwrap()
            .into_owned();
        let raw = raw_blosc_compress(&input, 5, shuffle, cname);
        assert_eq!(
            raw.len(),
            encoded.len(),
            "pipeline and raw calls produce different frames"
        );

        group.bench_function(BenchmarkId::new("encode-pipeline", label), |b| {
            b.iter(|| {
                pipeline
                    .encode(ArrayBytes::Fixed(Cow::Borrowed(black_box(&input))))
                    .unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("encode-raw", label), |b| {
            b.iter(|| raw_blosc_compress(black_box(&input), 5, shuffle, cname))
        });
        group.bench_function(BenchmarkId::new("decode-pipeline", label), |b| {
            b.iter(|| pipeline.decode(Cow::Borrowed(black_box(&encoded))).unwrap())
        });
        group.bench_function(BenchmarkId::new("decode-raw", label), |b| {
            b.iter(|| raw_blosc_decompress(black_box(&raw), input.len()))
        });
    }

    let pipeline = chain(json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 3, "checksum": false}}
    ]));
    let encoded = pipeline
        .encode(ArrayBytes::Fixed(Cow::Borrowed(&input)))
        .unwrap()
        .into_owned();
    let raw = zstd::bulk::compress(&input, 3).unwrap();
    group.bench_function(BenchmarkId::new("encode-pipeline", "zstd3"), |b| {
        b.iter(|| {
            pipeline
                .encode(ArrayBytes::Fixed(Cow::Borrowed(black_box(&input))))
                .unwrap()
        })
    });
    group.bench_function(BenchmarkId::new("encode-raw", "zstd3"), |b| {
        b.iter(|| zstd::bulk::compress(black_box(&input), 3).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode-pipeline", "zstd3"), |b| {
        b.iter(|| pipeline.decode(Cow::Borrowed(black_box(&encoded))).unwrap())
    });
    group.bench_function(BenchmarkId::new("decode-raw", "zstd3"), |b| {
        b.iter(|| zstd::bulk::decompress(black_box(&raw), input.len()).unwrap())
    });
    group.finish();
}

/// One codec under test: closures for the four operations.
struct Subject {
    label: &'static str,
    encode_zv: Box<dyn Fn() -> usize>,
    encode_raw: Box<dyn Fn() -> usize>,
    decode_zv: Box<dyn Fn() -> usize>,
    decode_raw: Box<dyn Fn() -> usize>,
}

fn subjects(input: &'static [u8]) -> Vec<Subject> {
    let mut out = Vec::new();
    for (label, cname, shuffle) in [
        ("blosc-zstd5-shuffle", c"zstd", 1),
        ("blosc-lz4-bitshuffle", c"lz4", 2),
    ] {
        let shuffle_name = if shuffle == 1 {
            "shuffle"
        } else {
            "bitshuffle"
        };
        let pipeline: &'static CodecChain = Box::leak(Box::new(chain(json!([
            {"name": "bytes", "configuration": {"endian": "little"}},
            {"name": "blosc", "configuration": {"cname": cname.to_str().unwrap(), "clevel": 5,
             "shuffle": shuffle_name, "typesize": 4, "blocksize": 0}}
        ]))));
        let frame: &'static [u8] =
            Box::leak(raw_blosc_compress(input, 5, shuffle, cname).into_boxed_slice());
        out.push(Subject {
            label,
            encode_zv: Box::new(move || {
                pipeline
                    .encode(ArrayBytes::Fixed(Cow::Borrowed(black_box(input))))
                    .unwrap()
                    .len()
            }),
            encode_raw: Box::new(move || {
                raw_blosc_compress(black_box(input), 5, shuffle, cname).len()
            }),
            decode_zv: Box::new(move || {
                match pipeline.decode(Cow::Borrowed(black_box(frame))).unwrap() {
                    ArrayBytes::Fixed(b) => b.len(),
                    _ => 0,
                }
            }),
            decode_raw: Box::new(move || raw_blosc_decompress(black_box(frame), input.len()).len()),
        });
    }
    let pipeline: &'static CodecChain = Box::leak(Box::new(chain(json!([
        {"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 3, "checksum": false}}
    ]))));
    let frame: &'static [u8] =
        Box::leak(zstd::bulk::compress(input, 3).unwrap().into_boxed_slice());
    out.push(Subject {
        label: "zstd3",
        encode_zv: Box::new(move || {
            pipeline
                .encode(ArrayBytes::Fixed(Cow::Borrowed(black_box(input))))
                .unwrap()
                .len()
        }),
        encode_raw: Box::new(move || zstd::bulk::compress(black_box(input), 3).unwrap().len()),
        decode_zv: Box::new(move || {
            match pipeline.decode(Cow::Borrowed(black_box(frame))).unwrap() {
                ArrayBytes::Fixed(b) => b.len(),
                _ => 0,
            }
        }),
        decode_raw: Box::new(move || {
            zstd::bulk::decompress(black_box(frame), input.len())
                .unwrap()
                .len()
        }),
    });
    out
}

fn time(f: &dyn Fn() -> usize, reps: u32) -> f64 {
    let start = std::time::Instant::now();
    for _ in 0..reps {
        black_box(f());
    }
    start.elapsed().as_secs_f64() / f64::from(reps)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Paired measurement: each round times raw and pipeline back to back.
fn paired() {
    let input: &'static [u8] = Box::leak(data().into_boxed_slice());
    let rounds: usize = std::env::var("ZV_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(41);
    let mut rows = Vec::new();
    println!("\npaired measurement ({rounds} rounds, median of per-round pipeline/raw ratios)");
    println!(
        "{:24} {:7} {:>9} {:>9} {:>7}",
        "codec", "op", "raw ms", "zv ms", "ratio"
    );
    for s in subjects(input) {
        for (op, zv, raw) in [
            ("encode", &s.encode_zv, &s.encode_raw),
            ("decode", &s.decode_zv, &s.decode_raw),
        ] {
            let reps = if time(raw.as_ref(), 1) > 0.01 { 2 } else { 5 };
            let (mut ratios, mut zv_t, mut raw_t) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..rounds {
                let (a, b) = if round % 2 == 0 {
                    let r = time(raw.as_ref(), reps);
                    (r, time(zv.as_ref(), reps))
                } else {
                    let z = time(zv.as_ref(), reps);
                    (time(raw.as_ref(), reps), z)
                };
                raw_t.push(a);
                zv_t.push(b);
                ratios.push(b / a);
            }
            let (r, z, q) = (median(&mut raw_t), median(&mut zv_t), median(&mut ratios));
            println!(
                "{:24} {:7} {:9.3} {:9.3} {:7.3}",
                s.label,
                op,
                r * 1e3,
                z * 1e3,
                q
            );
            rows.push(json!({"codec": s.label, "op": op, "raw_ms": r * 1e3, "zv_ms": z * 1e3, "ratio": q}));
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/criterion");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(
        dir.join("paired-ratios.json"),
        serde_json::to_vec_pretty(&rows).unwrap(),
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo test --benches` runs this binary without `--bench`: skip the long measurement.
    if std::env::args().any(|a| a == "--bench") {
        paired();
    }
}
