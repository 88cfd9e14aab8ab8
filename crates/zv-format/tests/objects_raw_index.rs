//! Reading many objects of a zv-written level decodes each manifest of the object index where
//! it is used (`reader/raw_index.rs`) instead of the whole index first, in zv's 0.7 container
//! and in ZV 0.9's (`vlen_manifests_v2`, sparse ids included). The objects read are those
//! read one at a time (through the decoded index), and a damaged index gives the decoded
//! read's error, which names the fault.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use zv_core::data_type::DataType;
use zv_core::key::StoreKey;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{CodecChoice, FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;
use zv_testkit::data::Rng;
use zv_testkit::store::CountingStore;

/// A point cloud of 3000 points in `[0, 40)^3`, chunks of 10 (64 chunks), 60 objects, one
/// attribute; `geometry` graph adds a few links.
fn store(geometry: Geometry) -> Arc<dyn Store> {
    store_in(geometry, FormatVersion::V0_7, 1)
}

/// [`store`] in layout `version`, object `k` having id `k * id_step`.
fn store_in(geometry: Geometry, version: FormatVersion, id_step: u64) -> Arc<dyn Store> {
    let mut rng = Rng::new(5);
    let n = 3000;
    let coords: Vec<f64> = (0..n * 3)
        .map(|_| (rng.unit() * 400.0).floor() / 10.0)
        .collect();
    let ids: Vec<u64> = (0..n)
        .map(|_| (rng.unit() * 60.0) as u64 * id_step)
        .collect();
    let w: Vec<f64> = (0..n).map(|_| rng.unit() as f32 as f64).collect();
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "w".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows: AttributeRows::from_f64s(DataType::Float32, 1, &w).unwrap(),
                present: None,
            },
            channel_names: None,
        },
    );
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(geometry.clone(), vec![10.0; 3]).with_format_version(version);
    // uncompressed, so that the test can damage the index's bytes
    opts.codecs = CodecChoice::parse("none").unwrap();
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    w.add_vertices_flat(&coords, Some(&ids), &attrs).unwrap();
    if geometry == Geometry::Graph {
        // each vertex linked to the next of the same object
        let mut last: BTreeMap<u64, u64> = BTreeMap::new();
        let mut edges = Vec::new();
        for (v, &o) in ids.iter().enumerate() {
            if let Some(prev) = last.insert(o, v as u64) {
                edges.push([prev, v as u64]);
            }
        }
        w.add_edges(&edges, &BTreeMap::new()).unwrap();
    }
    w.finish().unwrap();
    store
}

fn all(store: &Arc<dyn Store>) -> Result<Vec<zv_format::reader::Object>, String> {
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    let ids: Vec<u64> = (0..level.num_objects().unwrap().unwrap()).collect();
    level.objects(&ids).map_err(|e| e.to_string())
}

fn one_by_one(store: &Arc<dyn Store>) -> Result<Vec<zv_format::reader::Object>, String> {
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    (0..level.num_objects().unwrap().unwrap())
        .map(|id| level.object(id).map_err(|e| e.to_string()))
        .collect()
}

#[test]
fn many_objects_are_those_read_one_at_a_time() {
    for geometry in [Geometry::PointCloud, Geometry::Graph] {
        let s = store(geometry.clone());
        let many = all(&s).unwrap();
        assert_eq!(many.len(), 60);
        assert_eq!(many.iter().map(|o| o.vertices.len()).sum::<usize>(), 3000);
        assert_eq!(many, one_by_one(&s).unwrap(), "{geometry:?}");
        // the index's stream is read once: decoded where used, not read again to be decoded
        let counting = Arc::new(CountingStore::new(s.clone()));
        let counted: Arc<dyn Store> = counting.clone();
        assert_eq!(all(&counted).unwrap(), many);
        let data = counting
            .reads()
            .iter()
            .filter(|k| k.as_str() == "0/object_index/data/c/0")
            .count();
        assert_eq!(data, 1, "{geometry:?}: {:?}", counting.reads());
        // a subset of more than half the objects reads every chunk too
        let level = ZvStore::open(s.clone()).unwrap().level(0).unwrap();
        let ids: Vec<u64> = (0..60).rev().filter(|i| i % 5 != 0).collect();
        let got = level.objects(&ids).unwrap();
        for (o, &id) in got.iter().zip(&ids) {
            assert_eq!(*o, many[id as usize]);
        }
    }
}

