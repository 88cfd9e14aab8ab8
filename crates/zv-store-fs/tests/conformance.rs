//! The filesystem store passes the zv-testkit store conformance suite, writes atomically and
//! keeps keys inside its root.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{ListableStore, ReadableStore, Store, WritableStore};
use zv_store_fs::{Durability, FilesystemStore};

#[test]
fn filesystem_store_conformance() {
    let base = tempfile::tempdir().unwrap();
    let counter = std::sync::atomic::AtomicUsize::new(0);
    zv_testkit::store::check_store("filesystem", || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let store = FilesystemStore::new(base.path().join(format!("s{n}")))
            .unwrap()
            .with_durability(Durability::None);
        Arc::new(store)
    });
}

#[test]
fn keys_map_to_paths_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    let key = StoreKey::new("grp/arr/c/0/1").unwrap();
    store.set(&key, Bytes::from_static(b"xyz")).unwrap();
    let path = dir
        .path()
        .join("grp")
        .join("arr")
        .join("c")
        .join("0")
        .join("1");
    assert_eq!(std::fs::read(&path).unwrap(), b"xyz");
    // a file written by another tool is listed with its key
    std::fs::write(dir.path().join("grp").join("zarr.json"), b"{}").unwrap();
    let keys: Vec<String> = store
        .list()
        .unwrap()
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(keys, vec!["grp/arr/c/0/1", "grp/zarr.json"]);
}

#[test]
fn escaping_keys_cannot_be_built() {
    for bad in ["../x", "/etc/passwd", "a/../../x", "a\\..\\x"] {
        assert!(StoreKey::new(bad).is_err(), "{bad}");
        assert!(StorePrefix::new(format!("{bad}/")).is_err(), "{bad}");
    }
}

#[test]
fn interrupted_writes_leave_no_torn_value_and_temp_files_are_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    let key = StoreKey::new("a/zarr.json").unwrap();
    store.set(&key, Bytes::from_static(b"old")).unwrap();
    // a crashed writer leaves a temporary file behind: invisible, and the old value stands
    std::fs::write(dir.path().join("a").join(".zarr.json.zv-tmp.1.0"), b"ne").unwrap();
    assert_eq!(store.get(&key).unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(store.list().unwrap(), vec![key.clone()]);
    // a write into a directory that cannot be created fails and leaves the old value
    let blocked = StoreKey::new("a/zarr.json/x").unwrap();
    assert!(store.set(&blocked, Bytes::from_static(b"v")).is_err());
    assert_eq!(store.get(&key).unwrap().as_deref(), Some(&b"old"[..]));
    // readers racing a writer see old or new, never a mix
    let big_old = Bytes::from(vec![1u8; 1 << 20]);
    let big_new = Bytes::from(vec![2u8; 1 << 20]);
    store.set(&key, big_old.clone()).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..20 {
                store.set(&key, big_new.clone()).unwrap();
                store.set(&key, big_old.clone()).unwrap();
            }
        });
        for _ in 0..200 {
            let v = store.get(&key).unwrap().unwrap();
            assert!(v == big_old || v == big_new, "torn read");
        }
    });
}

#[test]
fn deleting_prunes_empty_directories() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    let key = StoreKey::new("a/b/c/d").unwrap();
    store.set(&key, Bytes::from_static(b"1")).unwrap();
    store.delete(&key).unwrap();
    assert!(!dir.path().join("a").exists());
    assert!(dir.path().exists());
    assert!(store
        .list_dir(&StorePrefix::root())
        .unwrap()
        .prefixes
        .is_empty());
    store.set(&key, Bytes::from_static(b"1")).unwrap();
    store
        .delete_prefix(&StorePrefix::new("a/b/").unwrap())
        .unwrap();
    assert!(!dir.path().join("a").exists());
}

#[test]
fn file_urls_and_plain_paths_open_filesystem_stores() {
    zv_store_fs::link();
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("my data");
    let url = format!("file://{}", sub.display()).replace(' ', "%20");
    let store = zv_core::plugin::open_store(&url).unwrap();
    store
        .set(&StoreKey::new("k").unwrap(), Bytes::from_static(b"v"))
        .unwrap();
    assert!(sub.join("k").is_file());
    let plain = zv_core::plugin::open_store(sub.to_str().unwrap()).unwrap();
    assert!(plain.exists(&StoreKey::new("k").unwrap()).unwrap());
    let file = dir.path().join("f");
    std::fs::write(&file, b"").unwrap();
    assert!(zv_core::plugin::open_store(file.to_str().unwrap()).is_err());
}
