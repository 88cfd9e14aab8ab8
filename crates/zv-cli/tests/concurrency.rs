//! Concurrent writers on one Zarr array in the filesystem store (issue 14, concurrency), through
//! zv-core's `Array::store_chunk`:
//!
//! - **distinct chunks**: writer threads in this process and in child processes (this test
//!   binary run again with `ZV_CONCURRENCY_CHILD` set) each write their own chunks of one
//!   array, every chunk twice; the array read back equals a model map of each chunk's last
//!   write: nothing lost, nothing torn, no temporary file left.
//! - **one key**: threads and processes overwrite the same chunk while readers read it; every
//!   read and the final value are exactly one of the values written (a write is a rename of a
//!   whole temporary file).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::json;
use zv_core::array::Array;
use zv_core::codec::ArrayBytes;
use zv_core::data_type::DataType;
use zv_core::metadata::{ArrayMetadata, ExtensionMetadata};
use zv_core::node::NodePath;
use zv_core::store::Store;
use zv_store_fs::FilesystemStore;

/// Elements (uint64) per chunk.
const CHUNK: u64 = 2048;
/// Writer threads per process.
const THREADS: u64 = 4;
/// Child processes (the test process writes too).
const CHILDREN: u64 = 3;
/// Chunks per writer.
const PER_WRITER: u64 = 24;
/// Writes of each chunk by its writer (the last one counts).
const ROUNDS: u64 = 2;
/// Overwrites of the shared chunk per writer.
const SAME_KEY_WRITES: u64 = 40;

const CHILD_ENV: &str = "ZV_CONCURRENCY_CHILD";

fn writers() -> u64 {
    THREADS * (CHILDREN + 1)
}

fn codecs() -> Vec<ExtensionMetadata> {
    serde_json::from_value(
        json!([{"name": "bytes", "configuration": {"endian": "little"}},
        {"name": "zstd", "configuration": {"level": 1, "checksum": false}}]),
    )
    .unwrap()
}

fn open(dir: &Path, name: &str) -> Array {
    zv_format::link_plugins();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir).unwrap());
    Array::open(store, &NodePath::new(name).unwrap()).unwrap()
}

fn create(dir: &Path, name: &str, chunks: u64) {
    zv_format::link_plugins();
    let store: Arc<dyn Store> = Arc::new(FilesystemStore::new(dir).unwrap());
    let meta = ArrayMetadata::new(
        vec![chunks * CHUNK],
        vec![CHUNK],
        DataType::UInt64,
        codecs(),
    )
    .unwrap();
    Array::create(store, &NodePath::new(name).unwrap(), meta).unwrap();
}

/// The value of element `e` of chunk `c` written by `writer` in `round`: every field is
/// recoverable, so a torn or misplaced chunk cannot match another write.
fn value(writer: u64, round: u64, c: u64, e: u64) -> u64 {
    (writer << 56) | (round << 48) | (c << 20) | e
}

fn chunk_bytes(writer: u64, round: u64, c: u64) -> Vec<u8> {
    (0..CHUNK)
        .flat_map(|e| value(writer, round, c, e).to_ne_bytes())
        .collect()
}

/// The chunks of `writer`: every `writers()`-th chunk from its id.
fn chunks_of(writer: u64) -> impl Iterator<Item = u64> {
    (0..PER_WRITER).map(move |i| i * writers() + writer)
}

fn store(a: &Array, c: u64, bytes: Vec<u8>) {
    if let Err(e) = a.store_chunk(&[c], ArrayBytes::Fixed(Cow::Owned(bytes))) {
        panic!("writing chunk {c} of {}: {e}", a.path());
    }
}

/// What writer `writer` does: its chunks of `/distinct`, `ROUNDS` times each, interleaved with
/// overwrites of chunk 0 of `/same`.
fn write_as(dir: &Path, writer: u64) {
    let distinct = open(dir, "/distinct");
    let same = open(dir, "/same");
    let mut n = 0;
    for round in 0..ROUNDS {
        for c in chunks_of(writer) {
            store(&distinct, c, chunk_bytes(writer, round, c));
            if n < SAME_KEY_WRITES {
                store(&same, 0, chunk_bytes(writer, n, 0));
                n += 1;
            }
        }
    }
    while n < SAME_KEY_WRITES {
        store(&same, 0, chunk_bytes(writer, n, 0));
        n += 1;
    }
}

/// Runs `THREADS` writers (ids `first..first + THREADS`) in threads of this process.
fn write_threads(dir: &Path, first: u64) {
    std::thread::scope(|s| {
        for t in 0..THREADS {
            s.spawn(move || write_as(dir, first + t));
        }
    });
}

