//! `sharding_indexed`: round trips (whole shards and partial reads of random regions, nested
//! sharding, missing inner chunks), arbitrary bytes as a shard, and each kind of bad index.
#![cfg(all(feature = "sharding", feature = "crc32c"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{json, Value};
use zv_core::codec::{
    assemble, ArrayBytes, ChunkReader, ChunkRepresentation, CodecChain, CodecError,
};
use zv_core::data_type::{DataType, FillValue};
use zv_core::grid::Region;
use zv_core::metadata::ExtensionMetadata;
use zv_core::store::ByteRange;

/// A stored shard read through byte ranges; counts the reads and keeps the first range.
struct Stored {
    bytes: Vec<u8>,
    reads: AtomicUsize,
    first: std::sync::Mutex<Option<ByteRange>>,
}

impl Stored {
    fn new(bytes: Vec<u8>) -> Self {
        Self {
            bytes,
            reads: AtomicUsize::new(0),
            first: std::sync::Mutex::new(None),
        }
    }
}

impl ChunkReader for Stored {
    fn read(&self, range: ByteRange) -> Result<Option<Bytes>, CodecError> {
        if self.reads.fetch_add(1, Ordering::SeqCst) == 0 {
            *self.first.lock().unwrap() = Some(range);
        }
        let r = range
            .to_range(self.bytes.len() as u64)
            .ok_or_else(|| CodecError::corrupt("test store", format!("range {range:?}")))?;
        Ok(Some(Bytes::copy_from_slice(
            &self.bytes[r.start as usize..r.end as usize],
        )))
    }
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
    json!({"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": codecs, "index_codecs": index, "index_location": location}})
}

fn chain(codecs: &[Value], shape: &[u64], dt: DataType, fill: FillValue) -> CodecChain {
    zv_codecs::link();
    let repr = ChunkRepresentation::new(shape.to_vec(), dt, fill).unwrap();
    let meta: Vec<ExtensionMetadata> = codecs
        .iter()
        .map(|c| serde_json::from_value(c.clone()).unwrap())
        .collect();
    CodecChain::from_metadata(&meta, &repr).unwrap()
}

/// A shard case: shard shape, inner shape, and which inner chunks hold only the fill value.
fn case() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Vec<u8>, u64, bool, bool, bool)> {
    (1usize..=3)
        .prop_flat_map(|ndim| {
            (
                prop::collection::vec(1u64..4, ndim),
                prop::collection::vec(1u64..4, ndim),
                prop::collection::vec(any::<u8>(), 1..64),
                any::<u64>(),
                any::<bool>(),
                any::<bool>(),
                any::<bool>(),
            )
        })
        .prop_map(|(grid, inner, seed, holes, start, crc, nested)| {
            let shard: Vec<u64> = grid.iter().zip(&inner).map(|(g, i)| g * i).collect();
            (shard, inner, seed, holes, start, crc, nested)
        })
}

/// uint16 values; the inner chunks picked by `holes` hold only the fill value 7.
fn data(shard: &[u64], inner: &[u64], seed: &[u8], holes: u64) -> Vec<u16> {
    let n: u64 = shard.iter().product();
    (0..n)
        .map(|i| {
            let mut rest = i;
            let mut chunk = 0u64;
            for d in (0..shard.len()).rev() {
                let c = rest % shard[d];
                rest /= shard[d];
                chunk = chunk * 7 + c / inner[d];
            }
            if holes >> (chunk % 64) & 1 == 1 {
                7
            } else {
                u16::from(seed[i as usize % seed.len()]) * 3 + i as u16
            }
        })
        .collect()
}

