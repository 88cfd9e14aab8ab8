//! The store root is a boundary and only regular files are values: symbolic links that leave
//! the root, FIFOs, sockets and devices are errors naming the key (never a hang, never an endless
//! read); links inside the root work for every operation alike; reads can be capped; `sync`
//! works under every durability; a root replaced under a live store is read anew.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{ByteRange, ListableStore, ReadableStore, StoreError, WritableStore};
use zv_store_fs::{Durability, FilesystemStore, SymlinkPolicy};

fn key(s: &str) -> StoreKey {
    StoreKey::new(s).unwrap()
}

fn keys(store: &FilesystemStore) -> Vec<String> {
    store
        .list()
        .unwrap()
        .iter()
        .map(|k| k.to_string())
        .collect()
}

fn assert_not_a_value(r: Result<impl std::fmt::Debug, StoreError>, k: &str, what: &str) {
    match r {
        Err(StoreError::NotAValue { key, reason }) => {
            assert_eq!(key, k);
            assert!(reason.contains(what), "{reason}");
        }
        other => panic!("expected NotAValue for {k}, got {other:?}"),
    }
}

/// Every read operation on `k` refuses it the same way.
fn assert_refused_everywhere(store: &FilesystemStore, k: &str, what: &str) {
    let kk = key(k);
    assert_not_a_value(store.get(&kk), k, what);
    assert_not_a_value(store.get_capped(&kk, 1 << 20), k, what);
    assert_not_a_value(store.get_range(&kk, ByteRange::Suffix(1)), k, what);
    assert_not_a_value(store.size(&kk), k, what);
    assert_not_a_value(store.exists(&kk), k, what);
}

fn make_fifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_fifo_in_place_of_a_value_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    store.set(&key("a/c/0"), Bytes::from_static(b"x")).unwrap();
    std::fs::remove_file(dir.path().join("a/c/0")).unwrap();
    make_fifo(&dir.path().join("a/c/0"));
    let start = Instant::now();
    assert_refused_everywhere(&store, "a/c/0", "FIFO");
    assert!(start.elapsed() < Duration::from_secs(30), "a read blocked");
    // it is still listed, so a reader that lists then reads reports it
    assert_eq!(keys(&store), vec!["a/c/0"]);
}

#[test]
fn a_socket_in_place_of_a_value_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    store.set(&key("a/c/0"), Bytes::from_static(b"x")).unwrap();
    std::fs::remove_file(dir.path().join("a/c/0")).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("a/c/0")).unwrap();
    assert_refused_everywhere(&store, "a/c/0", "socket");
    // with links followed too
    let follow = FilesystemStore::new(dir.path())
        .unwrap()
        .with_symlinks(SymlinkPolicy::Follow);
    assert_refused_everywhere(&follow, "a/c/0", "socket");
}

#[test]
fn devices_are_refused_even_through_links_inside_policy_follow() {
    let dir = tempfile::tempdir().unwrap();
    symlink("/dev/zero", dir.path().join("zero")).unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    // the default policy stops it at the root
    assert_refused_everywhere(&store, "zero", "leaves the store root");
    // a store that follows links still refuses a device: no endless read
    let follow = FilesystemStore::new(dir.path())
        .unwrap()
        .with_symlinks(SymlinkPolicy::Follow);
    assert_refused_everywhere(&follow, "zero", "character device");
}

