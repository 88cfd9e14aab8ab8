//! A ZV 0.7 level's cross-chunk records (`cross_chunk_links/0/data`) are written a chunk at a
//! time (`WriterOptions::record_chunk_bytes`) and read back a chunk at a time: with small
//! chunks the blob is stored in many chunks, and everything zv reads from the store (the
//! records, every other key byte for byte, a pyramid built on it) is what it reads from the
//! same level written with one chunk.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;

use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::Store;
use zv_format::pyramid::{build_pyramid, PyramidOptions, Step};
use zv_format::writer::{CodecChoice, FormatVersion, WriterOptions, ZvWriter};
use zv_format::{Geometry, ZvStore};
use zv_store_mem::MemoryStore;

const DATA: &str = "0/cross_chunk_links/0/data";

/// A random graph (`width` 2) or triangle mesh (`width` 3) of 400 vertices in [0, 40)^3 in
/// chunks of 10, its links mostly across chunks, written with records of at most
/// `record_chunk_bytes` a chunk.
fn write(width: usize, codecs: &str, record_chunk_bytes: u64) -> Arc<dyn Store> {
    write_as(width, codecs, record_chunk_bytes, FormatVersion::V0_7)
}

/// [`write`] in the layout of `version`.
fn write_as(
    width: usize,
    codecs: &str,
    record_chunk_bytes: u64,
    version: FormatVersion,
) -> Arc<dyn Store> {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let geometry = if width == 2 {
        Geometry::Graph
    } else {
        Geometry::Mesh
    };
    let mut opts = WriterOptions::new(geometry, vec![10.0; 3]).with_format_version(version);
    opts.codecs = CodecChoice::parse(codecs).unwrap();
    opts.bin_shape = Some(vec![5.0; 3]);
    opts.record_chunk_bytes = record_chunk_bytes;
    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ width as u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let n = 400u64;
    let flat: Vec<f64> = (0..n * 3).map(|_| (next() % 4000) as f64 / 100.0).collect();
    let ids: Vec<u64> = (0..n).map(|v| v % 5).collect();
    let mut w = ZvWriter::create(store.clone(), opts).unwrap();
    w.add_vertices_flat(&flat, Some(&ids), &BTreeMap::new())
        .unwrap();
    let mut links: Vec<Vec<u64>> = Vec::new();
    while links.len() < 900 {
        let l: Vec<u64> = (0..width).map(|_| next() % n).collect();
        if l.iter().collect::<std::collections::BTreeSet<_>>().len() == width {
            links.push(l);
        }
    }
    if width == 2 {
        let edges: Vec<[u64; 2]> = links.iter().map(|l| [l[0], l[1]]).collect();
        w.add_edges(&edges, &BTreeMap::new()).unwrap();
    } else {
        w.add_faces(&links, &BTreeMap::new()).unwrap();
    }
    w.finish().unwrap();
    store
}

fn keys(store: &Arc<dyn Store>) -> Vec<StoreKey> {
    store.list_prefix(&StorePrefix::root()).unwrap()
}

fn get(store: &Arc<dyn Store>, key: &StoreKey) -> Vec<u8> {
    store.get(key).unwrap().unwrap().to_vec()
}

/// The chunk files of the records blob.
fn record_chunks(store: &Arc<dyn Store>) -> usize {
    keys(store)
        .iter()
        .filter(|k| k.as_str().starts_with(&format!("{DATA}/c/")))
        .count()
}

/// Level 0's cross-chunk records.
fn records_of(store: &Arc<dyn Store>) -> zv_format::reader::CrossChunk {
    ZvStore::open(store.clone())
        .unwrap()
        .level(0)
        .unwrap()
        .cross_chunk_links(0)
        .unwrap()
        .unwrap()
}

