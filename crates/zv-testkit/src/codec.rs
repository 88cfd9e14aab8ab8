//! The codec conformance suite.
//!
//! [`check_codec`] takes the `zarr.json` entry of a registered codec and checks:
//!
//! - it resolves through the registry, and builds for at least one data type;
//! - **round trip**: `decode(encode(x)) == x` over random inputs — for bytes→bytes codecs,
//!   random byte strings of 0..8 KiB under every type size the codec accepts (1, 2, 4, 8, 16;
//!   lengths need not be multiples of the type size), with and without the expected size; for
//!   array codecs, random chunks of every data type and dimensionality (0–3, zero extents
//!   included) the codec accepts;
//! - **never panics**: arbitrary bytes, and valid encodings that are truncated, bit-flipped or
//!   extended, fed to `decode` return `Ok` or `Err`; an `Ok` result has the expected size.

use std::borrow::Cow;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use zv_core::codec::{ArrayBytes, BytesToBytesCodec, ChunkRepresentation, Codec, CodecChain};
use zv_core::data_type::{DataType, FillValue, ALL_DATA_TYPES};
use zv_core::metadata::ExtensionMetadata;
use zv_core::plugin::{codec_plugin, create_codec};

fn cases() -> u32 {
    std::env::var("ZV_CODEC_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96)
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    })
}

/// Compressible or random payloads.
fn payload(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..max),
        (prop::collection::vec(any::<u8>(), 1..8), 0..max)
            .prop_map(|(pattern, n)| { pattern.iter().copied().cycle().take(n).collect() }),
        (0..max).prop_map(|n| vec![0u8; n]),
    ]
}

/// A damage applied to a valid encoding.
#[derive(Debug, Clone)]
pub enum Damage {
    /// Keep only the first `n` bytes (modulo the length).
    Truncate(usize),
    /// Flip bit `bit` (modulo the bit length).
    FlipBit(usize),
    /// Append bytes.
    Extend(Vec<u8>),
    /// Overwrite a byte.
    SetByte(usize, u8),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        any::<usize>().prop_map(Damage::Truncate),
        any::<usize>().prop_map(Damage::FlipBit),
        prop::collection::vec(any::<u8>(), 1..16).prop_map(Damage::Extend),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Damage::SetByte(i, b)),
    ]
}

/// Applies a damage to `bytes`.
pub fn apply_damage(bytes: &[u8], d: &Damage) -> Vec<u8> {
    let mut out = bytes.to_vec();
    match d {
        Damage::Truncate(n) => out.truncate(if bytes.is_empty() { 0 } else { n % bytes.len() }),
        Damage::FlipBit(bit) if !out.is_empty() => {
            let b = bit % (out.len() * 8);
            out[b / 8] ^= 1 << (b % 8);
        }
        Damage::SetByte(i, v) if !out.is_empty() => {
            let n = out.len();
            out[i % n] = *v;
        }
        Damage::Extend(extra) => out.extend_from_slice(extra),
        _ => {}
    }
    out
}

/// Runs the codec conformance suite on the codec described by `metadata` (a `zarr.json`
/// codec entry). Panics on the first failure.
pub fn check_codec(metadata: serde_json::Value) {
    let meta: ExtensionMetadata =
        serde_json::from_value(metadata.clone()).expect("not a codec entry");
    let plugin = codec_plugin(&meta.name)
        .unwrap_or_else(|e| panic!("codec `{}` does not resolve: {e}", meta.name));
    assert!(plugin.is_available(), "codec `{}` is disabled", meta.name);
    match plugin.kind {
        zv_core::codec::CodecKind::BytesToBytes => check_bytes_to_bytes(&meta),
        _ => check_array_codec(&meta),
    }
}

fn repr(dt: DataType, shape: Vec<u64>) -> ChunkRepresentation {
    ChunkRepresentation::new(shape, dt, FillValue::zero(dt)).expect("representation")
}

