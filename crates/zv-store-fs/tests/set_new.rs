//! `set_new` creates a key atomically: of threads racing to create one key, exactly one
//! succeeds, the others get `AlreadyExists`, the key holds the winner's whole value, and no
//! temporary file is left beside it.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Barrier};

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_core::store::{ReadableStore, Store, StoreError, WritableStore};
use zv_store_fs::FilesystemStore;

#[test]
fn racing_creators_of_one_key_have_exactly_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let threads = 8;
    for round in 0..40 {
        let key = StoreKey::new(format!("r{round}/zarr.json")).unwrap();
        let barrier = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                // each thread its own handle, as separate writers would have
                let store = FilesystemStore::new(dir.path()).unwrap();
                let (key, barrier) = (key.clone(), barrier.clone());
                std::thread::spawn(move || {
                    let value = Bytes::from(vec![t as u8; 4096 + t * 1000]);
                    barrier.wait();
                    match store.set_new(&key, value) {
                        Ok(()) => Some(t),
                        Err(StoreError::AlreadyExists { key: k }) => {
                            assert_eq!(k, key.to_string());
                            None
                        }
                        Err(e) => panic!("thread {t}: {e}"),
                    }
                })
            })
            .collect();
        let winners: Vec<usize> = handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        let t = winners[0];
        let store = FilesystemStore::new(dir.path()).unwrap();
        let got = store.get(&key).unwrap().unwrap();
        assert_eq!(
            got,
            Bytes::from(vec![t as u8; 4096 + t * 1000]),
            "round {round}"
        );
        let names: Vec<String> = std::fs::read_dir(dir.path().join(format!("r{round}")))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["zarr.json".to_owned()], "round {round}");
    }
}

#[test]
fn set_new_refuses_an_existing_key_and_leaves_it_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    let key = StoreKey::new("a/b/zarr.json").unwrap();
    store.set_new(&key, Bytes::from_static(b"first")).unwrap();
    let e = store
        .set_new(&key, Bytes::from_static(b"second"))
        .unwrap_err();
    assert!(matches!(e, StoreError::AlreadyExists { .. }), "{e}");
    assert_eq!(
        store.get(&key).unwrap().unwrap(),
        Bytes::from_static(b"first")
    );
    store.set(&key, Bytes::from_static(b"third")).unwrap();
    assert_eq!(
        store.get(&key).unwrap().unwrap(),
        Bytes::from_static(b"third")
    );
    store.delete(&key).unwrap();
    store.set_new(&key, Bytes::from_static(b"again")).unwrap();
    assert_eq!(
        store.get(&key).unwrap().unwrap(),
        Bytes::from_static(b"again")
    );
}
