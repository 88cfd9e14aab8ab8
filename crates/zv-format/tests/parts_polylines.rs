//! Distributed writes of polylines and streamlines (`zv_format::parts`): each part is given
//! whole polylines and keeps the pieces in its chunks; the commit joins the pieces and makes
//! the cross-chunk records. The store is byte for byte the single writer's, whether every
//! part reads the whole input (ids implicit) or a router sends each part only the polylines
//! touching it (ids given), whatever the number of parts and the finishing order; a polyline
//! withheld from a part that owns one of its chunks stops the commit, naming it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use zv_core::data_type::DataType;
use zv_core::key::StorePrefix;
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

/// A batch of polylines: flat coordinates, offsets, one vertex attribute.
#[derive(Debug, Clone)]
struct Batch {
    coords: Vec<f64>,
    offsets: Vec<usize>,
    fa: Vec<f64>,
}

impl Batch {
    fn attributes(&self) -> BTreeMap<String, Attribute> {
        let mut a = BTreeMap::new();
        a.insert(
            "fa".to_owned(),
            numeric(AttributeRows::from_f64s(DataType::Float32, 1, &self.fa).unwrap()),
        );
        a
    }

    fn polylines(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Polylines `which` (indices into this batch), with their vertices and attribute rows.
    fn select(&self, which: &[usize]) -> Batch {
        let mut out = Batch {
            coords: Vec::new(),
            offsets: vec![0],
            fa: Vec::new(),
        };
        for &pi in which {
            let (a, b) = (self.offsets[pi], self.offsets[pi + 1]);
            out.coords.extend_from_slice(&self.coords[a * 3..b * 3]);
            out.fa.extend_from_slice(&self.fa[a..b]);
            out.offsets.push(out.offsets.last().unwrap() + (b - a));
        }
        out
    }
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

/// `batches` batches of `n` random walks (steps up to `step` per axis, from anywhere in
/// `[0, 60)^3`, some of them empty when `empty`), crossing chunks and coming back.
fn inputs(seed: u64, batches: usize, n: usize, step: f64, empty: bool) -> Vec<Batch> {
    let mut rng = Rng(seed | 1);
    (0..batches)
        .map(|_| {
            let mut b = Batch {
                coords: Vec::new(),
                offsets: vec![0],
                fa: Vec::new(),
            };
            for _ in 0..n {
                let len = if empty && rng.unit() < 0.1 {
                    0
                } else {
                    2 + (rng.unit() * 30.0) as usize
                };
                let mut p: Vec<f64> = (0..3).map(|_| rng.unit() * 60.0).collect();
                for _ in 0..len {
                    for x in p.iter_mut() {
                        *x = (*x + (rng.unit() - 0.5) * 2.0 * step).clamp(0.0, 59.9);
                        b.coords.push((*x * 16.0).round() / 16.0);
                    }
                    b.fa.push(rng.unit() as f32 as f64);
                }
                b.offsets.push(b.offsets.last().unwrap() + len);
            }
            b
        })
        .collect()
}

fn options(geometry: Geometry, bins: bool) -> WriterOptions {
    let mut o = WriterOptions::new(geometry, vec![10.0, 10.0, 20.0]);
    if bins {
        o.bin_shape = Some(vec![5.0, 5.0, 10.0]);
    }
    o.codecs = zv_format::writer::CodecChoice::parse("zstd:1").unwrap();
    o
}

/// [`options`] in layout `l`: ZV 0.7, ZV 0.9, ZV 0.9 in shards of 2 x 2 x 2.
fn options_in(geometry: Geometry, bins: bool, l: usize) -> WriterOptions {
    let mut o = options(geometry, bins);
    if l % 3 > 0 {
        o.format_version = FormatVersion::V0_9;
    }
    if l % 3 == 2 {
        o.shard_shape = Some(vec![2, 2, 2]);
    }
    o
}

/// Object attributes and a group for `polylines` polylines.
fn commit_inputs(polylines: u64) -> CommitInputs {
    let weight: Vec<f64> = (0..polylines).map(|o| o as f64 * 0.25).collect();
    let mut object_attributes = BTreeMap::new();
    object_attributes.insert(
        "weight".to_owned(),
        numeric(AttributeRows::from_f64s(DataType::Float64, 1, &weight).unwrap()),
    );
    let mut groups = BTreeMap::new();
    groups.insert(1, (0..polylines).step_by(3).collect());
    CommitInputs {
        object_attributes,
        groups,
        group_attributes: BTreeMap::new(),
        num_objects: polylines,
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

fn total(batches: &[Batch]) -> u64 {
    batches.iter().map(|b| b.polylines() as u64).sum()
}

/// The store one writer makes of `batches`.
fn single(batches: &[Batch], opts: &WriterOptions) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut w = ZvWriter::create(store.clone(), opts.clone()).unwrap();
    for b in batches {
        w.add_polylines_flat(&b.coords, &b.offsets, &b.attributes())
            .unwrap();
    }
    let extra = commit_inputs(total(batches));
    w.set_object_attributes(extra.object_attributes);
    w.set_groups(extra.groups, extra.group_attributes);
    w.set_num_objects(extra.num_objects);
    w.finish().unwrap();
    store
}

/// How a part gets its polylines.
#[derive(Debug, Clone, Copy)]
enum Routing {
    /// Every part reads the whole input; ids are implicit.
    Whole,
    /// A router sends each part the polylines [`PartWriter::polyline_parts`] gives it, with
    /// their ids; `withhold` `(polyline, part)` drops one polyline from one of its parts.
    Routed { withhold: Option<(u64, u32)> },
}

/// Runs part `part` over `batches`.
fn run_part(store: &Arc<dyn Store>, part: u32, batches: &[Batch], routing: Routing) {
    let mut w = PartWriter::open(store.clone(), part).unwrap();
    let mut first = 0u64;
    for b in batches {
        match routing {
            Routing::Whole => w
                .add_polylines_flat(&b.coords, &b.offsets, None, &b.attributes())
                .unwrap(),
            Routing::Routed { withhold } => {
                let mine: Vec<usize> = w
                    .polyline_parts(&b.coords, &b.offsets)
                    .into_iter()
                    .filter(|&(pi, p)| p == part && withhold != Some((first + pi as u64, p)))
                    .map(|(pi, _)| pi)
                    .collect();
                let ids: Vec<u64> = mine.iter().map(|&pi| first + pi as u64).collect();
                let sel = b.select(&mine);
                w.add_polylines_flat(&sel.coords, &sel.offsets, Some(&ids), &sel.attributes())
                    .unwrap();
            }
        }
        first += b.polylines() as u64;
    }
    w.finish().unwrap();
}

/// Prepares `n` parts, runs them in `order`, and commits.
fn distributed(
    batches: &[Batch],
    opts: &WriterOptions,
    n: u32,
    order: &[u32],
    routing: Routing,
) -> (Arc<dyn Store>, zv_format::error::Result<()>) {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), opts, n).unwrap();
    for &p in order {
        run_part(&store, p, batches, routing);
    }
    let done = parts::commit(store.clone(), commit_inputs(total(batches))).map(|_| ());
    (store, done)
}

fn assert_same(got: &BTreeMap<String, Vec<u8>>, want: &BTreeMap<String, Vec<u8>>, what: &str) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}"
    );
    for (k, v) in want {
        assert!(got[k] == *v, "{k} differs ({what})");
    }
}