#[test]
fn records_in_many_chunks_read_as_records_in_one() {
    for (width, codecs) in [(2, "none"), (2, "zstd"), (3, "spec-default")] {
        let one = write(width, codecs, u64::MAX);
        let many = write(width, codecs, 256);
        let what = format!("width {width}, {codecs}");
        assert_eq!(record_chunks(&one), 1, "{what}");
        let records = records_of(&one);
        // hundreds of records: 48 or 72 bytes each, in chunks of at most 256 bytes
        assert!(
            records.links.len() > 300,
            "{what}: {} records",
            records.links.len()
        );
        assert!(
            record_chunks(&many) > 50,
            "{what}: {} chunks",
            record_chunks(&many)
        );
        assert_eq!(records_of(&many), records, "{what}");
        // every other key is written the same
        let others = |s: &Arc<dyn Store>| -> Vec<StoreKey> {
            keys(s)
                .into_iter()
                .filter(|k| !k.as_str().starts_with(DATA))
                .collect()
        };
        assert_eq!(others(&one), others(&many), "{what}");
        for k in others(&one) {
            assert_eq!(get(&one, &k), get(&many, &k), "{what}: {k}");
        }
        // a pyramid built on each (its coarsening reads the records) is the same
        for s in [&one, &many] {
            build_pyramid(s.clone(), &PyramidOptions::new(vec![Step::new(2, 1)])).unwrap();
        }
        let level1 = |s: &Arc<dyn Store>| -> Vec<(String, Vec<u8>)> {
            keys(s)
                .into_iter()
                .filter(|k| k.as_str().starts_with("1/") || k.as_str() == "zarr.json")
                .map(|k| (k.to_string(), get(s, &k)))
                .collect()
        };
        let coarse = level1(&one);
        assert!(
            coarse.iter().any(|(k, _)| k.starts_with("1/links/")),
            "{what}"
        );
        assert_eq!(coarse, level1(&many), "{what}");
    }
}

/// The records visited a batch at a time (`Level::visit_cross_chunk_links`): the batches and
/// the count.
fn visited(store: &Arc<dyn Store>) -> (Vec<zv_format::layout::cross_chunk::CrossChunkLinks>, u64) {
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    let mut batches = Vec::new();
    let n = level
        .visit_cross_chunk_links(0, &mut |b| {
            batches.push(b.clone());
            Ok(())
        })
        .unwrap()
        .unwrap();
    (batches, n)
}

#[test]
fn records_are_visited_a_stored_chunk_or_cell_at_a_time() {
    for (width, version) in [
        (2, FormatVersion::V0_7),
        (3, FormatVersion::V0_7),
        (2, FormatVersion::V0_9),
        (3, FormatVersion::V0_9),
    ] {
        let what = format!("width {width}, {version:?}");
        let store = write_as(width, "zstd", 256, version);
        let whole = records_of(&store).links;
        let (batches, n) = visited(&store);
        assert_eq!(n, whole.len() as u64, "{what}");
        // many batches (56 chunks of 256 bytes, or 64 cells), none larger than a chunk's
        // records (a record cut by a chunk's end goes with the next)
        assert!(batches.len() > 20, "{what}: {} batches", batches.len());
        if version == FormatVersion::V0_7 {
            let record = width * 4 * 8;
            assert!(
                batches.iter().all(|b| b.len() <= 256 / record + 1),
                "{what}"
            );
        }
        let mut all = zv_format::layout::cross_chunk::CrossChunkLinks::new(width, 3);
        for b in &batches {
            assert!(!b.is_empty(), "{what}");
            all.append(b).unwrap();
        }
        assert_eq!(all, whole, "{what}");
    }
    // a damaged stored chunk is an error naming the blob, after the batches before it
    let store = write_as(2, "zstd", 256, FormatVersion::V0_7);
    let key = StoreKey::new(format!("{DATA}/c/7")).unwrap();
    store.set(&key, b"not zstd".to_vec().into()).unwrap();
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    let mut seen = 0;
    let err = level
        .visit_cross_chunk_links(0, &mut |b| {
            seen += b.len();
            Ok(())
        })
        .unwrap_err()
        .to_string();
    assert!(err.contains(DATA), "{err}");
    assert!(seen > 0, "{err}");
    // a level without the group has none to visit
    let none = write_as(2, "zstd", 256, FormatVersion::V0_7);
    let level = ZvStore::open(none).unwrap().level(0).unwrap();
    assert_eq!(
        level.visit_cross_chunk_links(1, &mut |_| Ok(())).unwrap(),
        None
    );
}

#[test]
fn a_bad_record_is_named_by_its_stored_chunk() {
    // records of 64 bytes (two endpoints of three coordinates and a row) in chunks of 256:
    // chunk 5 holds records 20..24; the row of record 20's first endpoint made negative
    let store = write(2, "none", 256);
    assert!(record_chunks(&store) > 6);
    let key = StoreKey::new(format!("{DATA}/c/5")).unwrap();
    let mut bytes = get(&store, &key);
    bytes[24..32].copy_from_slice(&(-1i64).to_le_bytes());
    store.set(&key, bytes.into()).unwrap();
    let level = ZvStore::open(store.clone()).unwrap().level(0).unwrap();
    let whole = level.cross_chunk_links(0).unwrap_err().to_string();
    let visit = level
        .visit_cross_chunk_links(0, &mut |_| Ok(()))
        .unwrap_err()
        .to_string();
    for err in [whole, visit] {
        assert!(err.contains(&format!("{DATA}/c/5")), "{err}");
        assert!(err.contains("record 20"), "{err}");
    }
}
