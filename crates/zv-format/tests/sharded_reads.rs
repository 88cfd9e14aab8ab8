//! Reading a sharded ZV 0.9 level: a whole-level read reads each shard once, with no probe
//! of keys that are not stored; a box reads only its cells of the shards it touches.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use zv_core::metered::MeteredStore;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_testkit::store::CountingStore;

fn coords(n: usize) -> Vec<f64> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    (0..n * 3)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 999.0
        })
        .collect()
}

fn write(shard: Option<Vec<u64>>, c: &[f64], ids: &[u64]) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![100.0; 3]);
    opts.bounds = Some([vec![0.0; 3], vec![1000.0; 3]]);
    opts.shard_shape = shard;
    let xs: Vec<f64> = c.iter().step_by(3).copied().collect();
    let rows = AttributeRows::from_f64s(zv_core::data_type::DataType::Float32, 1, &xs).unwrap();
    let mut attrs = BTreeMap::new();
    attrs.insert(
        "w".to_owned(),
        Attribute {
            values: AttributeValues::Numeric {
                rows,
                present: None,
            },
            channel_names: None,
        },
    );
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    w.add_vertices_flat(c, Some(ids), &attrs).unwrap();
    w.finish().unwrap();
    store
}

/// Checks the reads since the last reset: only stored keys (no probe of a per-chunk node
/// `<array>/<chunk>/zarr.json`, which a grid array never has), and every shard read once.
fn check_reads(what: &str, counting: &CountingStore, stored: &[String]) {
    let mut times: HashMap<String, usize> = HashMap::new();
    for k in counting.reads() {
        *times.entry(k).or_default() += 1;
    }
    for (key, n) in &times {
        assert!(
            stored.contains(key),
            "{what}: read {key}, which is not stored"
        );
        if key.contains("/c/") {
            assert_eq!(*n, 1, "{what}: shard {key} read {n} times");
        }
    }
    let shards = times.keys().filter(|k| k.contains("/c/")).count();
    assert!(shards >= 8, "{what}: {shards} shards read");
}

#[test]
fn a_sharded_level_is_read_one_request_per_shard_with_the_unsharded_content() {
    zv_format::link_plugins();
    let n = 100_000;
    let c = coords(n);
    let ids: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % 100).collect();
    let plain = ZvStore::open(write(None, &c, &ids))
        .unwrap()
        .level(0)
        .unwrap();
    let inner = write(Some(vec![5, 5, 5]), &c, &ids);
    let stored: Vec<String> = inner
        .list_prefix(&zv_core::key::StorePrefix::root())
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    let counting = Arc::new(CountingStore::new(inner));
    let zv = ZvStore::open(counting.clone() as Arc<dyn Store>).unwrap();

    let want = plain.points(&["w"]).unwrap();
    // on pools of many threads asking for the cells of one shard at once (an object store's
    // pool is 32): each shard still read once, and nothing waits forever
    for threads in [1, 4, 32] {
        // a store opened afresh: nothing of it read yet
        let zv = ZvStore::open(counting.clone() as Arc<dyn Store>).unwrap();
        counting.reset();
        let level = zv.level(0).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let points = pool.install(|| level.points(&["w"]).unwrap());
        check_reads(&format!("points, {threads} threads"), &counting, &stored);
        assert_eq!(points.positions.len(), n);
        assert_eq!(points.positions, want.positions);
        assert_eq!(points.vertex_attributes, want.vertex_attributes);
        assert_eq!(points.rows, want.rows);
    }

    counting.reset();
    let level = zv.level(0).unwrap();
    let all: Vec<u64> = (0..100).collect();
    let objects = level.objects(&all).unwrap();
    check_reads("objects", &counting, &stored);
    let want = plain.objects(&all).unwrap();
    assert_eq!(objects.len(), 100);
    for (a, b) in objects.iter().zip(&want) {
        assert_eq!(a.vertices, b.vertices);
    }
    assert_eq!(objects.iter().map(|o| o.vertices.len()).sum::<usize>(), n);
}

/// The bytes and reads a box query costs on `store` (the level opened beforehand), with its
/// hits (through `query_box_with` and `point_columns`).
fn box_cost(
    store: Arc<dyn Store>,
    lo: &[f64],
    hi: &[f64],
) -> (zv_core::metered::Meter, Vec<f64>, Vec<u8>, Vec<i64>) {
    let metered = Arc::new(MeteredStore::new(store));
    let level = ZvStore::open(metered.clone() as Arc<dyn Store>)
        .unwrap()
        .level(0)
        .unwrap();
    // the documents are read once per level; the box's cost is its cells
    level.point_columns(Some((lo, hi)), &["w"], true).unwrap();
    let level = ZvStore::open(metered.clone() as Arc<dyn Store>)
        .unwrap()
        .level(0)
        .unwrap();
    metered.reset();
    let hits = level.query_box_with(lo, hi, &["w"]).unwrap();
    let m = metered.meter();
    let columns = level.point_columns(Some((lo, hi)), &["w"], true).unwrap();
    let positions: Vec<f64> = (0..hits.positions.len())
        .flat_map(|i| hits.positions.row(i).to_vec())
        .collect();
    (m, positions, columns.positions, columns.object_ids.unwrap())
}

