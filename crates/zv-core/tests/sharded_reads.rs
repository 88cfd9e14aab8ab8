//! Region reads of sharded arrays through the store: a region inside one inner chunk costs the
//! index read plus one ranged read, a whole shard one read; bad shards are errors naming the
//! chunk key; any region of a chunked or sharded array reads back what was written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{json, Value};
use zv_core::array::Array;
use zv_core::grid::Region;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::metadata::ArrayMetadata;
use zv_core::node::NodePath;
use zv_core::store::{ByteRange, ListableStore, ReadableStore, Store, StoreResult, WritableStore};
use zv_store_mem::MemoryStore;

/// One read of the store: the key and the range (`None` for a whole-value `get`).
type Read = (String, Option<ByteRange>);

/// A memory store that records every read.
#[derive(Default)]
struct Counting {
    inner: MemoryStore,
    reads: Mutex<Vec<Read>>,
    /// What the store answers for `coalesce_gap`.
    gap: u64,
}

impl Counting {
    fn take(&self) -> Vec<Read> {
        std::mem::take(&mut *self.reads.lock().unwrap())
    }
}

impl ReadableStore for Counting {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        self.reads.lock().unwrap().push((key.to_string(), None));
        self.inner.get(key)
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        self.reads
            .lock()
            .unwrap()
            .push((key.to_string(), Some(range)));
        self.inner.get_range(key, range)
    }

    // A size is not a read of the value (the default would `get` it).
    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        self.inner.size(key)
    }

    fn coalesce_gap(&self) -> u64 {
        self.gap
    }
}

impl WritableStore for Counting {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.inner.set(key, value)
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        self.inner.delete(key)
    }
}

impl ListableStore for Counting {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        self.inner.list_prefix(prefix)
    }
}

impl Store for Counting {}

fn sharded(store: Arc<dyn Store>, location: &str, index_crc: bool) -> Array {
    zv_codecs::link();
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let index: Value = if index_crc {
        json!([bytes, {"name": "crc32c"}])
    } else {
        json!([bytes])
    };
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [64, 40], "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [32, 20]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [8, 5], "codecs": [bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
            "index_codecs": index, "index_location": location}}]});
    let meta = ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap();
    Array::create(store, &NodePath::new("/a").unwrap(), meta).unwrap()
}

fn values() -> Vec<u16> {
    (0..64 * 40).map(|i| (i * 7 % 65521) as u16).collect()
}

fn expected(region: &Region) -> Vec<u16> {
    let all = values();
    let (s, n) = (region.start(), region.shape());
    let mut out = Vec::new();
    for r in s[0]..s[0] + n[0] {
        for c in s[1]..s[1] + n[1] {
            out.push(all[(r * 40 + c) as usize]);
        }
    }
    out
}

#[test]
fn one_inner_chunk_costs_the_index_and_one_ranged_read() {
    for (location, crc) in [("end", true), ("start", false), ("end", false)] {
        let counting = Arc::new(Counting::default());
        let array = sharded(counting.clone(), location, crc);
        array
            .store_region_elements(&Region::whole(&[64, 40]), &values())
            .unwrap();
        counting.take();
        // inside inner chunk (1, 2) of shard (1, 0)
        let region = Region::new(vec![41, 11], vec![3, 2]).unwrap();
        assert_eq!(
            array.retrieve_region_elements::<u16>(&region).unwrap(),
            expected(&region)
        );
        let reads = counting.take();
        let index_size = 4 * 4 * 16 + if crc { 4 } else { 0 };
        assert_eq!(reads.len(), 2, "{location}: {reads:?}");
        assert!(reads.iter().all(|(k, _)| k == "a/c/1/0"), "{reads:?}");
        let index_read = match location {
            "end" => ByteRange::Suffix(index_size),
            _ => ByteRange::FromStart {
                offset: 0,
                length: Some(index_size),
            },
        };
        assert_eq!(reads[0].1, Some(index_read), "{location}");
        assert!(
            matches!(
                reads[1].1,
                Some(ByteRange::FromStart {
                    length: Some(_),
                    ..
                })
            ),
            "{reads:?}"
        );
        // two neighbouring inner chunks, stored one after the other: the index and one
        // ranged read of both
        let region = Region::new(vec![41, 11], vec![3, 6]).unwrap();
        assert_eq!(
            array.retrieve_region_elements::<u16>(&region).unwrap(),
            expected(&region)
        );
        assert_eq!(counting.take().len(), 2);
        // two inner chunks one above the other, three chunks apart in the shard: a ranged
        // read each
        let region = Region::new(vec![46, 11], vec![4, 2]).unwrap();
        assert_eq!(
            array.retrieve_region_elements::<u16>(&region).unwrap(),
            expected(&region)
        );
        assert_eq!(counting.take().len(), 3);
        // a whole shard: one read
        let region = Region::new(vec![32, 0], vec![32, 20]).unwrap();
        assert_eq!(
            array.retrieve_region_elements::<u16>(&region).unwrap(),
            expected(&region)
        );
        assert_eq!(counting.take(), vec![("a/c/1/0".to_owned(), None)]);
        // everything
        let whole = Region::whole(&[64, 40]);
        assert_eq!(
            array.retrieve_region_elements::<u16>(&whole).unwrap(),
            values()
        );
        assert_eq!(counting.take().len(), 4);
    }
}