/// Whether `bytes` is exactly one whole write of chunk 0 of `/same`: (writer, n).
fn same_key_write(bytes: &[u8]) -> Option<(u64, u64)> {
    let first = u64::from_ne_bytes(bytes.get(..8)?.try_into().ok()?);
    let (writer, n) = (first >> 56, (first >> 48) & 0xff);
    (writer < writers() && n < SAME_KEY_WRITES && bytes == chunk_bytes(writer, n, 0))
        .then_some((writer, n))
}

/// In a child process: the writer threads named by `ZV_CONCURRENCY_CHILD=DIR:FIRST`. Run
/// directly, this test checks one writer alone against the model.
#[test]
fn writer_process() {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        let (dir, first) = spec.rsplit_once(':').unwrap();
        write_threads(Path::new(dir), first.parse().unwrap());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    create(dir.path(), "/distinct", PER_WRITER * writers());
    create(dir.path(), "/same", 1);
    write_as(dir.path(), 0);
    let a = open(dir.path(), "/distinct");
    for c in chunks_of(0) {
        let got = a.retrieve_chunk_if_exists(&[c]).unwrap().unwrap();
        assert_eq!(got, ArrayBytes::Fixed(chunk_bytes(0, ROUNDS - 1, c).into()));
    }
}

#[test]
fn threads_and_processes_write_distinct_chunks_and_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let total_chunks = PER_WRITER * writers();
    create(d, "/distinct", total_chunks);
    create(d, "/same", 1);
    store(&open(d, "/same"), 0, chunk_bytes(0, 0, 0));

    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (1..=CHILDREN)
        .map(|p| {
            Command::new(&exe)
                .args(["--exact", "writer_process", "--test-threads=1", "--quiet"])
                .env(CHILD_ENV, format!("{}:{}", d.display(), p * THREADS))
                .spawn()
                .unwrap()
        })
        .collect();
    // readers of the shared key while everyone writes; `done` is set however the writers end
    let done = AtomicBool::new(false);
    struct Done<'a>(&'a AtomicBool);
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let reads = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let same = open(d, "/same");
            let mut reads = 0u64;
            while !done.load(Ordering::Relaxed) {
                let chunk = same.retrieve_chunk_if_exists(&[0]).unwrap().unwrap();
                let ArrayBytes::Fixed(bytes) = chunk else {
                    panic!("uint64 chunk decoded as variable-length")
                };
                assert!(same_key_write(&bytes).is_some(), "a torn read of /same");
                reads += 1;
            }
            reads
        });
        let finished = Done(&done);
        write_threads(d, 0);
        for mut child in children {
            assert!(child.wait().unwrap().success(), "a writer process failed");
        }
        drop(finished);
        reader.join().unwrap()
    });

    // the model: each chunk's last write
    let model: BTreeMap<u64, Vec<u8>> = (0..writers())
        .flat_map(|w| chunks_of(w).map(move |c| (c, chunk_bytes(w, ROUNDS - 1, c))))
        .collect();
    assert_eq!(model.len() as u64, total_chunks);
    let distinct = open(d, "/distinct");
    let mut stored = distinct.stored_chunks().unwrap();
    stored.sort();
    assert_eq!(stored.len() as u64, total_chunks, "chunks lost or extra");
    for (c, want) in &model {
        let got = distinct.retrieve_chunk_if_exists(&[*c]).unwrap().unwrap();
        assert_eq!(got, ArrayBytes::Fixed(want.clone().into()), "chunk {c}");
    }
    // the region read agrees with the per-chunk reads
    let all = distinct
        .retrieve_region(&zv_core::grid::Region::new(vec![0], vec![total_chunks * CHUNK]).unwrap())
        .unwrap();
    let ArrayBytes::Fixed(all) = all else {
        panic!("uint64 array decoded as variable-length")
    };
    assert_eq!(
        all.as_ref(),
        model.values().flatten().copied().collect::<Vec<u8>>()
    );

    // the shared key holds one whole write
    let same = open(d, "/same");
    let ArrayBytes::Fixed(last) = same.retrieve_chunk_if_exists(&[0]).unwrap().unwrap() else {
        panic!("uint64 chunk decoded as variable-length")
    };
    assert!(
        same_key_write(&last).is_some(),
        "the final /same is not a written value"
    );

    // no temporary file is left behind
    let leftovers: Vec<String> = walk(d)
        .into_iter()
        .filter(|p| p.contains(".zv-tmp."))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
    eprintln!(
        "{} writers ({THREADS} threads × {} processes): {total_chunks} distinct chunks × {ROUNDS} writes, {} writes of one key, {reads} concurrent reads of it",
        writers(),
        CHILDREN + 1,
        writers() * SAME_KEY_WRITES
    );
}

/// Every file below `dir`, as paths.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p.display().to_string());
        }
    }
    out
}