#[test]
fn polyline_parts_write_the_single_writers_store_byte_for_byte() {
    for (geometry, bins, step, layout) in [
        (Geometry::Polyline, false, 4.0, 0),
        (Geometry::Streamline, true, 2.5, 0),
        (Geometry::Polyline, true, 9.0, 0),
        (Geometry::Polyline, false, 4.0, 1),
        (Geometry::Streamline, true, 2.5, 2),
    ] {
        let batches = inputs(5, 3, 120, step, geometry == Geometry::Polyline);
        let opts = options_in(geometry.clone(), bins, layout);
        let want = contents(&single(&batches, &opts));
        // the input crosses chunks: the single writer made cross-chunk records
        let reader = ZvStore::open(single(&batches, &opts)).unwrap();
        let records = reader
            .level(0)
            .unwrap()
            .cross_chunk_links(0)
            .unwrap()
            .unwrap()
            .links
            .len();
        assert!(records > 100, "{records} cross-chunk records");
        for routing in [Routing::Whole, Routing::Routed { withhold: None }] {
            for (n, order) in [
                (1, vec![0]),
                (2, vec![1, 0]),
                (3, vec![2, 0, 1]),
                (7, vec![6, 3, 0, 5, 1, 4, 2]),
            ] {
                let (store, done) = distributed(&batches, &opts, n, &order, routing);
                done.unwrap();
                let what =
                    format!("{geometry:?}, bins {bins}, layout {layout}, {n} parts, {routing:?}");
                assert_same(&contents(&store), &want, &what);
            }
        }
    }
}

