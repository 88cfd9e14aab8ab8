//! A large batch of vertex rows is placed and kept on every core (`writer/ingest.rs`); the
//! store is the one a single thread writes from small batches of the same rows, byte for
//! byte, and a bad batch is refused with the error of its first bad vertex, changing nothing.
//! Each case runs in a pool of 4 threads, so that the parallel path is taken on any machine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::parts::{self, PartWriter};
use zv_format::writer::{OutOfBounds, WriterOptions, ZvWriter};
use zv_format::Geometry;
use zv_store_mem::MemoryStore;
use zv_testkit::data::Rng;

/// At least the writer's threshold for a parallel batch.
const LARGE: usize = 90_000;
/// Below the threshold: these batches take the one-thread path.
const SMALL: usize = 20_000;

/// Rows of a write: coordinates (`nd` per vertex), object ids, attributes.
struct Rows {
    nd: usize,
    coords: Vec<f64>,
    ids: Option<Vec<u64>>,
    attributes: BTreeMap<String, Attribute>,
}

impl Rows {
    /// `n` points in `[0, 100)^3` (a share `outside` of them in `[100, 110)` on x), with ids
    /// below 300 when `objects`, a float32 and a two-channel uint16 attribute, and a
    /// categorical one when `categorical`.
    fn new(seed: u64, n: usize, objects: bool, outside: f64, categorical: bool) -> Self {
        let mut rng = Rng::new(seed);
        let mut coords = Vec::with_capacity(n * 3);
        for _ in 0..n {
            let out = rng.unit() < outside;
            coords.push(if out {
                100.0 + rng.unit() * 10.0
            } else {
                rng.unit() * 100.0
            });
            coords.push(rng.unit() * 100.0);
            coords.push(rng.unit() * 100.0);
        }
        let ids = objects.then(|| (0..n).map(|_| (rng.unit() * 300.0) as u64).collect());
        let intensity: Vec<f64> = (0..n).map(|_| rng.unit() as f32 as f64).collect();
        let rg: Vec<f64> = (0..n * 2).map(|_| (rng.unit() * 1000.0).floor()).collect();
        let mut attributes = BTreeMap::new();
        attributes.insert(
            "intensity".to_owned(),
            numeric(AttributeRows::from_f64s(DataType::Float32, 1, &intensity).unwrap()),
        );
        attributes.insert(
            "rg".to_owned(),
            numeric(AttributeRows::from_f64s(DataType::UInt16, 2, &rg).unwrap()),
        );
        if categorical {
            let names = ["soma", "axon", "dendrite"];
            let values = (0..n)
                .map(|i| (i % 7 != 0).then(|| names[i % 3].to_owned()))
                .collect();
            attributes.insert(
                "kind".to_owned(),
                Attribute {
                    values: AttributeValues::Categorical(values),
                    channel_names: None,
                },
            );
        }
        Rows {
            nd: 3,
            coords,
            ids,
            attributes,
        }
    }

    /// The rows with `nd` coordinates per vertex: the first `nd` of the three, then more
    /// in `[0, 100)`.
    fn with_axes(mut self, nd: usize, seed: u64) -> Rows {
        let mut rng = Rng::new(seed);
        self.coords = self
            .coords
            .chunks_exact(3)
            .flat_map(|p| {
                let extra: Vec<f64> = (3..nd).map(|_| rng.unit() * 100.0).collect();
                p.iter().copied().take(nd).chain(extra).collect::<Vec<_>>()
            })
            .collect();
        self.nd = nd;
        self
    }

    fn len(&self) -> usize {
        self.coords.len() / self.nd
    }

