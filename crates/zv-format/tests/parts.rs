//! Distributed writes (`zv_format::parts`): N parts and a commit give the store one writer
//! gives from the same rows, byte for byte, whatever N and the order the parts finish in; a
//! part that died, a missing part, a chunk claimed twice, a receipt of another run, a client
//! killed before the commit and a second commit are each handled as the protocol says.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use zv_core::data_type::DataType;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::parts::{self, CommitInputs, PartWriter};
use zv_format::writer::{FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A batch of points: coordinates, object ids, attributes.
struct Batch {
    coords: Vec<f64>,
    ids: Option<Vec<u64>>,
    attributes: BTreeMap<String, Attribute>,
}

/// `batches` batches of `n` points in `[0, 60)^3`, with object ids below `objects` (or none)
/// and two numeric attributes.
fn inputs(seed: u64, batches: usize, n: usize, objects: Option<u64>) -> Vec<Batch> {
    let mut rng = Rng(seed | 1);
    (0..batches)
        .map(|_| {
            let coords: Vec<f64> = (0..n * 3)
                .map(|_| (rng.unit() * 600.0).floor() / 10.0)
                .collect();
            let ids = objects.map(|o| (0..n).map(|_| (rng.unit() * o as f64) as u64).collect());
            let intensity: Vec<f64> = (0..n).map(|_| rng.unit() as f32 as f64).collect();
            let rgb: Vec<f64> = (0..n * 2).map(|_| (rng.unit() * 1000.0).floor()).collect();
            let mut attributes = BTreeMap::new();
            attributes.insert(
                "intensity".to_owned(),
                numeric(AttributeRows::from_f64s(DataType::Float32, 1, &intensity).unwrap()),
            );
            attributes.insert(
                "rg".to_owned(),
                numeric(AttributeRows::from_f64s(DataType::UInt16, 2, &rgb).unwrap()),
            );
            Batch {
                coords,
                ids,
                attributes,
            }
        })
        .collect()
}

fn numeric(rows: AttributeRows) -> Attribute {
    Attribute {
        values: AttributeValues::Numeric {
            rows,
            present: None,
        },
        channel_names: None,
    }
}

fn options(bins: bool) -> WriterOptions {
    let mut o = WriterOptions::new(Geometry::PointCloud, vec![10.0, 10.0, 20.0]);
    if bins {
        o.bin_shape = Some(vec![5.0, 5.0, 10.0]);
    }
    o.codecs = zv_format::writer::CodecChoice::parse("zstd:1").unwrap();
    o
}

/// The layouts the parts are checked in: ZV 0.7, ZV 0.9, ZV 0.9 in shards of 2 x 2 x 2.
const LAYOUTS: [(FormatVersion, Option<[u64; 3]>); 3] = [
    (FormatVersion::V0_7, None),
    (FormatVersion::V0_9, None),
    (FormatVersion::V0_9, Some([2, 2, 2])),
];

/// [`options`] in layout `l` of [`LAYOUTS`].
fn options_in(bins: bool, l: usize) -> WriterOptions {
    let mut o = options(bins);
    let (version, shard) = LAYOUTS[l % LAYOUTS.len()];
    o.format_version = version;
    o.shard_shape = shard.map(|s| s.to_vec());
    o
}

/// The object attributes and groups the commit (and the single writer) gets.
fn commit_inputs(objects: Option<u64>) -> CommitInputs {
    let Some(n) = objects else {
        return CommitInputs::default();
    };
    let weight: Vec<f64> = (0..n + 3).map(|o| o as f64 * 0.5).collect();
    let mut object_attributes = BTreeMap::new();
    object_attributes.insert(
        "weight".to_owned(),
        numeric(AttributeRows::from_f64s(DataType::Float64, 1, &weight).unwrap()),
    );
    let mut groups = BTreeMap::new();
    groups.insert(0, (0..n).step_by(2).collect());
    groups.insert(2, vec![1]);
    CommitInputs {
        object_attributes,
        groups,
        group_attributes: BTreeMap::new(),
        num_objects: n + 3,
    }
}

/// Every key of `store` with its bytes.
fn contents(store: &Arc<dyn Store>) -> BTreeMap<String, Vec<u8>> {
    store
        .list_prefix(&StorePrefix::root())
        .unwrap()
        .into_iter()
        .map(|k| (k.to_string(), store.get(&k).unwrap().unwrap().to_vec()))
        .collect()
}

/// The store one writer makes of `batches`.
fn single(batches: &[Batch], opts: &WriterOptions, extra: CommitInputs) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut w = ZvWriter::create(store.clone(), opts.clone()).unwrap();
    for b in batches {
        w.add_vertices_flat(&b.coords, b.ids.as_deref(), &b.attributes)
            .unwrap();
    }
    w.set_object_attributes(extra.object_attributes);
    w.set_groups(extra.groups, extra.group_attributes);
    w.set_num_objects(extra.num_objects);
    w.finish().unwrap();
    store
}

