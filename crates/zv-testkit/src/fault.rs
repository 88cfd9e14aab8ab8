//! Fault injection: a store wrapper whose k-th operation of one kind fails with a chosen I/O
//! error (EIO, ENOSPC, EACCES, …), for tests that every failure is an error naming the key,
//! that a failed write leaves no committed store, and that nothing panics.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{
    ByteRange, ListableStore, ReadableStore, Store, StoreError, StoreKeysPrefixes, StoreResult,
    WritableStore,
};

/// Which operations a [`FaultyStore`] counts (and fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `set` and `set_new`.
    Set,
    /// `get`, ranged `get`, capped `get` and `size`.
    Get,
    /// `list_prefix`, `list_dir`.
    List,
    /// `sync`.
    Sync,
}

/// A store that fails the `fail_at`-th (0-based) operation of one kind, and counts them.
#[derive(Debug)]
pub struct FaultyStore {
    inner: Arc<dyn Store>,
    operation: Operation,
    fail_at: usize,
    error: io::ErrorKind,
    seen: AtomicUsize,
    failed_key: Mutex<Option<String>>,
}

impl FaultyStore {
    /// Wraps `inner`; the `fail_at`-th operation of kind `operation` fails with `error`
    /// (`usize::MAX`: never, to count).
    pub fn new(
        inner: Arc<dyn Store>,
        operation: Operation,
        fail_at: usize,
        error: io::ErrorKind,
    ) -> Self {
        Self {
            inner,
            operation,
            fail_at,
            error,
            seen: AtomicUsize::new(0),
            failed_key: Mutex::new(None),
        }
    }

    /// How many operations of the counted kind were made.
    pub fn count(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }

    /// The key (or prefix) of the operation that failed, if one did.
    pub fn failed_key(&self) -> Option<String> {
        self.failed_key.lock().ok().and_then(|k| k.clone())
    }

    fn check(&self, operation: Operation, key: &str) -> StoreResult<()> {
        if operation != self.operation {
            return Ok(());
        }
        if self.seen.fetch_add(1, Ordering::SeqCst) == self.fail_at {
            if let Ok(mut k) = self.failed_key.lock() {
                *k = Some(key.to_owned());
            }
            return Err(StoreError::Io {
                key: key.to_owned(),
                source: io::Error::new(self.error, "injected fault"),
            });
        }
        Ok(())
    }
}

impl ReadableStore for FaultyStore {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        self.check(Operation::Get, key.as_str())?;
        self.inner.get(key)
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        self.check(Operation::Get, key.as_str())?;
        self.inner.get_range(key, range)
    }

    fn get_capped(&self, key: &StoreKey, max: u64) -> StoreResult<Option<Bytes>> {
        self.check(Operation::Get, key.as_str())?;
        self.inner.get_capped(key, max)
    }

    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        self.check(Operation::Get, key.as_str())?;
        self.inner.size(key)
    }

    fn concurrency(&self) -> usize {
        self.inner.concurrency()
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }
}

impl WritableStore for FaultyStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.check(Operation::Set, key.as_str())?;
        self.inner.set(key, value)
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        self.inner.delete(key)
    }

    fn sync(&self) -> StoreResult<()> {
        self.check(Operation::Sync, "")?;
        self.inner.sync()
    }
}

impl ListableStore for FaultyStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        self.check(Operation::List, prefix.as_str())?;
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        self.check(Operation::List, prefix.as_str())?;
        self.inner.list_dir(prefix)
    }
}

impl Store for FaultyStore {
    fn set_new(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.check(Operation::Set, key.as_str())?;
        self.inner.set_new(key, value)
    }

    fn delete_prefix(&self, prefix: &StorePrefix) -> StoreResult<()> {
        self.inner.delete_prefix(prefix)
    }
}

/// An output that takes `left` bytes, then fails every write ("disk full"): for tests that a
/// writer of a document (a dump, an export) gives an error, not a panic, wherever its output
/// fails.
#[derive(Debug)]
pub struct FailingOutput {
    /// Bytes still taken.
    pub left: usize,
}

impl io::Write for FailingOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Err(io::Error::other("disk full"));
        }
        let n = buf.len().min(self.left);
        self.left -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