#[test]
fn inner_chunks_within_the_stores_gap_are_read_at_once() {
    let counting = Arc::new(Counting {
        gap: 1 << 20,
        ..Counting::default()
    });
    let array = sharded(counting.clone(), "end", true);
    array
        .store_region_elements(&Region::whole(&[64, 40]), &values())
        .unwrap();
    counting.take();
    // inner chunks (1, 2) and (2, 2) of shard (1, 0), apart in the shard: one read of the
    // span between them after the index
    let region = Region::new(vec![46, 11], vec![4, 2]).unwrap();
    assert_eq!(
        array.retrieve_region_elements::<u16>(&region).unwrap(),
        expected(&region)
    );
    let reads = counting.take();
    assert_eq!(reads.len(), 2, "{reads:?}");
    // every inner chunk of a 10 x 4 box of them across two shards: the index and one read
    // per shard
    let region = Region::new(vec![20, 0], vec![24, 40]).unwrap();
    assert_eq!(
        array.retrieve_region_elements::<u16>(&region).unwrap(),
        expected(&region)
    );
    let reads = counting.take();
    assert!(reads.len() <= 8, "{reads:?}");
}

#[test]
fn missing_shards_and_inner_chunks_read_as_fill() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = sharded(store.clone(), "end", true);
    let region = Region::new(vec![8, 5], vec![8, 5]).unwrap();
    array.store_region_elements(&region, &[9u16; 40]).unwrap();
    // only the inner chunk written holds data; its neighbours and other shards are fill
    let around = Region::new(vec![6, 3], vec![12, 9]).unwrap();
    let got = array.retrieve_region_elements::<u16>(&around).unwrap();
    let inside = |r: usize, c: usize| (8..16).contains(&(r + 6)) && (5..10).contains(&(c + 3));
    for (i, v) in got.iter().enumerate() {
        let want = if inside(i / 9, i % 9) { 9 } else { 0 };
        assert_eq!(*v, want, "element {i}");
    }
    let far = Region::new(vec![40, 30], vec![2, 2]).unwrap();
    assert_eq!(
        array.retrieve_region_elements::<u16>(&far).unwrap(),
        vec![0; 4]
    );
    // the shard holds one inner chunk and the index
    let shard = store
        .get(&StoreKey::new("a/c/0/0").unwrap())
        .unwrap()
        .unwrap();
    assert!(shard.len() < 16 * 16 + 4 + 80, "{} bytes", shard.len());
}

#[test]
fn truncated_and_corrupt_shards_name_the_key() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = sharded(store.clone(), "end", true);
    array
        .store_region_elements(&Region::whole(&[64, 40]), &values())
        .unwrap();
    let key = StoreKey::new("a/c/0/1").unwrap();
    let shard = store.get(&key).unwrap().unwrap();
    let part = Region::new(vec![0, 20], vec![2, 2]).unwrap();
    let whole = Region::new(vec![0, 20], vec![32, 20]).unwrap();
    for bad in [
        shard.slice(..shard.len() - 1),
        shard.slice(..100),
        shard.slice(..3),
        Bytes::new(),
        {
            let mut v = shard.to_vec();
            let n = v.len();
            v[n - 30] ^= 1; // inside the index: checksum mismatch
            Bytes::from(v)
        },
    ] {
        store.set(&key, bad).unwrap();
        for region in [&part, &whole] {
            let e = array.retrieve_region(region).unwrap_err().to_string();
            assert!(e.contains("a/c/0/1"), "{e}");
        }
    }
}