/// Runs part `part` over every batch (each part reads the whole input and keeps its rows).
fn run_part(store: &Arc<dyn Store>, part: u32, batches: &[Batch]) -> parts::PartReceipt {
    let mut w = PartWriter::open(store.clone(), part).unwrap();
    for b in batches {
        w.add_owned_vertices_flat(&b.coords, b.ids.as_deref(), &b.attributes)
            .unwrap();
    }
    w.finish().unwrap()
}

/// Prepares `n` parts, runs them in `order`, and commits.
fn distributed(
    batches: &[Batch],
    opts: &WriterOptions,
    n: u32,
    order: &[u32],
    extra: CommitInputs,
) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), opts, n).unwrap();
    for &p in order {
        run_part(&store, p, batches);
    }
    parts::commit(store.clone(), extra).unwrap();
    store
}

#[test]
fn parts_write_the_single_writers_store_byte_for_byte() {
    for (objects, bins) in [
        (Some(40), false),
        (None, false),
        (None, true),
        (Some(3), true),
    ] {
        for layout in 0..LAYOUTS.len() {
            let batches = inputs(7, 3, 700, objects);
            let opts = options_in(bins, layout);
            let want = contents(&single(&batches, &opts, commit_inputs(objects)));
            assert!(want.len() > 10, "{} keys", want.len());
            for (n, order) in [
                (1, vec![0]),
                (2, vec![1, 0]),
                (3, vec![2, 0, 1]),
                (7, vec![6, 3, 0, 5, 1, 4, 2]),
            ] {
                let got = contents(&distributed(
                    &batches,
                    &opts,
                    n,
                    &order,
                    commit_inputs(objects),
                ));
                assert!(
                    !got.keys().any(|k| k.starts_with(parts::PARTS_DIR)),
                    "the commit removes {}",
                    parts::PARTS_DIR
                );
                assert_eq!(
                    got.keys().collect::<Vec<_>>(),
                    want.keys().collect::<Vec<_>>(),
                    "{n} parts, objects {objects:?}, bins {bins}"
                );
                for (k, v) in &want {
                    assert!(
                        got[k] == *v,
                        "{k} differs ({n} parts, objects {objects:?}, layout {layout})"
                    );
                }
            }
        }
    }
}

#[test]
fn every_chunk_goes_to_one_part_and_parts_spread() {
    let mut count = [0u32; 4];
    for i in -20..20 {
        for j in -5..5 {
            let p = parts::part_of(&[i, j, 3], 4);
            assert!(p < 4);
            assert_eq!(p, parts::part_of(&[i, j, 3], 4));
            count[p as usize] += 1;
        }
    }
    // 400 chunks over 4 parts: none gets fewer than half its share
    assert!(count.iter().all(|&c| c >= 50), "{count:?}");
    // the documented function, recomputed here: routers in other languages compute it too
    let documented = |coords: &[i64], parts: u32| {
        let mut h: u64 = 0x9E37_79B9_7F4A_7C15;
        for &c in coords {
            let mut z = (h ^ c as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            h = z ^ (z >> 31);
        }
        (h % u64::from(parts)) as u32
    };
    for k in [
        [0i64, 0, 0],
        [1, 0, 0],
        [-1, 2, 5],
        [7, -7, 7],
        [i64::MIN, 0, i64::MAX],
    ] {
        for parts in [1, 2, 3, 16, 1000, u32::MAX] {
            assert_eq!(
                parts::part_of(&k, parts),
                documented(&k, parts),
                "{k:?} {parts}"
            );
        }
    }
}

#[test]
fn a_vertex_in_another_parts_chunk_is_refused_whole() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), &options(false), 3).unwrap();
    let mut w = PartWriter::open(store.clone(), 1).unwrap();
    let batch = inputs(3, 1, 200, Some(5)).remove(0);
    let e = w
        .add_vertices_flat(&batch.coords, batch.ids.as_deref(), &batch.attributes)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("which part") && e.contains("not this part (1)"),
        "{e}"
    );
    // the refused batch changed nothing: the owned rows still go in, and the part finishes
    let kept = w
        .add_owned_vertices_flat(&batch.coords, batch.ids.as_deref(), &batch.attributes)
        .unwrap();
    assert!(kept > 0 && kept < 200, "{kept}");
    // the owners a router computes are the rows the part keeps
    let owners = w.owners(&batch.coords);
    assert_eq!(owners.len(), 200);
    assert_eq!(owners.iter().filter(|&&o| o == 1).count() as u64, kept);
    assert!(owners.iter().all(|&o| o < 3));
    // routed by those owners, part 2's rows pass the strict call
    let mut w2 = PartWriter::open(store.clone(), 2).unwrap();
    let mine: Vec<f64> = batch
        .coords
        .chunks(3)
        .zip(&owners)
        .filter(|(_, &o)| o == 2)
        .flat_map(|(p, _)| p.to_vec())
        .collect();
    assert!(!mine.is_empty());
    w2.add_vertices_flat(&mine, None, &BTreeMap::new()).unwrap();
    assert_eq!(w.finish().unwrap().vertices, kept);
    assert!(PartWriter::open(store.clone(), 3).is_err(), "part 3 of 3");
}