#[test]
fn links_leaving_the_root_are_refused_for_files_metadata_and_directories() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("passwd"), b"root:x:0:0").unwrap();
    std::fs::create_dir(outside.path().join("arr")).unwrap();
    std::fs::write(outside.path().join("arr").join("zarr.json"), b"{}").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    store
        .set(&key("g/zarr.json"), Bytes::from_static(b"{}"))
        .unwrap();
    symlink(outside.path().join("passwd"), dir.path().join("g/c0")).unwrap();
    symlink(
        "../../../../../../../../etc/passwd",
        dir.path().join("g/rel"),
    )
    .unwrap();
    symlink(outside.path().join("arr"), dir.path().join("g/arr")).unwrap();
    assert_refused_everywhere(&store, "g/c0", "leaves the store root");
    assert_refused_everywhere(&store, "g/rel", "leaves the store root");
    // a directory outside, named directly or listed: the same answer
    assert_refused_everywhere(&store, "g/arr/zarr.json", "leaves the store root");
    let listed = keys(&store);
    assert!(
        !listed.iter().any(|k| k.starts_with("g/arr/")),
        "{listed:?}"
    );
    let below = store.list_dir(&StorePrefix::new("g/").unwrap()).unwrap();
    assert!(below.prefixes.is_empty(), "{below:?}");
    // writing through the outside directory is refused and writes nothing outside
    assert!(store
        .set(&key("g/arr/c/0"), Bytes::from_static(b"bad"))
        .is_err());
    assert!(!outside.path().join("arr").join("c").exists());
    // with Follow the links are trusted
    let follow = FilesystemStore::new(dir.path())
        .unwrap()
        .with_symlinks(SymlinkPolicy::Follow);
    assert_eq!(
        follow.get(&key("g/c0")).unwrap().as_deref(),
        Some(&b"root:x:0:0"[..])
    );
    assert!(keys(&follow).contains(&"g/arr/zarr.json".to_owned()));
}

#[test]
fn links_inside_the_root_work_for_every_operation_and_loops_end() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    store
        .set(&key("data/a/c/0"), Bytes::from_static(b"abc"))
        .unwrap();
    symlink("data/a", dir.path().join("alias")).unwrap();
    symlink("../..", dir.path().join("data/a/up")).unwrap(); // a loop back to the root
    assert_eq!(
        store.get(&key("alias/c/0")).unwrap().as_deref(),
        Some(&b"abc"[..])
    );
    assert_eq!(store.size(&key("alias/c/0")).unwrap(), Some(3));
    let listed = keys(&store);
    assert!(listed.contains(&"alias/c/0".to_owned()), "{listed:?}");
    assert!(listed.contains(&"data/a/c/0".to_owned()), "{listed:?}");
    assert!(listed.len() < 10, "the loop was followed: {listed:?}");
    store
        .set(&key("alias/c/1"), Bytes::from_static(b"d"))
        .unwrap();
    assert!(dir.path().join("data/a/c/1").is_file());
}

#[test]
fn capped_reads_refuse_large_values_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    store.set(&key("v"), Bytes::from(vec![7u8; 1000])).unwrap();
    assert_eq!(
        store.get_capped(&key("v"), 1000).unwrap().unwrap().len(),
        1000
    );
    match store.get_capped(&key("v"), 999) {
        Err(StoreError::TooLarge { key, size, max }) => {
            assert_eq!((key.as_str(), size, max), ("v", 1000, 999));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.get_capped(&key("missing"), 0).unwrap(), None);
}

#[test]
fn sync_and_directory_reuse_under_every_durability() {
    for durability in [
        Durability::None,
        Durability::Commit,
        Durability::Metadata,
        Durability::All,
    ] {
        let dir = tempfile::tempdir().unwrap();
        let store = FilesystemStore::new(dir.path().join("s"))
            .unwrap()
            .with_durability(durability);
        store.sync().unwrap(); // before the root exists
        for i in 0..20 {
            let k = key(&format!("a/b/{i}/zarr.json"));
            store.set(&k, Bytes::from(vec![i as u8; 3])).unwrap();
        }
        store.sync().unwrap();
        // a delete prunes directories the store remembered; writing there again works
        for i in 0..20 {
            store.delete(&key(&format!("a/b/{i}/zarr.json"))).unwrap();
        }
        assert!(!dir.path().join("s/a").exists());
        store
            .set(&key("a/b/3/zarr.json"), Bytes::from_static(b"x"))
            .unwrap();
        assert_eq!(keys(&store), vec!["a/b/3/zarr.json"], "{durability:?}");
        std::fs::remove_dir_all(dir.path().join("s")).unwrap();
        store
            .set(&key("a/b/3/zarr.json"), Bytes::from_static(b"y"))
            .unwrap();
        assert_eq!(
            store.get(&key("a/b/3/zarr.json")).unwrap().as_deref(),
            Some(&b"y"[..])
        );
    }
}

