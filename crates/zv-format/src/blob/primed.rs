//! Byte ranges read ahead of their use: the shard indices of arrays laid out like one whose
//! layout is known, on stores whose requests wait on a network.
//!
//! A box query on a sharded ZV 0.9 level reads, for every array it needs (vertices, the
//! vertex attributes asked, the fragment index), the array's document, then the indices of
//! the shards the box touches, then the cells. The vertices' document is read when the level
//! opens ([`super::early`]); an attribute's is not, so its chain was one round trip longer:
//! document, index, cells. zv writes every per-chunk array of a level on one grid with one
//! shard shape and one codec chain, so the attribute's shard indices are, almost always,
//! the same byte ranges (the chain's
//! [`first_partial_read`](zv_core::codec::CodecChain::first_partial_read)) of the same
//! shard keys under the attribute's path. The query reads those ranges together with the
//! attribute's document ([`Blobs::prime`]), and the attribute's partial reads take them from
//! here: the attribute's cells then come in the same round trip as the vertices'.
//!
//! Nothing is guessed about the bytes: an entry is served only to a read of exactly its key
//! and range, which is what that read would have fetched (as with any cache, a value replaced
//! between the two reads is seen as it was). An attribute laid out otherwise simply reads
//! its own ranges; the requests read ahead are then wasted, nothing else. Each entry is served
//! once and removed; the query removes what it did not use ([`Blobs::unprime`]). A failed read
//! ahead is not kept, so the read itself reports the failure. A query reads at most
//! [`PRIME_BUDGET`] bytes ahead (else nothing: a box over that many shards is bound by its
//! bytes, not its round trips). Local stores read nothing ahead.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rayon::prelude::*;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::store::{
    ByteRange, ListableStore, ReadableStore, Store, StoreKeysPrefixes, StoreResult, WritableStore,
};

use super::{Blobs, GridArray};
use crate::metadata::ChunkKey;

/// The most bytes a query reads ahead ([`Blobs::may_prime`]): 2,048 indices of shards of
/// 10^3 cells.
pub(crate) const PRIME_BUDGET: u64 = 32 << 20;

/// A range read ahead and its value (`None`: the key has no value).
type Entry = (ByteRange, Option<Bytes>);

/// The ranges read ahead, by key.
#[derive(Debug, Default)]
pub(crate) struct PrimedRanges(Mutex<HashMap<StoreKey, Vec<Entry>>>);

impl PrimedRanges {
    /// Keeps `value` for a read of `range` of `key`.
    fn insert(&self, key: StoreKey, range: ByteRange, value: Option<Bytes>) {
        if let Ok(mut m) = self.0.lock() {
            m.entry(key).or_default().push((range, value));
        }
    }

    /// The value kept for `range` of `key`, removed (`None` when there is none).
    fn take(&self, key: &StoreKey, range: ByteRange) -> Option<Option<Bytes>> {
        let mut m = self.0.lock().ok()?;
        let ranges = m.get_mut(key)?;
        let i = ranges.iter().position(|(r, _)| *r == range)?;
        let (_, value) = ranges.swap_remove(i);
        if ranges.is_empty() {
            m.remove(key);
        }
        Some(value)
    }

    /// Forgets `range` of each of `keys`.
    fn forget(&self, keys: &[(StoreKey, ByteRange)]) {
        if let Ok(mut m) = self.0.lock() {
            for (key, range) in keys {
                if let Some(ranges) = m.get_mut(key) {
                    ranges.retain(|(r, _)| r != range);
                    if ranges.is_empty() {
                        m.remove(key);
                    }
                }
            }
        }
    }

    /// How many ranges are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0
            .lock()
            .map(|m| m.values().map(Vec::len).sum())
            .unwrap_or(0)
    }
}

/// A store that serves the ranges of a [`PrimedRanges`] to the reads asking exactly for them,
/// and passes everything else to the store it wraps.
#[derive(Debug)]
pub(crate) struct Primed {
    inner: Arc<dyn Store>,
    ranges: Arc<PrimedRanges>,
}

