//! # zv-store-mem — an in-memory store
//!
//! [`MemoryStore`] keeps values in a `BTreeMap` behind a read-write lock: thread-safe, with
//! the same semantics as every zv store (see [`zv_core::store`]). It registers the URL scheme
//! `memory`: `memory://NAME` opens the process-wide store called `NAME` (created empty on
//! first use), so that several parts of a program can share it by name.
//!
//! ```
//! use bytes::Bytes;
//! use zv_core::key::StoreKey;
//! use zv_core::store::{ReadableStore, WritableStore};
//! let store = zv_store_mem::MemoryStore::new();
//! let key = StoreKey::new("a/zarr.json")?;
//! store.set(&key, Bytes::from_static(b"{}"))?;
//! assert_eq!(store.get(&key)?.as_deref(), Some(&b"{}"[..]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::plugin::{NamedInstances, StorePlugin, StoreUrl};
use zv_core::store::{
    ListableStore, ReadableStore, Store, StoreError, StoreKeysPrefixes, StoreResult, WritableStore,
};

/// A thread-safe in-memory store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: RwLock<BTreeMap<StoreKey, Bytes>>,
}

impl MemoryStore {
    /// A new, empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<StoreKey, Bytes>> {
        // A panic while holding the lock cannot leave the map half-updated (every update is
        // one insert or remove), so a poisoned lock is still consistent.
        self.map.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<StoreKey, Bytes>> {
        self.map.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The number of stored values.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether the store is empty.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// The total size of the stored values, in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.read().values().map(|v| v.len() as u64).sum()
    }
}

fn keys_under<'a>(
    map: &'a BTreeMap<StoreKey, Bytes>,
    prefix: &'a StorePrefix,
) -> impl Iterator<Item = &'a StoreKey> + 'a {
    let start = if prefix.is_root() {
        Bound::Unbounded
    } else {
        // Keys under "a/" sort from "a/" on; StoreKey orders like its text.
        match StoreKey::new(prefix.as_str().trim_end_matches('/')) {
            Ok(k) => Bound::Excluded(k),
            Err(_) => Bound::Unbounded,
        }
    };
    map.range((start, Bound::Unbounded))
        .map(|(k, _)| k)
        .skip_while(move |k| !k.has_prefix(prefix))
        .take_while(move |k| k.has_prefix(prefix))
}

impl ReadableStore for MemoryStore {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        Ok(self.read().get(key).cloned())
    }

    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        Ok(self.read().get(key).map(|v| v.len() as u64))
    }
}

impl WritableStore for MemoryStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.write().insert(key.clone(), value);
        Ok(())
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        self.write().remove(key);
        Ok(())
    }
}

impl ListableStore for MemoryStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        let map = self.read();
        Ok(keys_under(&map, prefix).cloned().collect())
    }

    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        let map = self.read();
        let mut out = StoreKeysPrefixes::default();
        for key in keys_under(&map, prefix) {
            let rest = &key.as_str()[prefix.as_str().len()..];
            match rest.find('/') {
                None => out.keys.push(key.clone()),
                Some(i) => {
                    let child = prefix.child(&rest[..i])?;
                    if !out.prefixes.contains(&child) {
                        out.prefixes.push(child);
                    }
                }
            }
        }
        out.prefixes.sort();
        Ok(out)
    }
}

impl Store for MemoryStore {
    fn set_new(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        match self.write().entry(key.clone()) {
            std::collections::btree_map::Entry::Occupied(_) => Err(StoreError::AlreadyExists {
                key: key.to_string(),
            }),
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(value);
                Ok(())
            }
        }
    }

    fn delete_prefix(&self, prefix: &StorePrefix) -> StoreResult<()> {
        self.write().retain(|k, _| !k.has_prefix(prefix));
        Ok(())
    }
}

static NAMED: NamedInstances<MemoryStore> = NamedInstances::new();

/// Opens the process-wide memory store named by the URL (`memory://NAME`).
pub fn open_named(url: &StoreUrl) -> Result<Arc<dyn Store>, StoreError> {
    let store: Arc<dyn Store> = NAMED.get_or_insert_with(&url.location, MemoryStore::new);
    Ok(store)
}

/// Does nothing; calling it makes sure this crate (and its registration) is linked.
#[inline(never)]
pub fn link() {}

inventory::submit! {
    StorePlugin::new("memory", "in-memory store shared by name within the process (memory://NAME)", open_named)
}