    /// Rows `a..b`.
    fn slice(&self, a: usize, b: usize) -> Rows {
        let attributes = self
            .attributes
            .iter()
            .map(|(k, v)| {
                let values = match &v.values {
                    AttributeValues::Numeric { rows, .. } => AttributeValues::Numeric {
                        rows: rows.gather(a as u64..b as u64).unwrap(),
                        present: None,
                    },
                    AttributeValues::Categorical(c) => {
                        AttributeValues::Categorical(c[a..b].to_vec())
                    }
                };
                let a = Attribute {
                    values,
                    channel_names: None,
                };
                (k.clone(), a)
            })
            .collect();
        Rows {
            nd: self.nd,
            coords: self.coords[a * self.nd..b * self.nd].to_vec(),
            ids: self.ids.as_ref().map(|ids| ids[a..b].to_vec()),
            attributes,
        }
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

/// Every key of `store` with its bytes.
fn contents(store: &Arc<dyn Store>) -> BTreeMap<String, Vec<u8>> {
    zv_testkit::data::contents(store.as_ref())
}

/// Runs `f` in a pool of 4 threads.
fn on_four_threads<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(4)
        .build()
        .unwrap()
        .install(f)
}

fn options(geometry: Geometry, bins: bool, policy: OutOfBounds) -> WriterOptions {
    options_nd(3, geometry, bins, policy)
}

fn options_nd(nd: usize, geometry: Geometry, bins: bool, policy: OutOfBounds) -> WriterOptions {
    let mut o = WriterOptions::new(geometry, vec![25.0; nd]);
    if bins {
        o.bin_shape = Some(vec![12.5; nd]);
    }
    if policy != OutOfBounds::Expand {
        o.bounds = Some([vec![0.0; nd], vec![100.0; nd]]);
    }
    o.out_of_bounds = policy;
    o
}

/// The store of `rows` written `batch` rows at a time.
fn written(rows: &Rows, batch: usize, opts: &WriterOptions) -> BTreeMap<String, Vec<u8>> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut w = ZvWriter::create(store.clone(), opts.clone()).unwrap();
    let mut a = 0;
    while a < rows.len() {
        let b = (a + batch).min(rows.len());
        let r = rows.slice(a, b);
        w.add_vertices_flat(&r.coords, r.ids.as_deref(), &r.attributes)
            .unwrap();
        a = b;
    }
    w.finish().unwrap();
    contents(&store)
}

fn same_store(name: &str, rows: &Rows, opts: &WriterOptions) {
    let (one, many) =
        on_four_threads(|| (written(rows, rows.len(), opts), written(rows, SMALL, opts)));
    assert!(one.len() > 20, "{name}: {} keys", one.len());
    assert_eq!(
        one.keys().collect::<Vec<_>>(),
        many.keys().collect::<Vec<_>>(),
        "{name}"
    );
    for (k, v) in &many {
        assert!(one[k] == *v, "{name}: {k} differs");
    }
}

#[test]
fn one_large_batch_gives_the_store_of_small_batches() {
    let cases = [
        ("objects", true, false, OutOfBounds::Raise, 0.0, false),
        ("bins", false, true, OutOfBounds::Raise, 0.0, false),
        ("dropped", true, false, OutOfBounds::Ignore, 0.05, false),
        (
            "dropped bins",
            false,
            true,
            OutOfBounds::Ignore,
            0.05,
            false,
        ),
        ("grown", true, false, OutOfBounds::Expand, 0.05, false),
        ("categorical", true, false, OutOfBounds::Raise, 0.0, true),
    ];
    for (k, (name, objects, bins, policy, outside, categorical)) in cases.into_iter().enumerate() {
        let rows = Rows::new(k as u64 + 7, LARGE, objects, outside, categorical);
        same_store(name, &rows, &options(Geometry::PointCloud, bins, policy));
    }
    // graph vertices take the same path
    let rows = Rows::new(3, LARGE, true, 0.0, false);
    same_store(
        "graph",
        &rows,
        &options(Geometry::Graph, false, OutOfBounds::Raise),
    );
    // graph vertices without ids are all object 0 (the parallel path once left the level
    // without objects, and the object index then indexed past its table)
    let rows = Rows::new(4, LARGE, false, 0.0, false);
    same_store(
        "graph without ids",
        &rows,
        &options(Geometry::Graph, false, OutOfBounds::Raise),
    );
}

/// The placing and keeping loops are compiled apart for two and three axes and once for any
/// other count: each gives the store of the one-thread path.
#[test]
fn every_axis_count_gives_the_store_of_small_batches() {
    for nd in [2, 4] {
        for (name, objects, bins, policy, outside) in [
            ("objects", true, false, OutOfBounds::Raise, 0.0),
            ("dropped bins", false, true, OutOfBounds::Ignore, 0.05),
            ("grown", true, false, OutOfBounds::Expand, 0.05),
        ] {
            let rows = Rows::new(nd as u64 + 20, LARGE, objects, outside, false).with_axes(nd, 99);
            let name = format!("{name}, {nd} axes");
            same_store(
                &name,
                &rows,
                &options_nd(nd, Geometry::PointCloud, bins, policy),
            );
        }
    }
}

