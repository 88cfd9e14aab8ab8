//! The memory store passes the zv-testkit store conformance suite, and `memory://` resolves.

use std::sync::Arc;

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_store_mem::MemoryStore;

#[test]
fn memory_store_conformance() {
    zv_testkit::store::check_store("memory", || Arc::new(MemoryStore::new()));
}

#[test]
fn memory_urls_share_instances_by_name() {
    zv_store_mem::link();
    let a = zv_core::plugin::open_store("memory://shared-test").unwrap();
    let b = zv_core::plugin::open_store("memory://shared-test").unwrap();
    let other = zv_core::plugin::open_store("memory://other-test").unwrap();
    let key = StoreKey::new("k").unwrap();
    a.set(&key, Bytes::from_static(b"v")).unwrap();
    assert_eq!(b.get(&key).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(other.get(&key).unwrap(), None);
}
