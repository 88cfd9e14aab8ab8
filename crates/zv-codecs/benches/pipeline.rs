//! Encodes and decodes 4 MiB chunks through the zv codec pipeline and through the raw library
//! calls (c-blosc, libzstd) in the same run. `scripts/bench-ratios.py` turns the results into
//! pipeline/raw ratios.
#![allow(unsafe_code, missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
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

criterion_group!(benches, bench);
criterion_main!(benches);
