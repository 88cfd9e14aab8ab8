//! The read side of the store suite, for stores that cannot write (a plain HTTP server):
//! a known set of values is put where the store reads from (a directory the server serves),
//! and every read of the store must agree with it.

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_core::store::{ByteRange, Store, StoreError};

/// The values of the read-only check: keys of the suite's hierarchy (no key is a prefix
/// "directory" of another) with sizes 0, 1, a few dozen and a few thousand bytes, of
/// deterministic pseudo-random content.
pub fn sample_values() -> BTreeMap<String, Vec<u8>> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let sizes = [0usize, 1, 2, 63, 64, 1000, 4096];
    let mut out = BTreeMap::new();
    let keys = [
        "zarr.json",
        "a/x",
        "a/zarr.json",
        "a/b/0",
        "a/b/-1.0.2",
        "b/c/y",
        "b/c/zarr.json",
        "c/d/0",
    ];
    for (i, key) in keys.iter().enumerate() {
        let size = sizes[i % sizes.len()];
        let value: Vec<u8> = (0..size).map(|_| next() as u8).collect();
        out.insert((*key).to_owned(), value);
    }
    out
}

/// Keys of the hierarchy that [`sample_values`] does not hold.
fn missing_keys() -> Vec<&'static str> {
    vec!["x", "a/y", "a/b/x", "b/zarr.json", "c/d/-1.0.2", "d/0"]
}

/// Writes `values` as files under `dir` (key `a/b` → `dir/a/b`).
pub fn write_values(dir: &Path, values: &BTreeMap<String, Vec<u8>>) {
    for (key, value) in values {
        let path = dir.join(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, value).unwrap();
    }
}

/// The ranges checked for a value of `len` bytes: inside, at and past both ends, empty.
fn ranges(len: u64) -> Vec<ByteRange> {
    let from = |offset, length| ByteRange::FromStart { offset, length };
    let mut out = vec![
        from(0, None),
        from(0, Some(0)),
        from(0, Some(len)),
        from(0, Some(len + 1)),
        from(len, None),
        from(len, Some(0)),
        from(len, Some(1)),
        from(len + 1, None),
        from(u64::MAX, Some(2)),
        ByteRange::Suffix(0),
        ByteRange::Suffix(len),
        ByteRange::Suffix(len + 1),
    ];
    if len >= 3 {
        out.extend([
            from(1, Some(2)),
            from(len - 1, None),
            from(len - 2, Some(1)),
            from(len - 1, Some(2)),
            ByteRange::Suffix(1),
            ByteRange::Suffix(len - 1),
        ]);
    }
    out
}

/// Checks a read-only store holding exactly `values`: the reads of [`check_reads`], and `set`
/// and `delete` are refused without changing anything. Panics with a description of the
/// first disagreement.
pub fn check_read_only_store(name: &str, store: &dyn Store, values: &BTreeMap<String, Vec<u8>>) {
    check_reads(name, store, values);
    for (k, v) in values {
        let key = StoreKey::new(k.clone()).unwrap();
        assert!(
            store.set(&key, Bytes::from_static(b"new")).is_err(),
            "{name}: set {k} must be refused"
        );
        assert!(
            store.delete(&key).is_err(),
            "{name}: delete {k} must be refused"
        );
        assert_eq!(
            store.get(&key).unwrap().as_deref(),
            Some(&v[..]),
            "{name}: {k} changed by a refused write"
        );
    }
}

/// Checks the reads of a store holding `values` (put there by another client): `get`,
/// `get_capped`, every kind of byte range (ranges that do not fit are errors), `size` and
/// `exists` agree with them, and the keys of the hierarchy it does not hold read as missing.
/// Panics with a description of the first disagreement.
pub fn check_reads(name: &str, store: &dyn Store, values: &BTreeMap<String, Vec<u8>>) {
    for (k, v) in values {
        let key = StoreKey::new(k.clone()).unwrap();
        let len = v.len() as u64;
        let got = store
            .get(&key)
            .unwrap_or_else(|e| panic!("{name}: get {k}: {e}"));
        assert_eq!(got.as_deref(), Some(&v[..]), "{name}: get {k}");
        assert_eq!(store.size(&key).unwrap(), Some(len), "{name}: size {k}");
        assert!(store.exists(&key).unwrap(), "{name}: exists {k}");
        let capped = store.get_capped(&key, len).unwrap();
        assert_eq!(capped.as_deref(), Some(&v[..]), "{name}: get_capped {k}");
        if len > 0 {
            assert!(
                matches!(
                    store.get_capped(&key, len - 1),
                    Err(StoreError::TooLarge { .. })
                ),
                "{name}: get_capped {k} below its size must be TooLarge"
            );
        }
        for r in ranges(len) {
            let got = store.get_range(&key, r);
            match (r.to_range(len), got) {
                (Some(want), Ok(Some(b))) => assert_eq!(
                    &b[..],
                    &v[want.start as usize..want.end as usize],
                    "{name}: get_range {k} {r:?}"
                ),
                (None, Err(_)) => {}
                (want, got) => panic!(
                    "{name}: get_range {k} {r:?} of {len} bytes: expected {want:?}, got {:?}",
                    got.map(|b| b.map(|b| b.len()))
                ),
            }
        }
    }
    for k in missing_keys() {
        assert!(!values.contains_key(k), "{k} is in the sample");
        let key = StoreKey::new(k).unwrap();
        assert_eq!(store.get(&key).unwrap(), None, "{name}: get missing {k}");
        assert_eq!(store.size(&key).unwrap(), None, "{name}: size missing {k}");
        assert!(!store.exists(&key).unwrap(), "{name}: exists missing {k}");
        assert_eq!(
            store.get_range(&key, ByteRange::Suffix(1)).unwrap(),
            None,
            "{name}: get_range missing {k}"
        );
    }
}