impl Primed {
    /// `inner`, serving `ranges` first.
    pub(crate) fn new(inner: Arc<dyn Store>, ranges: Arc<PrimedRanges>) -> Self {
        Self { inner, ranges }
    }
}

impl ReadableStore for Primed {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        self.inner.get(key)
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        match self.ranges.take(key, range) {
            Some(value) => Ok(value),
            None => self.inner.get_range(key, range),
        }
    }

    fn get_capped(&self, key: &StoreKey, max: u64) -> StoreResult<Option<Bytes>> {
        self.inner.get_capped(key, max)
    }

    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        self.inner.size(key)
    }

    fn exists(&self, key: &StoreKey) -> StoreResult<bool> {
        self.inner.exists(key)
    }

    fn concurrency(&self) -> usize {
        self.inner.concurrency()
    }

    fn coalesce_gap(&self) -> u64 {
        self.inner.coalesce_gap()
    }
}

impl WritableStore for Primed {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.inner.set(key, value)
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        self.inner.delete(key)
    }

    fn sync(&self) -> StoreResult<()> {
        self.inner.sync()
    }
}

impl ListableStore for Primed {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        self.inner.list_prefix(prefix)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        self.inner.list_dir(prefix)
    }
}

impl Store for Primed {
    fn set_new(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.inner.set_new(key, value)
    }

    fn delete_prefix(&self, prefix: &StorePrefix) -> StoreResult<()> {
        self.inner.delete_prefix(prefix)
    }
}

impl Blobs {
    /// Whether this store reads ranges ahead: it wants more than one request in flight (an
    /// object store). The grid arrays of such a store read through [`Primed`].
    pub(super) fn primes(&self) -> bool {
        self.store.concurrency() > 1
    }

    /// Reads `reads` (key and range) in parallel and keeps each value for the one read of
    /// exactly that key and range by a grid array of this store (module doc). A failed read is
    /// not kept. Nothing is read on a store that does not read ahead.
    pub(crate) fn prime(&self, reads: &[(StoreKey, ByteRange)]) {
        if !self.primes() {
            return;
        }
        reads.par_iter().for_each(|(key, range)| {
            if let Ok(value) = self.store.get_range(key, *range) {
                self.primed.insert(key.clone(), *range, value);
            }
        });
    }

    /// The ranges to read ahead for the grid array at `path` (not opened yet) before a
    /// prefetch of chunks `keys`, guessed from `model`, an open array of the same level: its
    /// shard index reads ([`GridArray::shard_index_reads`]) below `path`. Empty where nothing
    /// is read ahead, or the array at `path` is open already (its own reads then go with the
    /// model's).
    pub(crate) fn index_guesses(
        &self,
        model: &GridArray,
        path: &str,
        keys: &[ChunkKey],
    ) -> Vec<(StoreKey, ByteRange)> {
        let Ok(node) = super::node_path(path) else {
            return Vec::new();
        };
        let open = self.grids.lock().map_or(true, |m| m.contains_key(&node));
        if !self.primes() || open {
            return Vec::new();
        }
        model
            .shard_index_reads(keys)
            .into_iter()
            .filter_map(|(below, range)| Some((node.key(&below).ok()?, range)))
            .collect()
    }

    /// Whether the ranges of `guesses` may be read ahead: each has a known length and
    /// together they hold at most [`PRIME_BUDGET`] bytes. (The ranges of one array are held
    /// until its own prefetch takes them; a box over many shards is bound by bytes, not round
    /// trips, and reads its indices as it goes.)
    pub(crate) fn may_prime(guesses: &[(StoreKey, ByteRange)]) -> bool {
        let mut total = 0u64;
        for (_, range) in guesses {
            let n = match *range {
                ByteRange::Suffix(n) => n,
                ByteRange::FromStart {
                    length: Some(n), ..
                } => n,
                ByteRange::FromStart { length: None, .. } => return false,
            };
            total = total.saturating_add(n);
        }
        total <= PRIME_BUDGET
    }

