//! The columnar reads answer what chunk-by-chunk and object-by-object reads answer:
//! `Level::points` is the union of the chunks' vertices and attributes; box queries that fetch
//! their candidate chunks directly (a sparse chunk grid, negative coordinates, boxes far from
//! the data or over missing chunks) equal brute force over every chunk; reading many objects
//! at once equals reading them one by one.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::data_type::DataType;
use zv_core::store::Store;
use zv_format::document::{Attribute, AttributeValues};
use zv_format::layout::attributes::AttributeRows;
use zv_format::layout::fragment_index::FragmentRows;
use zv_format::metadata::ChunkKey;
use zv_format::reader::{Level, Points, ZvStore};
use zv_format::writer::{WriterOptions, ZvWriter};
use zv_format::Geometry;
use zv_store_mem::MemoryStore;
use zv_testkit::env::fixtures_dir;

/// A deterministic generator in `[0, 1)`.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn attribute(dt: DataType, channels: usize, values: &[f64]) -> Attribute {
    Attribute {
        values: AttributeValues::Numeric {
            rows: AttributeRows::from_f64s(dt, channels, values).unwrap(),
            present: None,
        },
        channel_names: None,
    }
}

/// A point cloud in a few clusters far apart (negative coordinates included) on a chunk grid
/// of 10³ whose bounds span 200³ chunks: most of the grid is empty. Objects are uniform over
/// `objects` ids; two attributes (one of three channels).
fn sparse_cloud(objects: u64) -> Level {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut opts = WriterOptions::new(Geometry::PointCloud, vec![10.0; 3]);
    opts.bounds = Some([vec![-1000.0; 3], vec![1000.0; 3]]);
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let centres = [
        [-505.0, -505.0, -505.0],
        [-5.0, 3.0, -12.0],
        [0.0, 0.0, 0.0],
        [37.0, -18.0, 4.0],
        [640.0, 640.0, -640.0],
    ];
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let (mut points, mut ids, mut a, mut b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in centres {
        for _ in 0..400 {
            let p: Vec<f64> = c.iter().map(|x| x + (rng.unit() - 0.5) * 30.0).collect();
            points.push(p);
            ids.push((rng.unit() * objects as f64) as u64);
            a.push(rng.unit());
            b.extend([rng.unit(), rng.unit() * 2.0, rng.unit() * 3.0]);
        }
    }
    let mut attrs = BTreeMap::new();
    attrs.insert("a".to_owned(), attribute(DataType::Float32, 1, &a));
    attrs.insert("b".to_owned(), attribute(DataType::Float64, 3, &b));
    w.add_vertices(&points, Some(&ids), &attrs).unwrap();
    w.finish().unwrap();
    ZvStore::open(store).unwrap().level(0).unwrap()
}

/// A point: its chunk and row, its position and the bytes of each attribute's row.
type Point = (ChunkKey, u64, Vec<f64>, Vec<Vec<u8>>);

/// Every reference fixture store, by name.
fn fixtures() -> Vec<(String, ZvStore)> {
    let mut out: Vec<(String, ZvStore)> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| {
            let path = e.unwrap().path();
            let name = path
                .file_name()?
                .to_str()?
                .strip_suffix(".zarr")?
                .to_owned();
            Some((name, ZvStore::open_url(path.to_str()?).unwrap()))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 7, "the reference fixtures");
    out
}

/// Every point of the level with `attributes`, chunk by chunk (the reference answer).
fn by_chunks(level: &Level, attributes: &[&str]) -> Vec<Point> {
    let infos: Vec<_> = attributes
        .iter()
        .map(|a| level.vertex_attribute_info(a).unwrap())
        .collect();
    let mut out = Vec::new();
    for k in level.chunk_keys().unwrap() {
        let v = level.vertices(&k).unwrap().unwrap();
        let rows: Vec<AttributeRows> = infos
            .iter()
            .map(|i| {
                level
                    .vertex_attribute(i, &k, v.len() as u64)
                    .unwrap()
                    .unwrap()
            })
            .collect();
        for (r, p) in v.rows().into_iter().enumerate() {
            let attrs = rows
                .iter()
                .map(|a| a.row_bytes(r).unwrap().to_vec())
                .collect();
            out.push((k.clone(), r as u64, p, attrs));
        }
    }
    out
}

/// The points of a result in the same form as [`by_chunks`].
fn rows_of(points: &Points, attributes: &[&str]) -> Vec<Point> {
    assert_eq!(points.rows.len(), points.positions.len());
    for a in attributes {
        assert_eq!(points.vertex_attributes[*a].num_rows(), points.len(), "{a}");
    }
    points
        .rows
        .iter()
        .zip(points.positions.iter())
        .enumerate()
        .map(|(i, ((k, r), p))| {
            let attrs = attributes
                .iter()
                .map(|a| points.vertex_attributes[*a].row_bytes(i).unwrap().to_vec())
                .collect();
            (k.clone(), r, p.to_vec(), attrs)
        })
        .collect()
}

#[test]
fn level_points_equal_the_union_of_chunk_reads() {
    let level = sparse_cloud(30);
    let points = level.points(&["a", "b"]).unwrap();
    assert_eq!(points.positions.ndim(), 3);
    assert_eq!(
        rows_of(&points, &["a", "b"]),
        by_chunks(&level, &["a", "b"])
    );
    assert_eq!(points.positions.as_flat().len(), 3 * 2000);
    for (name, store) in fixtures() {
        for &lid in store.level_ids() {
            let level = store.level(lid).unwrap();
            let names = level.vertex_attribute_names().unwrap();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let points = level.points(&names).unwrap();
            assert_eq!(
                rows_of(&points, &names),
                by_chunks(&level, &names),
                "{name} L{lid}"
            );
        }
    }
}

#[test]
fn box_queries_on_a_sparse_grid_equal_brute_force() {
    let level = sparse_cloud(30);
    let all = by_chunks(&level, &["a", "b"]);
    let boxes: [([f64; 3], [f64; 3]); 8] = [
        // far from the data: every candidate chunk is missing
        ([300.0, 300.0, 300.0], [330.0, 330.0, 330.0]),
        // around a cluster: some candidates present, some missing
        ([-30.0, -20.0, -40.0], [20.0, 25.0, 15.0]),
        // negative coordinates only, cutting a cluster
        ([-520.0, -515.0, -530.0], [-500.0, -495.0, -505.0]),
        // one point's worth: a single chunk
        ([1.0, 1.0, 1.0], [4.0, 4.0, 4.0]),
        // crossing zero on every axis
        ([-3.0, -3.0, -3.0], [3.0, 3.0, 3.0]),
        // the far cluster, negative z
        ([620.0, 620.0, -660.0], [660.0, 660.0, -620.0]),
        // the whole extent (lists the level)
        ([-1000.0, -1000.0, -1000.0], [1000.0, 1000.0, 1000.0]),
        // a flat box
        ([-40.0, 0.0, -40.0], [60.0, 0.5, 60.0]),
    ];
    for (lo, hi) in boxes {
        let hits = level.query_box_with(&lo, &hi, &["a", "b"]).unwrap();
        let want: Vec<_> = all
            .iter()
            .filter(|(_, _, p, _)| {
                p.iter()
                    .zip(lo.iter().zip(&hi))
                    .all(|(x, (a, b))| a <= x && x <= b)
            })
            .cloned()
            .collect();
        if want.is_empty() {
            assert!(hits.is_empty(), "{lo:?}..{hi:?}");
            continue;
        }
        assert_eq!(rows_of(&hits, &["a", "b"]), want, "{lo:?}..{hi:?}");
    }
}

#[test]
fn a_missing_id_among_many_objects_is_the_error() {
    // many ids: the chunks are scanned while the manifests are decoded; the id is still
    // checked first, on a fresh level and on one whose index is decoded
    let level = sparse_cloud(40);
    let ids: Vec<u64> = (0..=40).collect();
    for _ in 0..2 {
        let err = level.objects(&ids).unwrap_err().to_string();
        assert!(
            err.contains("object 40 does not exist (40 objects)"),
            "{err}"
        );
    }
    assert_eq!(level.objects(&ids[..40]).unwrap().len(), 40);
}

#[test]
fn many_objects_equal_objects_read_one_by_one() {
    // points in chunk order, and a store whose manifests are not in chunk order (random
    // walks cross chunks back and forth)
    let level = sparse_cloud(40);
    let ids: Vec<u64> = (0..40).collect();
    let together = level.objects(&ids).unwrap();
    assert_eq!(
        together.iter().map(|o| o.vertices.len()).sum::<usize>(),
        2000
    );
    for (id, o) in ids.iter().zip(&together) {
        assert_eq!(o.vertices.len(), o.rows.len());
        assert_eq!(o.vertex_attributes["b"].num_rows(), o.vertices.len());
        // one by one (a sample: each reads most chunks)
        if id % 7 == 0 {
            assert_eq!(o, &level.object(*id).unwrap(), "object {id}");
        }
    }
    // a few of them, in another order
    let some = [7, 3, 3, 39];
    for (id, o) in some.iter().zip(level.objects(&some).unwrap()) {
        assert_eq!(o, together[*id as usize], "object {id}");
    }
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let mut w = ZvWriter::create(
        store.clone(),
        WriterOptions::new(Geometry::Streamline, vec![4.0; 3]),
    )
    .unwrap();
    let mut rng = Rng(77);
    let lines: Vec<Vec<Vec<f64>>> = (0..25)
        .map(|_| {
            let mut p = vec![0.0; 3];
            (0..60)
                .map(|_| {
                    // stored as float32: keep the values exact
                    p.iter_mut()
                        .for_each(|x| *x = f64::from((*x + (rng.unit() - 0.5) * 3.0) as f32));
                    p.clone()
                })
                .collect()
        })
        .collect();
    w.add_polylines(&lines, &BTreeMap::new()).unwrap();
    w.finish().unwrap();
    let level = ZvStore::open(store).unwrap().level(0).unwrap();
    let ids: Vec<u64> = (0..25).collect();
    for (id, o) in ids.iter().zip(level.objects(&ids).unwrap()) {
        assert_eq!(o, level.object(*id).unwrap(), "polyline {id}");
        assert_eq!(o.vertices, lines[*id as usize], "polyline {id}");
    }
}

/// An object as columns: its `(chunk, row)` references, positions and the bytes of each vertex
/// attribute's rows.
type Expanded = (Vec<(ChunkKey, u64)>, Vec<f64>, BTreeMap<String, Vec<u8>>);

/// Object `id` expanded by hand from its manifest through the per-chunk reads.
fn expanded(level: &Level, id: u64) -> Expanded {
    let index = level.object_index().unwrap().unwrap();
    let infos = level.vertex_attribute_infos().unwrap();
    let (mut rows, mut values, mut attrs) = (Vec::new(), Vec::new(), BTreeMap::new());
    for (coords, f) in index.manifests[id as usize].refs() {
        let key = ChunkKey(coords.to_vec());
        let chunk = level.chunk(&key).unwrap().unwrap();
        let n = chunk.vertices.len() as u64;
        let fragment: Vec<u64> = match chunk.fragments.get(f as usize).unwrap() {
            FragmentRows::Range(r) => r.collect(),
            FragmentRows::Explicit(list) => list.to_vec(),
        };
        for &r in &fragment {
            rows.push((key.clone(), r));
            values.extend(chunk.vertices.row(r as usize).unwrap());
        }
        for info in &infos {
            let Some(a) = level.vertex_attribute(info, &key, n).unwrap() else {
                continue;
            };
            let out: &mut Vec<u8> = attrs.entry(info.name.clone()).or_default();
            for &r in &fragment {
                out.extend_from_slice(a.row_bytes(r as usize).unwrap());
            }
        }
    }
    (rows, values, attrs)
}

/// Every object of `level`, read together, equals its manifest expanded by hand.
fn check_against_manifests(level: &Level, what: &str) {
    let n = level.object_index().unwrap().unwrap().num_objects;
    let ids: Vec<u64> = (0..n).collect();
    for (id, o) in ids.iter().zip(level.objects(&ids).unwrap()) {
        let (rows, values, attrs) = expanded(level, *id);
        let got: Vec<(ChunkKey, u64)> = (0..o.rows.len())
            .map(|i| {
                let (k, r) = o.rows.get(i).unwrap();
                (k.clone(), r)
            })
            .collect();
        assert_eq!(got, rows, "{what} object {id}: rows");
        assert_eq!(
            o.vertices.as_flat(),
            values.as_slice(),
            "{what} object {id}"
        );
        for (name, bytes) in &attrs {
            let a = &o.vertex_attributes[name];
            assert_eq!(
                a.as_le_bytes(),
                bytes.as_slice(),
                "{what} object {id}: {name}"
            );
        }
        assert_eq!(o.vertex_attributes.len(), attrs.len(), "{what} object {id}");
    }
}

#[test]
fn objects_equal_their_manifests_expanded_by_hand() {
    // objects in chunk order (a point cloud with two attributes), out of chunk order (random
    // walks), and every reference fixture
    check_against_manifests(&sparse_cloud(40), "cloud");
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let opts = WriterOptions::new(Geometry::Streamline, vec![4.0; 3]);
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    let mut rng = Rng(99);
    let lines: Vec<Vec<Vec<f64>>> = (0..12)
        .map(|_| {
            let mut p = vec![0.0; 3];
            (0..50)
                .map(|_| {
                    p.iter_mut().for_each(|x| *x += (rng.unit() - 0.5) * 3.0);
                    p.clone()
                })
                .collect()
        })
        .collect();
    w.add_polylines(&lines, &BTreeMap::new()).unwrap();
    w.finish().unwrap();
    check_against_manifests(&ZvStore::open(store).unwrap().level(0).unwrap(), "walks");
    for (name, store) in fixtures() {
        for &lid in store.level_ids() {
            let level = store.level(lid).unwrap();
            if level.object_index().unwrap().is_some() {
                check_against_manifests(&level, &format!("{name} L{lid}"));
            }
        }
    }
}

#[test]
fn fixture_objects_read_together_equal_one_by_one() {
    for (name, store) in fixtures() {
        for &lid in store.level_ids() {
            let level = store.level(lid).unwrap();
            let Some(index) = level.object_index().unwrap() else {
                continue;
            };
            let ids: Vec<u64> = (0..index.num_objects).collect();
            for (id, o) in ids.iter().zip(level.objects(&ids).unwrap()) {
                assert_eq!(o, level.object(*id).unwrap(), "{name} L{lid} object {id}");
            }
        }
    }
}

#[test]
fn level_wide_arrays_are_read_once_per_level() {
    use zv_store_fs::FilesystemStore;
    use zv_testkit::store::CountingStore;
    for name in ["graph_basic", "points_basic", "skeleton_basic"] {
        let inner: Arc<dyn Store> =
            Arc::new(FilesystemStore::new(fixtures_dir().join(format!("{name}.zarr"))).unwrap());
        let counting = Arc::new(CountingStore::new(inner));
        let level = ZvStore::open(counting.clone()).unwrap().level(0).unwrap();
        let first = level.object(0).unwrap();
        level.group_members(0).ok();
        counting.reset();
        // a clone shares what the level has read
        let again = level.clone().object(0).unwrap();
        assert_eq!(first, again, "{name}");
        level.group_members(0).ok();
        let reads = counting.reads();
        let level_wide: Vec<&String> = reads
            .iter()
            .filter(|k| {
                // only chunk blobs: `0/<array>/<chunk key>/…` (links/0/<key>/… included)
                let parts: Vec<&str> = k.split('/').collect();
                !parts
                    .iter()
                    .any(|p| p.parse::<ChunkKey>().is_ok_and(|c| c.arity() == 3))
            })
            .collect();
        assert!(level_wide.is_empty(), "{name}: read again: {level_wide:?}");
        assert!(
            !reads.is_empty(),
            "{name}: the object's chunks are read again"
        );
    }
}

/// `columns` as `Points` minus the rows: positions back to `f64`, attributes as they are.
fn columns_as_points(
    c: &zv_format::reader::PointColumns,
) -> (Vec<f64>, BTreeMap<String, AttributeRows>) {
    let rows = AttributeRows::from_le(c.vertex_type, c.ndim, c.positions.clone()).unwrap();
    let n = c.len();
    let flat = (0..n)
        .flat_map(|r| (0..c.ndim).map(move |d| (r, d)))
        .map(|(r, d)| rows.get_f64(r, d).unwrap())
        .collect();
    (flat, c.attributes.clone())
}

#[test]
fn point_columns_equal_points_and_box_queries() {
    let level = sparse_cloud(30);
    let names = ["a", "b"];
    let whole = level.point_columns(None, &names, true).unwrap();
    let points = level.points(&names).unwrap();
    assert_eq!(whole.vertex_type, level.vertex_type());
    assert_eq!(
        columns_as_points(&whole),
        (
            points.positions.as_flat().to_vec(),
            points.vertex_attributes.clone()
        )
    );
    // each point's object is the object whose manifest names it
    let ids = whole.object_ids.as_ref().unwrap();
    assert_eq!(ids.len(), points.len());
    for id in 0..30u64 {
        let object = level.object(id).unwrap();
        let mut mine: Vec<_> = points
            .rows
            .to_vec()
            .into_iter()
            .zip(ids)
            .filter(|(_, &o)| o == id as i64)
            .map(|(r, _)| r)
            .collect();
        let mut theirs = object.rows.to_vec();
        mine.sort();
        theirs.sort();
        assert_eq!(mine, theirs, "object {id}");
    }
    let mut checked = 0;
    for (lo, hi) in [
        ([-30.0, -20.0, -40.0], [20.0, 25.0, 15.0]),
        ([300.0; 3], [330.0; 3]),
    ] {
        let c = level
            .point_columns(Some((&lo, &hi)), &names, false)
            .unwrap();
        let q = level.query_box_with(&lo, &hi, &names).unwrap();
        assert!(c.object_ids.is_none());
        assert_eq!(
            columns_as_points(&c),
            (q.positions.as_flat().to_vec(), q.vertex_attributes.clone())
        );
        // with object ids (the index scanned for the box's chunks only): each point's object
        // is the one the whole read gives it
        let with = level.point_columns(Some((&lo, &hi)), &names, true).unwrap();
        assert_eq!(with.positions, c.positions);
        let row = whole.positions.len() / whole.len();
        let id_of: std::collections::HashMap<&[u8], i64> = whole
            .positions
            .chunks(row)
            .zip(whole.object_ids.as_ref().unwrap())
            .map(|(p, &o)| (p, o))
            .collect();
        let box_ids = with.object_ids.as_ref().unwrap();
        assert_eq!(box_ids.len(), c.len());
        for (p, &o) in with.positions.chunks(row).zip(box_ids) {
            assert_eq!(id_of[p], o);
        }
        checked += box_ids.len();
    }
    assert!(checked > 0, "no box held a point");
    // a chunk subset, in the order given: those chunks' rows and objects
    let keys = level.chunk_keys().unwrap();
    let some: Vec<_> = keys.iter().rev().step_by(3).cloned().collect();
    let sub = level
        .point_columns_in(Some(&some), None, &names, true)
        .unwrap();
    let mut want = Vec::new();
    for k in &some {
        want.extend_from_slice(level.vertices(k).unwrap().unwrap().as_le_bytes());
    }
    assert_eq!(sub.positions, want);
    assert_eq!(sub.object_ids.as_ref().unwrap().len(), sub.len());
}

#[test]
fn point_columns_of_fixtures_keep_the_stored_bytes() {
    for (name, store) in fixtures() {
        for &id in store.level_ids() {
            let level = store.level(id).unwrap();
            let c = level.point_columns(None, &[], true).unwrap();
            let mut want = Vec::new();
            for k in level.chunk_keys().unwrap() {
                want.extend_from_slice(level.vertices(&k).unwrap().unwrap().as_le_bytes());
            }
            assert_eq!(c.positions, want, "{name} level {id}");
            assert_eq!(
                c.object_ids.is_some(),
                level.object_index().unwrap().is_some(),
                "{name}"
            );
        }
    }
}