#[test]
fn missing_parts_and_a_dead_part_block_the_commit_until_rerun() {
    let batches = inputs(11, 2, 500, Some(20));
    let opts = options(false);
    let want = contents(&single(&batches, &opts, CommitInputs::default()));
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), &opts, 3).unwrap();
    run_part(&store, 0, &batches);
    run_part(&store, 2, &batches);
    assert_eq!(parts::missing_parts(store.as_ref()).unwrap(), vec![1]);
    let e = parts::commit(store.clone(), CommitInputs::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("1 of 3 parts") && e.ends_with(": 1"), "{e}");
    // part 1 dies after writing its chunks, before its receipt: still missing
    let receipt = run_part(&store, 1, &batches);
    store
        .delete(&StoreKey::new(".zv-parts/part-1.json").unwrap())
        .unwrap();
    assert!(parts::commit(store.clone(), CommitInputs::default()).is_err());
    assert!(ZvStore::open(store.clone()).is_err(), "nothing committed");
    // the retried part rewrites the same chunks and the same receipt
    assert_eq!(run_part(&store, 1, &batches), receipt);
    parts::commit(store.clone(), CommitInputs::default()).unwrap();
    assert_eq!(contents(&store), want);
}

#[test]
fn a_client_killed_before_the_commit_leaves_no_store_and_a_rerun_completes_it() {
    let batches = inputs(5, 1, 400, Some(9));
    let opts = options(false);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let plan = parts::prepare(store.clone(), &opts, 2).unwrap();
    run_part(&store, 0, &batches);
    run_part(&store, 1, &batches);
    // the client is gone: the store does not open
    assert!(ZvStore::open(store.clone()).is_err());
    // a new client prepares the same write: the same plan, the receipts are kept
    let again = parts::prepare(store.clone(), &opts, 2).unwrap();
    assert_eq!(again.run, plan.run);
    assert!(parts::missing_parts(store.as_ref()).unwrap().is_empty());
    let summary = parts::commit(store.clone(), CommitInputs::default()).unwrap();
    assert_eq!(summary.vertices, 400);
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    assert_eq!(level.num_objects().unwrap(), Some(9));
    // a second commit finds the store committed
    let e = parts::commit(store.clone(), CommitInputs::default());
    assert!(e.is_err(), "no plan left to commit");
}

#[test]
fn a_lost_0_9_cell_stops_the_commit_and_a_rerun_part_completes_it() {
    for layout in [1, 2] {
        let batches = inputs(13, 2, 300, Some(6));
        let opts = options_in(false, layout);
        let want = contents(&single(&batches, &opts, CommitInputs::default()));
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        parts::prepare(store.clone(), &opts, 2).unwrap();
        run_part(&store, 0, &batches);
        let receipt = run_part(&store, 1, &batches);
        // the parts staged their cells, and placed none in a grid
        let staged: Vec<String> = contents(&store)
            .into_keys()
            .filter(|k| k.starts_with(parts::CELLS_DIR))
            .collect();
        assert!(!staged.is_empty());
        assert!(!contents(&store).keys().any(|k| k.starts_with("0/")));
        // one of part 1's vertex cells is lost
        let lost = format!(
            "{}/0/vertices/{}",
            parts::CELLS_DIR,
            zv_format::metadata::ChunkKey(receipt.chunks[0].key.clone())
        );
        assert!(staged.contains(&lost), "{lost} not staged");
        store
            .delete(&StoreKey::new(lost.as_str()).unwrap())
            .unwrap();
        let e = parts::commit(store.clone(), CommitInputs::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&lost), "{e}");
        assert!(ZvStore::open(store.clone()).is_err(), "nothing committed");
        // part 1 runs again: the commit completes with the single writer's store
        run_part(&store, 1, &batches);
        parts::commit(store.clone(), CommitInputs::default()).unwrap();
        assert_eq!(contents(&store), want, "layout {layout}");
    }
}