/// The object index's stream and offsets.
fn index(store: &Arc<dyn Store>) -> (StoreKey, Vec<u8>, StoreKey, Vec<u8>) {
    let data = StoreKey::new("0/object_index/data/c/0").unwrap();
    let offsets = StoreKey::new("0/object_index/offsets/c/0").unwrap();
    let d = store
        .get(&data)
        .unwrap()
        .expect("uncompressed data")
        .to_vec();
    let o = store.get(&offsets).unwrap().expect("offsets").to_vec();
    (data, d, offsets, o)
}

fn offset(o: &[u8], i: usize) -> usize {
    i64::from_le_bytes(o[i * 8..i * 8 + 8].try_into().unwrap()) as usize
}

/// A damage done to the index's stream and offsets.
type Damage = dyn Fn(&mut Vec<u8>, &mut Vec<u8>);

#[test]
fn a_damaged_index_gives_the_decoded_reads_error() {
    let damages: Vec<(&str, Box<Damage>)> = vec![
        (
            "a fragment past its chunk's count",
            Box::new(|d, o| {
                // object 7's first block: mode 0 after its count and chunk coordinates
                let at = offset(o, 7) + 4 + 24;
                assert_eq!(d[at], 0, "a mode-0 block");
                d[at + 1..at + 9].copy_from_slice(&5000i64.to_le_bytes());
            }),
        ),
        (
            "a chunk the level does not have",
            Box::new(|d, o| {
                let at = offset(o, 12) + 4;
                d[at..at + 8].copy_from_slice(&77i64.to_le_bytes());
            }),
        ),
        (
            "an unknown block mode",
            Box::new(|d, o| {
                let at = offset(o, 3) + 4 + 24;
                d[at] = 9;
            }),
        ),
        (
            "offsets out of order",
            Box::new(|_, o| {
                let a = offset(o, 20);
                o[21 * 8..22 * 8].copy_from_slice(&(a as i64 - 1).to_le_bytes());
            }),
        ),
        (
            "a manifest that does not fill its bytes",
            Box::new(|d, o| {
                // object 30 claims one block fewer
                let at = offset(o, 30);
                let n = u32::from_le_bytes(d[at..at + 4].try_into().unwrap());
                d[at..at + 4].copy_from_slice(&(n - 1).to_le_bytes());
            }),
        ),
    ];
    for (name, damage) in damages {
        let s = store(Geometry::PointCloud);
        let (dk, mut d, ok, mut o) = index(&s);
        damage(&mut d, &mut o);
        s.set(&dk, Bytes::from(d)).unwrap();
        s.set(&ok, Bytes::from(o)).unwrap();
        let many = all(&s).expect_err(name);
        // the read through the decoded index (decoded first, so that the read uses it)
        // names the fault
        let level = ZvStore::open(s.clone()).unwrap().level(0).unwrap();
        let decoded = level.shared_object_index().err().map(|e| e.to_string());
        let ids: Vec<u64> = (0..60).collect();
        let want = level.objects(&ids).expect_err(name).to_string();
        assert_eq!(many, want, "{name}");
        if let Some(d) = decoded {
            assert_eq!(many, d, "{name}");
        }
        assert!(many.contains("object_index"), "{name}: {many}");
    }
}

/// The objects of every id up to the level's count (ids without an object read empty).
fn all_ids(store: &Arc<dyn Store>) -> Result<Vec<zv_format::reader::Object>, String> {
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    let ids: Vec<u64> = (0..level.num_objects().unwrap().unwrap()).collect();
    level.objects(&ids).map_err(|e| e.to_string())
}