#[test]
fn a_box_query_reads_only_its_cells_of_the_shards_it_touches() {
    zv_format::link_plugins();
    let n = 200_000;
    let c = coords(n);
    let ids: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % 100).collect();
    let plain = write(None, &c, &ids);
    let sharded = write(Some(vec![5, 5, 5]), &c, &ids);
    // a box of 2 x 2 x 2 chunks in the middle of the grid: it touches all 8 shards
    let (lo, hi) = ([420.0; 3], [580.0; 3]);
    let (pm, p_rows, p_cols, p_ids) = box_cost(plain, &lo, &hi);
    let (sm, s_rows, s_cols, s_ids) = box_cost(sharded.clone(), &lo, &hi);
    let inside = c
        .chunks(3)
        .filter(|p| p.iter().all(|&x| (420.0..=580.0).contains(&x)))
        .count();
    assert_eq!(p_rows.len(), inside * 3);
    assert_eq!(s_rows, p_rows);
    assert_eq!((s_cols, s_ids), (p_cols, p_ids));
    // the whole shards would be every byte of the level; the box reads its 8 cells of each
    // array and each shard's index
    let level_bytes: u64 = sharded
        .list_prefix(&zv_core::key::StorePrefix::root())
        .unwrap()
        .iter()
        .filter(|k| k.as_str().contains("/c/"))
        .map(|k| sharded.get(k).unwrap().map_or(0, |b| b.len() as u64))
        .sum();
    assert!(
        sm.bytes_read * 10 < level_bytes,
        "sharded box read {} of the level's {level_bytes} bytes",
        sm.bytes_read
    );
    assert!(
        sm.bytes_read < pm.bytes_read * 2,
        "sharded box: {sm:?}, unsharded: {pm:?}"
    );
}

/// The last round trip of the reads of keys under `prefix` (0: none), and how many reads.
fn last_round(counting: &CountingStore, prefix: &str) -> (usize, usize) {
    let reads = counting.reads();
    let rounds = counting.rounds();
    let mine: Vec<usize> = reads
        .iter()
        .zip(&rounds)
        .filter(|(k, _)| k.starts_with(prefix))
        .map(|(_, &r)| r)
        .collect();
    (mine.iter().copied().max().unwrap_or(0), mine.len())
}

#[test]
fn on_an_object_store_a_box_reads_its_attribute_cells_with_its_vertex_cells() {
    zv_format::link_plugins();
    for shards in [Some(vec![5, 5, 5]), None] {
        box_round_trips(shards);
    }
}

/// A box query's reads on a store far away, with `shards` or unsharded.
fn box_round_trips(shards: Option<Vec<u64>>) {
    let n = 50_000;
    let c = coords(n);
    let ids: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % 100).collect();
    let (lo, hi) = ([420.0; 3], [580.0; 3]);
    let plain = ZvStore::open(write(None, &c, &ids))
        .unwrap()
        .level(0)
        .unwrap();
    let want = plain.query_box_with(&lo, &hi, &["w"]).unwrap();
    // as an object store answers: each request after 40 ms, 64 wanted in flight
    let inner = write(shards.clone(), &c, &ids);
    let far = Arc::new(CountingStore::with_latency(
        inner.clone(),
        std::time::Duration::from_millis(40),
        64,
    ));
    let zv = ZvStore::open(far.clone() as Arc<dyn Store>).unwrap();
    let level = zv.level(0).unwrap();
    let hits = level.query_box_with(&lo, &hi, &["w"]).unwrap();
    assert!(!want.positions.is_empty());
    assert_eq!(hits.positions, want.positions);
    assert_eq!(hits.vertex_attributes, want.vertex_attributes);
    assert_eq!(hits.rows, want.rows);
    // The attribute's first reads (its shard indices, or its cells unsharded) were made with
    // its document, guessed from the vertices' layout: its cells come in the vertices'
    // cells' round trip, not one after, and nothing is read twice (the same requests for
    // both arrays).
    let (vertices, v_reads) = last_round(&far, "0/vertices/c/");
    let (attribute, a_reads) = last_round(&far, "0/vertex_attributes/w/c/");
    assert!(
        vertices >= 2,
        "{shards:?}: vertex cells in round trip {vertices}"
    );
    assert_eq!(attribute, vertices, "{shards:?}: {:?}", far.reads());
    assert_eq!(a_reads, v_reads, "{shards:?}: {:?}", far.reads());

    // A second box on the same level: every document is known, nothing is guessed, and the
    // reads are still the same for both arrays.
    far.reset();
    let (lo2, hi2) = ([120.0; 3], [230.0; 3]);
    let hits = level.query_box_with(&lo2, &hi2, &["w"]).unwrap();
    let want2 = plain.query_box_with(&lo2, &hi2, &["w"]).unwrap();
    assert_eq!(hits.positions, want2.positions);
    assert_eq!(hits.vertex_attributes, want2.vertex_attributes);
    let (vertices, v_reads) = last_round(&far, "0/vertices/c/");
    let (attribute, a_reads) = last_round(&far, "0/vertex_attributes/w/c/");
    assert_eq!(
        (attribute, a_reads),
        (vertices, v_reads),
        "{:?}",
        far.reads()
    );

    // The same store as a local one (one request in flight): nothing read ahead, the same
    // hits.
    let near = Arc::new(CountingStore::new(inner));
    let hits = ZvStore::open(near.clone() as Arc<dyn Store>)
        .unwrap()
        .level(0)
        .unwrap()
        .query_box_with(&lo, &hi, &["w"])
        .unwrap();
    assert_eq!(hits.positions, want.positions);
    assert_eq!(
        last_round(&near, "0/vertex_attributes/w/c/").1,
        last_round(&near, "0/vertices/c/").1
    );
}