#[test]
fn a_polyline_withheld_from_a_part_stops_the_commit() {
    let batches = inputs(9, 1, 80, 6.0, false);
    let opts = options(Geometry::Polyline, false);
    // a polyline in at least two parts' chunks
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), &opts, 3).unwrap();
    let w = PartWriter::open(store.clone(), 0).unwrap();
    let routes = w.polyline_parts(&batches[0].coords, &batches[0].offsets);
    let spread = (0..batches[0].polylines())
        .find(|&pi| routes.iter().filter(|r| r.0 == pi).count() >= 2)
        .expect("a polyline over two parts");
    let part = routes.iter().rev().find(|r| r.0 == spread).unwrap().1;
    let spread = spread as u64;
    drop(w);
    let (store, done) = distributed(
        &batches,
        &opts,
        3,
        &[0, 1, 2],
        Routing::Routed {
            withhold: Some((spread, part)),
        },
    );
    let e = done.unwrap_err().to_string();
    assert!(
        e.contains(&format!("polyline {spread}: piece")) && e.contains("is in no receipt"),
        "{e}"
    );
    // nothing opens: the commit stopped before the root
    assert!(ZvStore::open(store).is_err());
}

#[test]
fn polyline_ids_must_increase_and_points_are_refused() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    parts::prepare(store.clone(), &options(Geometry::Polyline, false), 2).unwrap();
    let mut w = PartWriter::open(store.clone(), 1).unwrap();
    let b = inputs(3, 1, 4, 3.0, false).remove(0);
    let e = w
        .add_polylines_flat(&b.coords, &b.offsets, Some(&[0, 2, 2, 5]), &b.attributes())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("polyline 2") && e.contains("must increase"),
        "{e}"
    );
    let e = w
        .add_polylines_flat(&b.coords, &b.offsets, Some(&[0, 1]), &b.attributes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 polyline ids for 4 polylines"), "{e}");
    w.add_polylines_flat(&b.coords, &b.offsets, Some(&[3, 4, 8, 9]), &b.attributes())
        .unwrap();
    let e = w
        .add_polylines_flat(
            &b.coords,
            &b.offsets,
            Some(&[9, 10, 11, 12]),
            &b.attributes(),
        )
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("polyline 9") && e.contains("after polyline 9"),
        "{e}"
    );
    assert!(w
        .add_vertices_flat(&[1.0, 1.0, 1.0], None, &BTreeMap::new())
        .is_err());
    // a single writer takes no ids
    let mut single = ZvWriter::create(
        Arc::new(MemoryStore::new()),
        options(Geometry::Polyline, false),
    )
    .unwrap();
    single
        .add_polylines_flat(&b.coords, &b.offsets, &b.attributes())
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn any_parts_and_order_give_the_single_writers_store(
        seed in 1u64..10_000,
        n in 1u32..6,
        rotate in 0usize..6,
        routed in any::<bool>(),
        bins in any::<bool>(),
        layout in 0usize..3,
    ) {
        let batches = inputs(seed, 2, 25, 7.0, true);
        let opts = options_in(Geometry::Polyline, bins, layout);
        let want = contents(&single(&batches, &opts));
        let mut order: Vec<u32> = (0..n).collect();
        order.rotate_left(rotate % n as usize);
        let routing = if routed { Routing::Routed { withhold: None } } else { Routing::Whole };
        let (store, done) = distributed(&batches, &opts, n, &order, routing);
        prop_assert!(done.is_ok(), "{:?}", done);
        let got = contents(&store);
        prop_assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
        for (k, v) in &want {
            prop_assert!(got[k] == *v, "{} differs", k);
        }
    }
}
