//! The streamed polylines ([`PolylineStream`]) against [`Level::objects`]: the same vertices
//! and attribute rows, in id order, whatever the batch and window sizes; objects that wander
//! between chunks (blocks out of chunk order) and a store of more objects than the object
//! index is decoded at a time; a manifest naming fragments its chunk lacks is an error naming
//! the object index.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::Arc;
use zv_format::writer::FormatVersion;

use serde_json::{json, Value};
use zv_core::metadata::ExtensionMetadata;
use zv_format::document::GeometryDocument;
use zv_format::export::polylines::{Polyline, PolylineStream};
use zv_format::import::write_document_in;
use zv_format::layout::manifest::{
    decode_with_offsets, encode_stream, BlockFragments, ChunkCoords, ManifestBlock,
};
use zv_format::progress::NoProgress;
use zv_format::reader::ZvStore;
use zv_testkit::env::fixtures_dir;

/// `n` random walks of 1 to `max` points over a 4 x 4 x 4 grid of chunks, stored in id order
/// (so that every batch names every chunk), with a float and a categorical vertex attribute.
fn walks(n: usize, max: usize, batch: usize) -> ZvStore {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut lines, mut weight, mut label) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let len = 1 + (next() % max as u64) as usize;
        let mut p: Vec<f64> = (0..3).map(|_| (next() % 400) as f64 / 10.0).collect();
        let (mut line, mut w, mut l) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..len {
            line.push(json!(p.clone()));
            w.push(json!((next() % 1000) as f64 / 8.0));
            l.push(json!(["a", "b", "c"][(next() % 3) as usize]));
            for x in &mut p {
                *x = (*x + (next() % 200) as f64 / 10.0 - 10.0).clamp(0.0, 39.9);
            }
        }
        lines.push(Value::Array(line));
        weight.push(Value::Array(w));
        label.push(Value::Array(l));
    }
    let doc = json!({"format": "zv-geometry/1", "geometry": "streamline",
        "chunk_shape": [10, 10, 10], "polylines": lines,
        "vertex_attributes": {
            "weight": {"dtype": "float32", "values": weight},
            "label": {"dtype": "string", "values": label}}});
    let doc = GeometryDocument::from_value(&doc).unwrap();
    let store = Arc::new(zv_store_mem::MemoryStore::new());
    write_document_in(store.clone(), &doc, batch, FormatVersion::V0_7).unwrap();
    ZvStore::open(store).unwrap()
}

fn streamed(zv: &ZvStore, sizes: Option<(usize, usize)>) -> Vec<Polyline> {
    let mut stream = PolylineStream::open(zv).unwrap();
    if let Some((v, w)) = sizes {
        stream = stream.with_sizes(v, w);
    }
    let mut out = Vec::new();
    stream
        .for_each(&NoProgress, |pl| {
            out.push(pl);
            Ok(())
        })
        .unwrap();
    out
}

/// Checks the streamed polylines of `zv` against `Level::objects`; returns the number of
/// objects whose manifests are out of chunk order.
fn check(zv: &ZvStore, sizes: Option<(usize, usize)>) -> usize {
    let level = zv.level(0).unwrap();
    let stream = PolylineStream::open(zv).unwrap();
    let n = stream.num_objects();
    let ids: Vec<u64> = (0..n).collect();
    let objects = level.objects(&ids).unwrap();
    let got = streamed(zv, sizes);
    assert_eq!(got.len() as u64, n);
    let mut unordered = 0;
    for (pl, obj) in got.iter().zip(&objects) {
        assert_eq!(pl.id, obj.id);
        assert_eq!(pl.positions, obj.vertices, "object {}", obj.id);
        for (info, rows) in stream.infos().iter().zip(&pl.attributes) {
            assert_eq!(rows.as_ref(), obj.vertex_attributes.get(&info.name));
        }
        let chunks = obj.fragments.chunk_indices();
        unordered += usize::from(chunks.windows(2).any(|w| w[0] > w[1]));
    }
    unordered
}

#[test]
fn every_batch_and_window_size_streams_the_objects_of_the_level() {
    let zv = walks(300, 12, 97);
    let chunks = zv.level(0).unwrap().chunk_keys().unwrap().len();
    assert!(chunks > 20, "{chunks} chunks");
    for sizes in [Some((1, 1)), Some((200, 2)), Some((4096, 3)), None] {
        let unordered = check(&zv, sizes);
        assert!(unordered > 0, "no object wanders back to a chunk");
    }
}

#[test]
fn an_index_larger_than_a_part_streams_the_objects_of_the_level() {
    // more objects than the object index decodes at a time (its parts path)
    let zv = walks(40_000, 2, 20_000);
    check(&zv, Some((60_000, 4)));
}

#[test]
fn the_fixture_streams_its_objects() {
    let path = fixtures_dir().join("streamlines_basic.zarr");
    let zv = ZvStore::open_url(&path.display().to_string()).unwrap();
    for sizes in [Some((1, 1)), None] {
        check(&zv, sizes);
    }
}

/// `zv` with object `id`'s first manifest block changed by `edit`, reopened.
fn edited(zv: &ZvStore, id: usize, edit: impl FnOnce(&mut ManifestBlock)) -> ZvStore {
    let blobs = zv.blobs().clone();
    let data = blobs.read_bytes("0/object_index/data").unwrap().unwrap();
    let offsets = blobs.read_bytes("0/object_index/offsets").unwrap().unwrap();
    let mut manifests = decode_with_offsets(&data, &offsets, 3).unwrap();
    edit(&mut manifests[id].blocks[0]);
    let (data, offsets) = encode_stream(&manifests, 3).unwrap();
    let raw = [ExtensionMetadata::new("bytes")];
    blobs
        .write_bytes("0/object_index/data", &data, &raw)
        .unwrap();
    blobs
        .write_bytes("0/object_index/offsets", &offsets, &raw)
        .unwrap();
    ZvStore::open(blobs.store().clone()).unwrap()
}

#[test]
fn a_manifest_naming_what_the_chunks_lack_is_an_error_naming_the_object_index() {
    let zv = walks(40, 4, 1000);
    let past = edited(&zv, 7, |b| {
        b.fragments = BlockFragments::Range {
            start: 0,
            count: 1000,
        }
    });
    let elsewhere = edited(&walks(40, 4, 1000), 9, |b| {
        b.chunk = ChunkCoords::from(vec![99, 99, 99])
    });
    for (zv, what) in [
        (
            past,
            "object 7: a manifest block names fragments 0..1000 of chunk",
        ),
        (
            elsewhere,
            "object 9: a manifest block names chunk 99.99.99, which has no vertices",
        ),
    ] {
        let stream = PolylineStream::open(&zv).unwrap();
        let text = stream
            .for_each(&NoProgress, |_| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("0/object_index/zarr.json") && text.contains(what),
            "{text}"
        );
    }
}