fn check_bytes_to_bytes(meta: &ExtensionMetadata) {
    let typed: Vec<(DataType, Arc<dyn BytesToBytesCodec>)> = [
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
        DataType::Complex128,
    ]
    .into_iter()
    .filter_map(|dt| match create_codec(meta, &repr(dt, vec![1])) {
        Ok(Codec::BytesToBytes(c)) => Some((dt, c)),
        _ => None,
    })
    .collect();
    assert!(
        !typed.is_empty(),
        "codec `{}` builds for no type size",
        meta.name
    );
    let n = typed.len();
    let name = meta.name.clone();

    // Round trip.
    let result = runner().run(&(0..n, payload(8192)), |(i, data)| {
        let (dt, codec) = &typed[i];
        let enc = codec
            .encode(Cow::Borrowed(&data))
            .map_err(|e| TestCaseError::fail(format!("{dt}: encode: {e}")))?;
        if let Some(size) = codec.encoded_size(data.len()) {
            prop_assert_eq!(size, enc.len(), "encoded_size disagrees");
        }
        let dec = codec
            .decode(Cow::Borrowed(&enc), Some(data.len()))
            .map_err(|e| TestCaseError::fail(format!("{dt}: decode: {e}")))?;
        prop_assert_eq!(&dec[..], &data[..], "round trip with the expected size");
        let dec = codec
            .decode(Cow::Owned(enc.into_owned()), None)
            .map_err(|e| TestCaseError::fail(format!("{dt}: decode without size: {e}")))?;
        prop_assert_eq!(&dec[..], &data[..], "round trip without the expected size");
        Ok(())
    });
    if let Err(e) = result {
        panic!("codec `{name}` round trip: {e}");
    }

    // Arbitrary bytes never panic.
    let result = runner().run(
        &(
            0..n,
            prop::collection::vec(any::<u8>(), 0..512),
            prop::option::of(0usize..100_000),
        ),
        |(i, junk, expected)| {
            let (_, codec) = &typed[i];
            check_decoded_size(codec.as_ref(), &junk, expected)
        },
    );
    if let Err(e) = result {
        panic!("codec `{name}` on arbitrary bytes: {e}");
    }

    // Damaged valid encodings never panic.
    let result = runner().run(&(0..n, payload(2048), damage()), |(i, data, d)| {
        let (_, codec) = &typed[i];
        let enc = codec
            .encode(Cow::Borrowed(&data))
            .map_err(|e| TestCaseError::fail(format!("encode: {e}")))?;
        let bad = apply_damage(&enc, &d);
        for expected in [Some(data.len()), None] {
            check_decoded_size(codec.as_ref(), &bad, expected)?;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("codec `{name}` on damaged encodings: {e}");
    }
}

/// Decoding `input` may fail, but when it succeeds with an `expected` size it must give
/// exactly that many bytes.
fn check_decoded_size(
    codec: &dyn BytesToBytesCodec,
    input: &[u8],
    expected: Option<usize>,
) -> Result<(), TestCaseError> {
    if let Ok(out) = codec.decode(Cow::Borrowed(input), expected) {
        if let Some(e) = expected {
            prop_assert_eq!(out.len(), e, "Ok with the wrong size");
        }
    }
    Ok(())
}

/// Elements for a chunk representation.
fn chunk_data(r: &ChunkRepresentation, seed: &[u8]) -> ArrayBytes<'static> {
    let n = r.num_elements() as usize;
    let byte = |i: usize| {
        seed.get(i % seed.len().max(1))
            .copied()
            .unwrap_or(0)
            .wrapping_add(i as u8)
    };
    match r.data_type().size() {
        Some(es) => {
            let mut v: Vec<u8> = (0..n * es).map(byte).collect();
            if r.data_type() == DataType::Bool {
                v.iter_mut().for_each(|b| *b &= 1);
            }
            ArrayBytes::Fixed(Cow::Owned(v))
        }
        None => ArrayBytes::from_elements((0..n).map(|i| vec![byte(i); i % 5])),
    }
}

fn check_array_codec(meta: &ExtensionMetadata) {
    let bytes_le =
        ExtensionMetadata::with_configuration("bytes", serde_json::json!({"endian": "little"}));
    let vlen = ExtensionMetadata::with_configuration("vlen-bytes", serde_json::json!({}));
    // (data type, ndim) pairs for which a pipeline builds.
    let mut combos = Vec::new();
    for dt in ALL_DATA_TYPES {
        for ndim in 0..=3usize {
            let r = repr(dt, vec![2; ndim]);
            if build_chain(meta, &bytes_le, &vlen, &r).is_some() {
                combos.push((dt, ndim));
            }
        }
    }
    assert!(
        !combos.is_empty(),
        "codec `{}` builds for no data type and dimensionality",
        meta.name
    );
    let name = meta.name.clone();
    let strategy = (
        prop::sample::select(combos),
        prop::collection::vec(0u64..6, 3),
        prop::collection::vec(any::<u8>(), 1..32),
        damage(),
        prop::collection::vec(any::<u8>(), 0..256),
    );
    let result = runner().run(&strategy, |((dt, ndim), extents, seed, d, junk)| {
        let r = repr(dt, extents[..ndim].to_vec());
        let Some(chain) = build_chain(meta, &bytes_le, &vlen, &r) else {
            return Ok(());
        };
        let data = chunk_data(&r, &seed);
        let enc = chain
            .encode(data.clone())
            .map_err(|e| TestCaseError::fail(format!("{dt} {:?}: encode: {e}", r.shape())))?
            .into_owned();
        let dec = chain
            .decode(Cow::Borrowed(&enc))
            .map_err(|e| TestCaseError::fail(format!("{dt} {:?}: decode: {e}", r.shape())))?;
        prop_assert_eq!(dec, data, "round trip");
        // damaged and arbitrary input: Ok results are validated by the chain itself
        let _ = chain.decode(Cow::Owned(apply_damage(&enc, &d)));
        let _ = chain.decode(Cow::Borrowed(&junk));
        Ok(())
    });
    if let Err(e) = result {
        panic!("codec `{name}`: {e}");
    }
}

fn build_chain(
    meta: &ExtensionMetadata,
    bytes_le: &ExtensionMetadata,
    vlen: &ExtensionMetadata,
    r: &ChunkRepresentation,
) -> Option<CodecChain> {
    let codec = create_codec(meta, r).ok()?;
    let list = match codec.kind() {
        zv_core::codec::CodecKind::ArrayToBytes => vec![meta.clone()],
        _ => {
            let serializer = if r.data_type().is_variable() {
                vlen
            } else {
                bytes_le
            };
            vec![meta.clone(), serializer.clone()]
        }
    };
    CodecChain::from_metadata(&list, r).ok()
}