/// A `ndim`-D uint16 array of `shape`, chunks `chunk` (shards of 2 × `chunk` holding inner
/// chunks `chunk` when `sharded`), holding its linear element index.
fn filled(shape: &[u64], chunk: &[u64], sharded: bool) -> Array {
    zv_codecs::link();
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let (grid, codecs) = if sharded {
        let shard: Vec<u64> = chunk.iter().map(|c| c * 2).collect();
        (
            shard,
            json!([{"name": "sharding_indexed", "configuration": {
            "chunk_shape": chunk, "codecs": [bytes],
            "index_codecs": [bytes], "index_location": "end"}}]),
        )
    } else {
        (chunk.to_vec(), json!([bytes]))
    };
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": grid}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": codecs});
    let meta = ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::create(store, &NodePath::new("/p").unwrap(), meta).unwrap();
    let n: u64 = shape.iter().product();
    let values: Vec<u16> = (0..n).map(|i| i as u16).collect();
    array
        .store_region_elements(&Region::whole(shape), &values)
        .unwrap();
    array
}

/// The linear indices (as uint16) of `region` of an array of `shape`, in C order.
fn linear_in(shape: &[u64], region: &Region) -> Vec<u16> {
    let mut out = Vec::new();
    let n = region.num_elements().unwrap();
    for k in 0..n {
        // the k-th element of the region, then its linear index in the array
        let (mut rest, mut idx) = (k, vec![0u64; shape.len()]);
        for d in (0..shape.len()).rev() {
            idx[d] = region.start()[d] + rest % region.shape()[d];
            rest /= region.shape()[d];
        }
        let lin = idx.iter().zip(shape).fold(0u64, |a, (i, s)| a * s + i);
        out.push(lin as u16);
    }
    out
}

fn dims_and_region() -> impl Strategy<Value = (Vec<u64>, Vec<u64>, Vec<(u64, u64)>)> {
    (1usize..=3).prop_flat_map(|nd| {
        (
            proptest::collection::vec(1u64..=13, nd),
            proptest::collection::vec(1u64..=5, nd),
            proptest::collection::vec((0.0f64..1.0, 0.0f64..1.0), nd),
        )
            .prop_map(|(shape, chunk, fr)| {
                let region = shape
                    .iter()
                    .zip(&fr)
                    .map(|(&s, &(a, b))| {
                        let start = ((s as f64) * a) as u64 % s;
                        let len = 1 + (((s - start) as f64) * b) as u64 % (s - start);
                        (start, len)
                    })
                    .collect();
                (shape, chunk, region)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any region of a 1-D..3-D array, chunked or sharded (edge chunks and shards partial),
    /// reads back the elements written there: the band-by-band assembly of fixed-size data
    /// puts every chunk's part where it belongs.
    #[test]
    fn any_region_reads_what_was_written(
        (shape, chunk, region) in dims_and_region(),
        sharded in any::<bool>(),
    ) {
        let array = filled(&shape, &chunk, sharded);
        let (start, len): (Vec<u64>, Vec<u64>) = region.into_iter().unzip();
        let region = Region::new(start, len).unwrap();
        let got = array.retrieve_region_elements::<u16>(&region).unwrap();
        prop_assert_eq!(got, linear_in(&shape, &region));
    }
}

#[test]
fn whole_shard_reads_give_missing_inner_chunks_and_shards_the_fill_value() {
    zv_codecs::link();
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let doc = json!({"zarr_format": 3, "node_type": "array", "shape": [16, 12], "data_type": "uint16",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 6]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 7, "codecs": [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": [4, 3], "codecs": [bytes], "index_codecs": [bytes],
            "index_location": "start"}}]});
    let meta = ArrayMetadata::from_json(doc.to_string().as_bytes()).unwrap();
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let array = Array::create(store, &NodePath::new("/f").unwrap(), meta).unwrap();
    // one inner chunk of shard (0, 1) holds data; the other three shards are not stored
    let inner = Region::new(vec![4, 6], vec![4, 3]).unwrap();
    array.store_region_elements(&inner, &[1u16; 12]).unwrap();
    let got = array
        .retrieve_region_elements::<u16>(&Region::whole(&[16, 12]))
        .unwrap();
    for (i, v) in got.iter().enumerate() {
        let (r, c) = (i / 12, i % 12);
        let want = if (4..8).contains(&r) && (6..9).contains(&c) {
            1
        } else {
            7
        };
        assert_eq!(*v, want, "element ({r}, {c})");
    }
}