fn to_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    /// decode(encode(x)) == x, and a partial read of any region equals that region of x.
    #[test]
    fn round_trip_and_partial_reads(
        (shard, inner, seed, holes, start, crc, nested) in case(),
        region_seed in prop::collection::vec((any::<u64>(), any::<u64>()), 3),
    ) {
        let location = if start { "start" } else { "end" };
        let inner_codecs = if nested {
            // inner chunks that are shards of single elements
            json!([sharding(&vec![1; inner.len()], json!([bytes_le()]), "end", true)])
        } else {
            json!([bytes_le(), {"name": "crc32c"}])
        };
        let fill = FillValue::from_json(DataType::UInt16, &json!(7)).unwrap();
        let c = chain(&[sharding(&inner, inner_codecs, location, crc)], &shard, DataType::UInt16, fill);
        let values = to_bytes(&data(&shard, &inner, &seed, holes));
        let encoded = c.encode(ArrayBytes::Fixed(Cow::Borrowed(&values))).unwrap().into_owned();
        let decoded = c.decode(Cow::Borrowed(&encoded)).unwrap().into_owned();
        prop_assert_eq!(&decoded, &ArrayBytes::Fixed(Cow::Borrowed(&values[..])));

        let (start_r, shape_r): (Vec<u64>, Vec<u64>) = shard
            .iter()
            .zip(&region_seed)
            .map(|(&n, &(a, b))| {
                let s = a % n;
                (s, 1 + b % (n - s))
            })
            .unzip();
        let region = Region::new(start_r, shape_r).unwrap();
        let stored = Stored::new(encoded);
        let part = c.partial_decode(&stored, &region).unwrap().unwrap();
        // the first read is the one the chain announces, whatever the region
        prop_assert!(c.first_partial_read().is_some());
        prop_assert_eq!(*stored.first.lock().unwrap(), c.first_partial_read());
        let whole = Region::whole(&shard);
        let want = assemble(&region, c.decoded_representation(), &[(&whole, &decoded)]).unwrap();
        prop_assert_eq!(part, want);
    }

    /// Arbitrary bytes, and damaged shards, decode to an error or to a whole shard, never a
    /// panic; partial reads of them too.
    #[test]
    fn arbitrary_bytes_never_panic(
        junk in prop::collection::vec(any::<u8>(), 0..600),
        flip in any::<usize>(),
        cut in any::<usize>(),
        start in any::<bool>(),
        crc in any::<bool>(),
    ) {
        let location = if start { "start" } else { "end" };
        let fill = FillValue::zero(DataType::UInt16);
        let c = chain(&[sharding(&[2, 2], json!([bytes_le()]), location, crc)], &[4, 4], DataType::UInt16, fill);
        let region = Region::new(vec![1, 1], vec![2, 2]).unwrap();
        let _ = c.decode(Cow::Borrowed(&junk));
        let _ = c.partial_decode(&Stored::new(junk), &region);
        let values = to_bytes(&(0..16).collect::<Vec<u16>>());
        let mut good = c.encode(ArrayBytes::Fixed(Cow::Owned(values))).unwrap().into_owned();
        let bit = flip % (good.len() * 8);
        good[bit / 8] ^= 1 << (bit % 8);
        let _ = c.decode(Cow::Borrowed(&good));
        let _ = c.partial_decode(&Stored::new(good.clone()), &region);
        good.truncate(cut % good.len());
        prop_assert!(c.decode(Cow::Borrowed(&good)).is_err());
    }
}