    /// Forgets the ranges of `reads` that no read took.
    pub(crate) fn unprime(&self, reads: &[(StoreKey, ByteRange)]) {
        if !reads.is_empty() {
            self.primed.forget(reads);
        }
    }

    /// The store a grid array of this store reads through: [`Primed`] where ranges are read
    /// ahead, else the store itself.
    pub(super) fn grid_store(&self) -> Arc<dyn Store> {
        if self.primes() {
            Arc::new(Primed::new(self.store.clone(), self.primed.clone()))
        } else {
            self.store.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> StoreKey {
        StoreKey::new(s).expect("a key")
    }

    #[test]
    fn a_primed_range_is_served_once_and_only_to_its_read() {
        let inner = Arc::new(zv_store_mem::MemoryStore::new());
        inner
            .set(&key("a/c/0"), Bytes::from_static(b"0123456789"))
            .expect("set");
        let ranges = Arc::new(PrimedRanges::default());
        let primed = Primed::new(inner.clone(), ranges.clone());
        // a value unlike the stored one shows which read served it
        ranges.insert(
            key("a/c/0"),
            ByteRange::Suffix(4),
            Some(Bytes::from_static(b"abcd")),
        );
        ranges.insert(key("a/c/1"), ByteRange::Suffix(4), None);
        // another range of the key: the store
        let other = primed
            .get_range(&key("a/c/0"), ByteRange::Suffix(3))
            .expect("read");
        assert_eq!(other.as_deref(), Some(&b"789"[..]));
        let got = primed
            .get_range(&key("a/c/0"), ByteRange::Suffix(4))
            .expect("read");
        assert_eq!(got.as_deref(), Some(&b"abcd"[..]));
        // served once: the second read goes to the store
        let again = primed
            .get_range(&key("a/c/0"), ByteRange::Suffix(4))
            .expect("read");
        assert_eq!(again.as_deref(), Some(&b"6789"[..]));
        // an absent key read ahead is absent
        assert_eq!(
            primed
                .get_range(&key("a/c/1"), ByteRange::Suffix(4))
                .expect("read"),
            None
        );
        assert_eq!(ranges.len(), 0);
        // whole reads are never served from the ranges
        ranges.insert(
            key("a/c/0"),
            ByteRange::Suffix(10),
            Some(Bytes::from_static(b"x")),
        );
        assert_eq!(
            primed.get(&key("a/c/0")).expect("read").as_deref(),
            Some(&b"0123456789"[..])
        );
        ranges.forget(&[(key("a/c/0"), ByteRange::Suffix(10))]);
        assert_eq!(ranges.len(), 0);
        assert_eq!(primed.concurrency(), inner.concurrency());
    }

    #[test]
    fn read_ahead_is_bounded() {
        let index = |i: u64, n: u64| (key(&format!("a/c/{i}")), ByteRange::Suffix(n));
        assert!(Blobs::may_prime(&[]));
        let fits: Vec<_> = (0..2048).map(|i| index(i, 16_004)).collect();
        assert!(Blobs::may_prime(&fits));
        let over: Vec<_> = (0..2048).map(|i| index(i, 16_388)).collect();
        assert!(!Blobs::may_prime(&over));
        assert!(!Blobs::may_prime(&[index(0, u64::MAX), index(1, u64::MAX)]));
        let open = (
            key("a/c/0"),
            ByteRange::FromStart {
                offset: 0,
                length: None,
            },
        );
        assert!(!Blobs::may_prime(&[open]));
        let start = (
            key("a/c/0"),
            ByteRange::FromStart {
                offset: 0,
                length: Some(48),
            },
        );
        assert!(Blobs::may_prime(&[start]));
    }
}