#[test]
fn many_objects_of_a_zv09_level_are_those_read_one_at_a_time() {
    for (geometry, step) in [
        (Geometry::PointCloud, 1),
        (Geometry::PointCloud, 3),
        (Geometry::Graph, 2),
    ] {
        let s = store_in(geometry.clone(), FormatVersion::V0_9, step);
        let many = all_ids(&s).unwrap();
        assert_eq!(many.len() as u64, 59 * step + 1, "{geometry:?} {step}");
        assert_eq!(many.iter().map(|o| o.vertices.len()).sum::<usize>(), 3000);
        assert_eq!(many, one_by_one(&s).unwrap(), "{geometry:?} {step}");
        assert!(many
            .iter()
            .filter(|o| o.id % step != 0)
            .all(|o| o.vertices.is_empty()));
        // the manifests are read once and decoded where used: the level has not decoded its
        // index (asking for it reads them a second time)
        let counting = Arc::new(CountingStore::new(s.clone()));
        let counted: Arc<dyn Store> = counting.clone();
        let level = ZvStore::open(counted).unwrap().level(0).unwrap();
        let ids: Vec<u64> = (0..many.len() as u64).collect();
        assert_eq!(level.objects(&ids).unwrap(), many);
        let manifests = || {
            counting
                .reads()
                .iter()
                .filter(|k| k.as_str() == "0/object_index/manifests/c/0")
                .count()
        };
        assert_eq!(manifests(), 1, "{geometry:?}: {:?}", counting.reads());
        level.shared_object_index().unwrap();
        assert_eq!(manifests(), 2, "{geometry:?}: the index was decoded");
    }
}

/// The stored `manifests` chunk of a 0.9 level (uncompressed vlen-bytes framing) with item
/// `item`'s bytes changed by `damage`.
fn damage_item(bytes: &[u8], item: usize, damage: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let count = u32_at(0);
    let mut out = bytes[..4].to_vec();
    let mut at = 4;
    for i in 0..count {
        let len = u32_at(at);
        let mut body = bytes[at + 4..at + 4 + len].to_vec();
        if i == item {
            damage(&mut body);
        }
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        at += 4 + len;
    }
    assert_eq!(at, bytes.len());
    out
}

#[test]
fn a_damaged_zv09_index_gives_the_decoded_reads_error() {
    let manifests = StoreKey::new("0/object_index/manifests/c/0").unwrap();
    let object_ids = StoreKey::new("0/object_index/object_ids/c/0").unwrap();
    type Change = Box<dyn Fn(&Arc<dyn Store>)>;
    let item = |item: usize, damage: fn(&mut Vec<u8>)| -> Change {
        let key = manifests.clone();
        Box::new(move |s: &Arc<dyn Store>| {
            let bytes = s.get(&key).unwrap().expect("manifests").to_vec();
            s.set(&key, Bytes::from(damage_item(&bytes, item, damage)))
                .unwrap();
        })
    };
    let damages: Vec<(&str, Change)> = vec![
        (
            "an unknown block mode",
            item(3, |b| b[4 + 24] = 9), // after the block count and the chunk coordinates
        ),
        (
            "a chunk the level does not have",
            item(12, |b| b[4..12].copy_from_slice(&77i64.to_le_bytes())),
        ),
        (
            "a manifest that does not fill its bytes",
            item(30, |b| b.push(0)),
        ),
        (
            "an id stored twice",
            Box::new(move |s: &Arc<dyn Store>| {
                let mut ids = s.get(&object_ids).unwrap().expect("ids").to_vec();
                let first = ids[..8].to_vec();
                ids[8..16].copy_from_slice(&first);
                s.set(&object_ids, Bytes::from(ids)).unwrap();
            }),
        ),
    ];
    for (name, damage) in damages {
        let s = store_in(Geometry::PointCloud, FormatVersion::V0_9, 3);
        damage(&s);
        // ids 0..=177: the largest is 59 * 3 (the count of a 0.9 index needs its manifests)
        let ids: Vec<u64> = (0..178).collect();
        let level = ZvStore::open(s.clone()).unwrap().level(0).unwrap();
        let many = level.objects(&ids).map(|_| ()).expect_err(name).to_string();
        // the read through the decoded index names the fault
        let level = ZvStore::open(s.clone()).unwrap().level(0).unwrap();
        let decoded = level.shared_object_index().err().map(|e| e.to_string());
        let want = level.objects(&ids).expect_err(name).to_string();
        assert_eq!(many, want, "{name}");
        if let Some(d) = decoded {
            assert_eq!(many, d, "{name}");
        }
        assert!(many.contains("object_index"), "{name}: {many}");
    }
}
