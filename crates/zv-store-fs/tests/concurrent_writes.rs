//! Concurrent `set`s of one key through several store handles on one directory in one
//! process (each thread opens its own `FilesystemStore`, as independent components do):
//! every `set` succeeds, every concurrent `get` sees one whole value, and the final value is
//! one of those written. Before temporary names were numbered per process, two handles
//! picked the same temporary file and a `set` failed with "File exists".
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_core::store::{ReadableStore, WritableStore};
use zv_store_fs::FilesystemStore;

const THREADS: usize = 6;
const WRITES: usize = 60;
const LEN: usize = 64 * 1024;

/// Value `n` of writer `t`: every byte says who wrote it, so a torn value is seen.
fn value(t: usize, n: usize) -> Vec<u8> {
    vec![(t * WRITES + n) as u8 ^ 0x5a; LEN]
}

fn is_whole(v: &[u8]) -> bool {
    v.len() == LEN && v.iter().all(|b| *b == v[0])
}

#[test]
fn handles_in_threads_overwrite_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let key = StoreKey::new("a/c/0").unwrap();
    FilesystemStore::new(dir.path())
        .unwrap()
        .set(&key, Bytes::from(value(0, 0)))
        .unwrap();
    let done = AtomicBool::new(false);
    let reads = std::thread::scope(|s| {
        let reader = s.spawn(|| {
            let store = FilesystemStore::new(dir.path()).unwrap();
            let mut reads = 0;
            while !done.load(Ordering::Relaxed) {
                let v = store.get(&key).unwrap().unwrap();
                assert!(is_whole(&v), "a torn read");
                reads += 1;
            }
            reads
        });
        let writers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (dir, key) = (dir.path(), &key);
                s.spawn(move || {
                    let store = FilesystemStore::new(dir).unwrap();
                    for n in 0..WRITES {
                        if let Err(e) = store.set(key, Bytes::from(value(t, n))) {
                            panic!("writer {t}, write {n}: {e}");
                        }
                    }
                })
            })
            .collect();
        let results: Vec<_> = writers.into_iter().map(|w| w.join()).collect();
        done.store(true, Ordering::Relaxed);
        let reads = reader.join().unwrap();
        assert!(results.iter().all(Result::is_ok), "a writer failed");
        reads
    });
    let last = FilesystemStore::new(dir.path())
        .unwrap()
        .get(&key)
        .unwrap()
        .unwrap();
    assert!(is_whole(&last));
    let written: Vec<u8> = (0..THREADS)
        .flat_map(|t| (0..WRITES).map(move |n| value(t, n)[0]))
        .collect();
    assert!(written.contains(&last[0]));
    // no temporary file is left
    let names: Vec<String> = std::fs::read_dir(dir.path().join("a/c"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["0".to_owned()], "{reads} reads");
}
