//! [`MeteredStore`]: a store wrapper that counts what passes through it — read requests, bytes
//! read, listings and writes — for benchmarks and for users who want to know what a query
//! costs (e.g. how many bytes a box query at a coarse pyramid level reads compared with
//! level 0). Counting is a few relaxed atomic additions per request.
//!
//! ```
//! use std::sync::Arc;
//! use zv_core::key::StoreKey;
//! use zv_core::metered::MeteredStore;
//! use zv_core::store::{ReadableStore, Store, WritableStore};
//! # #[derive(Debug, Default)]
//! # struct One(std::sync::Mutex<Option<bytes::Bytes>>);
//! # impl ReadableStore for One {
//! #     fn get(&self, _: &StoreKey) -> zv_core::store::StoreResult<Option<bytes::Bytes>> {
//! #         Ok(self.0.lock().unwrap().clone())
//! #     }
//! # }
//! # impl WritableStore for One {
//! #     fn set(&self, _: &StoreKey, v: bytes::Bytes) -> zv_core::store::StoreResult<()> {
//! #         *self.0.lock().unwrap() = Some(v); Ok(())
//! #     }
//! #     fn delete(&self, _: &StoreKey) -> zv_core::store::StoreResult<()> { Ok(()) }
//! # }
//! # impl zv_core::store::ListableStore for One {
//! #     fn list_prefix(&self, _: &zv_core::key::StorePrefix)
//! #         -> zv_core::store::StoreResult<Vec<StoreKey>> { Ok(vec![]) }
//! # }
//! # impl Store for One {}
//! let metered = MeteredStore::new(Arc::new(One::default()));
//! let key = StoreKey::new("a/c/0").unwrap();
//! metered.set(&key, bytes::Bytes::from_static(b"abcd")).unwrap();
//! metered.get(&key).unwrap();
//! let m = metered.meter();
//! assert_eq!((m.reads, m.bytes_read, m.writes, m.bytes_written), (1, 4, 1, 4));
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use crate::key::{StoreKey, StorePrefix};
use crate::store::{
    ByteRange, ListableStore, ReadableStore, Store, StoreKeysPrefixes, StoreResult, WritableStore,
};

/// What a [`MeteredStore`] has counted since it was made or last reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meter {
    /// Read requests (`get`, `get_range`, `get_capped`, `size`, `exists`), found or not.
    pub reads: u64,
    /// Bytes of the values (or ranges) returned by those requests.
    pub bytes_read: u64,
    /// Listings (`list_prefix`, `list_dir`).
    pub listings: u64,
    /// Writes (`set`, `set_new`) and deletions.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

#[derive(Debug, Default)]
struct Counters {
    reads: AtomicU64,
    bytes_read: AtomicU64,
    listings: AtomicU64,
    writes: AtomicU64,
    bytes_written: AtomicU64,
}

/// A store that forwards every call to another and counts it (see the [module docs](self)).
#[derive(Debug)]
pub struct MeteredStore {
    inner: Arc<dyn Store>,
    counters: Counters,
}

impl MeteredStore {
    /// Wraps `inner`, with every count at zero.
    pub fn new(inner: Arc<dyn Store>) -> Self {
        Self {
            inner,
            counters: Counters::default(),
        }
    }

    /// The counts so far.
    pub fn meter(&self) -> Meter {
        let c = &self.counters;
        Meter {
            reads: c.reads.load(Ordering::Relaxed),
            bytes_read: c.bytes_read.load(Ordering::Relaxed),
            listings: c.listings.load(Ordering::Relaxed),
            writes: c.writes.load(Ordering::Relaxed),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
        }
    }

    /// Sets every count back to zero.
    pub fn reset(&self) {
        let c = &self.counters;
        for a in [
            &c.reads,
            &c.bytes_read,
            &c.listings,
            &c.writes,
            &c.bytes_written,
        ] {
            a.store(0, Ordering::Relaxed);
        }
    }

    fn read(&self, value: StoreResult<Option<Bytes>>) -> StoreResult<Option<Bytes>> {
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        if let Ok(Some(v)) = &value {
            self.counters
                .bytes_read
                .fetch_add(v.len() as u64, Ordering::Relaxed);
        }
        value
    }

    fn write(&self, bytes: usize) {
        self.counters.writes.fetch_add(1, Ordering::Relaxed);
        self.counters
            .bytes_written
            .fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

impl ReadableStore for MeteredStore {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        self.read(self.inner.get(key))
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        self.read(self.inner.get_range(key, range))
    }

    fn get_capped(&self, key: &StoreKey, max: u64) -> StoreResult<Option<Bytes>> {
        self.read(self.inner.get_capped(key, max))
    }

    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.size(key)
    }

    fn exists(&self, key: &StoreKey) -> StoreResult<bool> {
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.exists(key)
    }

    fn concurrency(&self) -> usize {
        self.inner.concurrency()
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }
}

impl WritableStore for MeteredStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.write(value.len());
        self.inner.set(key, value)
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        self.write(0);
        self.inner.delete(key)
    }

    fn sync(&self) -> StoreResult<()> {
        self.inner.sync()
    }
}

impl ListableStore for MeteredStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        self.counters.listings.fetch_add(1, Ordering::Relaxed);
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        self.counters.listings.fetch_add(1, Ordering::Relaxed);
        self.inner.list_dir(prefix)
    }
}

impl Store for MeteredStore {
    fn set_new(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.write(value.len());
        self.inner.set_new(key, value)
    }

    fn delete_prefix(&self, prefix: &StorePrefix) -> StoreResult<()> {
        self.write(0);
        self.inner.delete_prefix(prefix)
    }
}