#[test]
fn another_write_staged_here_is_refused() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), &options(false), 2).unwrap();
    for (opts, n) in [(options(true), 2), (options(false), 3)] {
        let e = parts::prepare(store.clone(), &opts, n)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("another distributed write is staged here"),
            "{e}"
        );
    }
    assert!(parts::prepare(store.clone(), &options(false), 0).is_err());
    let mut mesh = options(false);
    mesh.geometry = Geometry::Mesh;
    let fresh: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let e = parts::prepare(fresh, &mesh, 2).unwrap_err().to_string();
    assert!(e.contains("point clouds"), "{e}");
}

#[test]
fn receipts_that_do_not_fit_the_plan_are_refused() {
    let batches = inputs(13, 1, 300, Some(4));
    let opts = options(false);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), &opts, 2).unwrap();
    let r0 = run_part(&store, 0, &batches);
    run_part(&store, 1, &batches);
    let put = |r: &parts::PartReceipt| {
        store
            .set(
                &StoreKey::new(".zv-parts/part-1.json").unwrap(),
                Bytes::from(r.to_json().unwrap()),
            )
            .unwrap()
    };
    // part 0's chunks again, as part 1: claimed twice
    let mut twice = r0.clone();
    twice.part = 1;
    put(&twice);
    let e = parts::commit(store.clone(), CommitInputs::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("claimed by parts 0 and 1"), "{e}");
    // a receipt of another run
    let mut other = twice.clone();
    other.run = "another".into();
    other.chunks.clear();
    other.vertices = 0;
    put(&other);
    let e = parts::commit(store.clone(), CommitInputs::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("part-1.json") && e.contains("another write"),
        "{e}"
    );
    // rows that do not add up, and bytes that are no receipt
    let mut short = twice.clone();
    short.vertices += 1;
    put(&short);
    assert!(parts::commit(store.clone(), CommitInputs::default()).is_err());
    store
        .set(
            &StoreKey::new(".zv-parts/part-1.json").unwrap(),
            Bytes::from_static(b"{\"run\": 3"),
        )
        .unwrap();
    let e = parts::commit(store.clone(), CommitInputs::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("part-1.json") && e.contains("not a part receipt"),
        "{e}"
    );
    assert!(ZvStore::open(store.clone()).is_err(), "nothing committed");
}

#[test]
fn categorical_vertex_attributes_are_refused_in_parts() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), &options(false), 1).unwrap();
    let mut w = PartWriter::open(store.clone(), 0).unwrap();
    let mut attributes = BTreeMap::new();
    attributes.insert(
        "kind".to_owned(),
        Attribute {
            values: AttributeValues::Categorical(vec![Some("a".into()), None]),
            channel_names: None,
        },
    );
    w.add_vertices_flat(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0], None, &attributes)
        .unwrap();
    let e = w.finish().unwrap_err().to_string();
    assert!(e.contains("categorical") && e.contains("kind"), "{e}");
    assert!(parts::read_receipt(store.as_ref(), 0).unwrap().is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random points, random part counts and finishing orders: the single writer's store.
    #[test]
    fn any_split_gives_the_same_store(
        seed in 1u64..10_000,
        n in 1usize..300,
        batches in 1usize..4,
        parts_n in 1u32..6,
        objects in prop::option::of(1u64..30),
        bins in any::<bool>(),
        rotate in 0usize..6,
        layout in 0usize..3,
    ) {
        let input = inputs(seed, batches, n, objects);
        let opts = options_in(bins, layout);
        let want = contents(&single(&input, &opts, commit_inputs(objects)));
        let mut order: Vec<u32> = (0..parts_n).collect();
        order.rotate_left(rotate % parts_n as usize);
        order.reverse();
        let got = contents(&distributed(&input, &opts, parts_n, &order, commit_inputs(objects)));
        prop_assert!(got == want);
    }
}