/// The error of adding `rows` after a first good batch, and the store once the good rows
/// that follow are added and the writer finishes.
fn refused(rows: &Rows, opts: &WriterOptions) -> (String, BTreeMap<String, Vec<u8>>) {
    on_four_threads(|| {
        let good = Rows::new(99, 1000, true, 0.0, false);
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut w = ZvWriter::create(store.clone(), opts.clone()).unwrap();
        w.add_vertices_flat(&good.coords, good.ids.as_deref(), &good.attributes)
            .unwrap();
        let e = w
            .add_vertices_flat(&rows.coords, rows.ids.as_deref(), &rows.attributes)
            .unwrap_err()
            .to_string();
        let more = Rows::new(98, 500, true, 0.0, false);
        w.add_vertices_flat(&more.coords, more.ids.as_deref(), &more.attributes)
            .unwrap();
        w.finish().unwrap();
        (e, contents(&store))
    })
}

/// A case of bad rows: its name, the rows made bad (index and x coordinate), and the vertex
/// the error names.
type Damage = (&'static str, Vec<(usize, f64)>, usize);

#[test]
fn a_bad_batch_is_refused_at_its_first_bad_vertex_and_changes_nothing() {
    let opts = options(Geometry::PointCloud, false, OutOfBounds::Raise);
    // the store without the refused batch
    let want = on_four_threads(|| {
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        let mut w = ZvWriter::create(store.clone(), opts.clone()).unwrap();
        for (seed, n) in [(99, 1000), (98, 500)] {
            let r = Rows::new(seed, n, true, 0.0, false);
            w.add_vertices_flat(&r.coords, r.ids.as_deref(), &r.attributes)
                .unwrap();
        }
        w.finish().unwrap();
        contents(&store)
    });
    // vertices are numbered from 1000 (the first batch); bad ones in two slices, the later
    // error first in the batch order of each slice
    let cases: [Damage; 4] = [
        ("not finite", vec![(70_001, f64::NAN)], 70_001),
        (
            "outside",
            vec![(80_000, 150.0), (85_000, f64::INFINITY)],
            80_000,
        ),
        ("two slices", vec![(60_000, -5.0), (5_000, f64::NAN)], 5_000),
        ("last", vec![(LARGE - 1, 1e300)], LARGE - 1),
    ];
    for (name, bad, first) in cases {
        let mut rows = Rows::new(5, LARGE, true, 0.0, false);
        for &(i, x) in &bad {
            rows.coords[i * 3] = x;
        }
        let (e, got) = refused(&rows, &opts);
        assert!(
            e.contains(&format!("vertex {}:", first + 1000))
                || e.contains(&format!("vertex {} ", first + 1000)),
            "{name}: {e}"
        );
        assert_eq!(got, want, "{name}: the refused batch left something");
    }
}

#[test]
fn a_part_refuses_a_large_batch_at_its_first_foreign_vertex() {
    on_four_threads(|| {
        let mut opts = options(Geometry::PointCloud, false, OutOfBounds::Raise);
        opts.chunk_shape = vec![10.0; 3];
        let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
        parts::prepare(store.clone(), &opts, 3).unwrap();
        let mut w = PartWriter::open(store.clone(), 1).unwrap();
        let rows = Rows::new(17, LARGE, true, 0.0, false);
        let owners = w.owners(&rows.coords);
        let first = owners.iter().position(|&o| o != 1).unwrap();
        let e = w
            .add_vertices_flat(&rows.coords, rows.ids.as_deref(), &rows.attributes)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("vertex {first}")) && e.contains("not this part (1)"),
            "{e} (first foreign vertex {first})"
        );
        // the rows the part owns, in one large batch, go in
        let kept = w
            .add_owned_vertices_flat(&rows.coords, rows.ids.as_deref(), &rows.attributes)
            .unwrap();
        assert_eq!(kept, owners.iter().filter(|&&o| o == 1).count() as u64);
    });
}
