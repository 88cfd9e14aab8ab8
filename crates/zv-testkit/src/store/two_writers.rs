//! Conditional creation seen by two clients of one store (two processes, two machines): the
//! check every shared store (object stores) must pass for a commit protocol that lets only
//! one writer create the root document.

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_core::store::{Store, StoreError};

/// `first` and `second` are two handles on the same location. Of two conditional creates of
/// one key (`Store::set_new`), the first succeeds and the second is refused with
/// [`StoreError::AlreadyExists`] naming the key, changing nothing; an unconditional `set`
/// still replaces the value (the pyramid builder's root update). Panics on any difference.
pub fn check_two_writers_create(first: &dyn Store, second: &dyn Store) {
    let key = StoreKey::new("zarr.json").unwrap_or_else(|e| panic!("{e}"));
    let get = |s: &dyn Store| s.get(&key).unwrap_or_else(|e| panic!("get: {e}"));
    first
        .set_new(&key, Bytes::from_static(b"first"))
        .unwrap_or_else(|e| panic!("the first create: {e}"));
    match second.set_new(&key, Bytes::from_static(b"second")) {
        Err(StoreError::AlreadyExists { key }) if key == "zarr.json" => {}
        other => panic!("the second create: {other:?}"),
    }
    assert_eq!(
        get(second).as_deref(),
        Some(&b"first"[..]),
        "the refused create changed nothing"
    );
    second
        .set(&key, Bytes::from_static(b"third"))
        .unwrap_or_else(|e| panic!("set: {e}"));
    assert_eq!(get(first).as_deref(), Some(&b"third"[..]));
}