#[test]
fn empty_inner_chunks_are_not_written() {
    let c = chain(
        &[sharding(&[2], json!([bytes_le()]), "end", false)],
        &[6],
        DataType::UInt32,
        FillValue::zero(DataType::UInt32),
    );
    let values: Vec<u8> = [0u32, 0, 5, 6, 0, 0]
        .iter()
        .flat_map(|x| x.to_ne_bytes())
        .collect();
    let enc = c
        .encode(ArrayBytes::Fixed(Cow::Owned(values.clone())))
        .unwrap();
    // one inner chunk of 8 bytes, then the index of 3 × 16 bytes
    assert_eq!(enc.len(), 8 + 48);
    let index = &enc[8..];
    assert_eq!(&index[..16], &[0xff; 16]);
    assert_eq!(&index[16..24], &0u64.to_le_bytes());
    assert_eq!(&index[24..32], &8u64.to_le_bytes());
    assert_eq!(&index[32..], &[0xff; 16]);
    let dec = c.decode(enc).unwrap();
    assert_eq!(dec, ArrayBytes::Fixed(Cow::Owned(values)));
    // a one-inner-chunk read: the index, then that inner chunk
    let stored = Stored::new(c.encode(dec).unwrap().into_owned());
    let part = c
        .partial_decode(&stored, &Region::new(vec![3], vec![1]).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(
        part,
        ArrayBytes::Fixed(Cow::Owned(6u32.to_ne_bytes().to_vec()))
    );
    assert_eq!(stored.reads.load(Ordering::Relaxed), 2);
}

/// A 2-inner-chunk uint8 shard with the index at the end and no checksum, whose index we
/// rewrite.
fn with_index(entries: &[(u64, u64)], payload: &[u8]) -> Vec<u8> {
    let mut out = payload.to_vec();
    for (o, n) in entries {
        out.extend_from_slice(&o.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
    }
    out
}

fn error_of(c: &CodecChain, shard: &[u8]) -> String {
    c.decode(Cow::Borrowed(shard)).unwrap_err().to_string()
}

#[test]
fn bad_shards_are_errors() {
    let u8s = |crc| {
        chain(
            &[sharding(&[2], json!([{"name": "bytes"}]), "end", crc)],
            &[4],
            DataType::UInt8,
            FillValue::zero(DataType::UInt8),
        )
    };
    let c = u8s(false);
    let payload = [1u8, 2, 3, 4];
    assert!(c
        .decode(Cow::Owned(with_index(&[(0, 2), (2, 2)], &payload)))
        .is_ok());
    let e = error_of(&c, &with_index(&[(0, 2), (1, 2)], &payload));
    assert!(e.contains("overlap"), "{e}");
    let e = error_of(&c, &with_index(&[(0, 2), (30, 10)], &payload));
    assert!(e.contains("past the end"), "{e}");
    let e = error_of(&c, &with_index(&[(0, 2), (2, 1)], &payload[..3]));
    assert!(e.contains("an encoded inner chunk has 2"), "{e}");
    let e = error_of(&c, &with_index(&[(0, 2), (4, 2)], &payload));
    assert!(e.contains("overlap the index"), "{e}");
    let e = error_of(&c, &[0u8; 20]);
    assert!(e.contains("truncated"), "{e}");
    // a huge claimed size is refused from the index, before anything is allocated for it
    let e = error_of(&c, &with_index(&[(0, 2), (2, u64::MAX / 2)], &payload));
    assert!(e.contains("entry 1"), "{e}");
    // checksum mismatch in the index
    let c = u8s(true);
    let mut good = c
        .encode(ArrayBytes::Fixed(Cow::Owned(payload.to_vec())))
        .unwrap()
        .into_owned();
    let n = good.len();
    good[n - 10] ^= 0x40;
    let e = error_of(&c, &good);
    assert!(e.contains("checksum mismatch"), "{e}");
}

#[cfg(feature = "zstd")]
#[test]
fn configurations_that_cannot_work_are_refused() {
    zv_codecs::link();
    let repr = ChunkRepresentation::new(vec![6], DataType::UInt8, FillValue::zero(DataType::UInt8))
        .unwrap();
    for (config, why) in [
        (
            sharding(&[4], json!([{"name": "bytes"}]), "end", false),
            "does not divide",
        ),
        (
            sharding(&[2, 1], json!([{"name": "bytes"}]), "end", false),
            "dimensions",
        ),
        (
            sharding(&[0], json!([{"name": "bytes"}]), "end", false),
            "does not divide",
        ),
        (
            json!({"name": "sharding_indexed", "configuration": {"chunk_shape": [2],
                "codecs": [{"name": "bytes"}], "index_codecs": [bytes_le(), {"name": "zstd", "configuration": {"level": 1}}]}}),
            "fixed size",
        ),
    ] {
        let meta: ExtensionMetadata = serde_json::from_value(config).unwrap();
        let e = CodecChain::from_metadata(&[meta], &repr)
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{e}");
    }
}

#[test]
fn the_first_partial_read_is_the_index() {
    // 3 inner chunks of 2: 3 × 16 index bytes, and 4 of crc32c
    let fill = || FillValue::zero(DataType::UInt32);
    let end = chain(
        &[sharding(&[2], json!([bytes_le()]), "end", true)],
        &[6],
        DataType::UInt32,
        fill(),
    );
    assert_eq!(end.first_partial_read(), Some(ByteRange::Suffix(52)));
    let start = chain(
        &[sharding(&[2], json!([bytes_le()]), "start", false)],
        &[6],
        DataType::UInt32,
        fill(),
    );
    assert_eq!(
        start.first_partial_read(),
        Some(ByteRange::FromStart {
            offset: 0,
            length: Some(48)
        })
    );
    // no partial decoding: nothing to announce
    let plain = chain(&[bytes_le()], &[6], DataType::UInt32, fill());
    assert_eq!(plain.first_partial_read(), None);
    let wrapped = chain(
        &[
            sharding(&[2], json!([bytes_le()]), "end", true),
            json!({"name": "crc32c"}),
        ],
        &[6],
        DataType::UInt32,
        fill(),
    );
    assert_eq!(wrapped.first_partial_read(), None);
}