#[test]
fn failed_writes_leave_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    // the target is a non-empty directory: the rename fails after the temporary file is written
    store.set(&key("a/b/c"), Bytes::from_static(b"x")).unwrap();
    assert!(store
        .set(&key("a/b"), Bytes::from(vec![1u8; 4096]))
        .is_err());
    let entries: Vec<String> = std::fs::read_dir(dir.path().join("a"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries, vec!["b"], "temporary files left behind");
    assert_eq!(keys(&store), vec!["a/b/c"]);
}

/// Renames elsewhere on the machine race with the kernel's `..` checks (it answers `EAGAIN`);
/// the answer for a link leaving the root must stay the same while they happen.
#[test]
fn links_leaving_the_root_are_refused_while_renames_race() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let store = FilesystemStore::new(dir.path()).unwrap();
    store
        .set(&key("g/zarr.json"), Bytes::from_static(b"{}"))
        .unwrap();
    symlink("../../../../../../../etc/passwd", dir.path().join("g/rel")).unwrap();
    let busy = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let renames = Arc::new(AtomicU64::new(0));
    let renamer = {
        let (stop, renames) = (Arc::clone(&stop), Arc::clone(&renames));
        let (a, b) = (busy.path().join("a"), busy.path().join("b"));
        std::fs::write(&a, b"x").unwrap();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let (from, to) = if n % 2 == 0 { (&a, &b) } else { (&b, &a) };
                std::fs::rename(from, to).unwrap();
                n += 1;
                renames.store(n, Ordering::Relaxed);
            }
        })
    };
    // reads while the renames run: at least 2000, and until 1000 renames raced with them
    let mut reads = 0;
    while reads < 2000 || renames.load(Ordering::Relaxed) < 1000 {
        assert_not_a_value(store.get(&key("g/rel")), "g/rel", "leaves the store root");
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    renamer.join().unwrap();
}

#[test]
fn a_root_replaced_under_a_live_store_is_read_anew() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("s.zarr");
    let store = FilesystemStore::new(&root).unwrap();
    // no root yet: a missing key, then the root appears
    assert!(store.get(&key("a/zarr.json")).unwrap().is_none());
    store
        .set(&key("a/zarr.json"), Bytes::from_static(b"one"))
        .unwrap();
    assert_eq!(store.get(&key("a/zarr.json")).unwrap().unwrap(), "one");
    // the root deleted and written anew by someone else: the new tree is read
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::create_dir_all(root.join("a")).unwrap();
    std::fs::write(root.join("a/zarr.json"), b"two").unwrap();
    assert_eq!(store.get(&key("a/zarr.json")).unwrap().unwrap(), "two");
    // replaced by a shadow's exchange (the old tree removed): the new tree is read
    let shadow = zv_store_fs::Shadow::create(&root).unwrap();
    std::fs::write(shadow.path().join("a/zarr.json.new"), b"three").unwrap();
    std::fs::rename(
        shadow.path().join("a/zarr.json.new"),
        shadow.path().join("a/zarr.json"),
    )
    .unwrap();
    std::fs::write(shadow.path().join("b"), b"four").unwrap();
    shadow.publish().unwrap();
    assert_eq!(store.get(&key("a/zarr.json")).unwrap().unwrap(), "three");
    assert_eq!(store.get(&key("b")).unwrap().unwrap(), "four");
}
