//! Reads made ahead of their use: the first reads of arrays laid out like one whose layout is
//! known, on stores whose requests wait on a network.
//!
//! A box query on a ZV 0.9 level reads, for every array it needs (vertices, the vertex
//! attributes asked, the fragment index), the array's document, then (sharded) the indices of
//! the shards the box touches, then the cells. The vertices' document is read when the level
//! opens ([`super::early`]); an attribute's is not, so its chain was one round trip longer
//! than the vertices': document, index, cells (unsharded: document, cells). zv writes every
//! per-chunk array of a level on one grid with one shard shape and one codec chain, so the
//! attribute's first reads are, almost always, the vertices' first reads of the same keys
//! under the attribute's path: the same byte range of each shard (the chain's
//! [`first_partial_read`](zv_core::codec::CodecChain::first_partial_read), its index), or,
//! unsharded, each wanted cell whole. The query makes those reads together with the
//! attribute's document ([`Blobs::prime`]), and the attribute's own reads take them from
//! here: the attribute's cells then come in the same round trip as the vertices'. A cold box
//! query takes 3 round trips sharded (was 4) and 2 unsharded (was 3).
//!
//! Nothing is guessed about the bytes: an entry is served only to a read of exactly its key
//! and range (a whole value to a whole read, within the reader's size cap), which is what
//! that read would have fetched (as with any cache, a value replaced between the two reads is
//! seen as it was). An attribute laid out otherwise simply makes its own reads; the requests
//! made ahead are then wasted, nothing else. Each entry is served once and removed; the query
//! removes what it did not use ([`Blobs::unprime`]). A failed read ahead is not kept, so the
//! read itself reports the failure. At most [`PRIME_BUDGET`] bytes are held (a value past it
//! is not kept and is read again when asked), and a whole value is read ahead only up to
//! that size. Local stores read nothing ahead.

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

/// The most bytes read ahead and not yet taken, per store: 2,048 indices of shards of 10^3
/// cells, or as many bytes of unsharded cells. A value past it is not kept (its own read
/// requests it again); a whole value is read ahead only up to it.
pub(crate) const PRIME_BUDGET: u64 = 32 << 20;

/// A read: a key and the range of it (`None`: the whole value).
pub(crate) type Read = (StoreKey, Option<ByteRange>);

/// A range read ahead (`None`: the whole value) and its value (`None`: the key has no value).
type Entry = (Option<ByteRange>, Option<Bytes>);

/// The ranges read ahead, by key, and their bytes.
#[derive(Debug, Default)]
pub(crate) struct PrimedRanges(Mutex<(HashMap<StoreKey, Vec<Entry>>, u64)>);

fn len_of(value: &Option<Bytes>) -> u64 {
    value.as_ref().map_or(0, |v| v.len() as u64)
}

impl PrimedRanges {
    /// Keeps `value` for a read of `range` of `key`, unless the bytes kept would pass
    /// [`PRIME_BUDGET`].
    fn insert(&self, key: StoreKey, range: Option<ByteRange>, value: Option<Bytes>) {
        if let Ok(mut guard) = self.0.lock() {
            let (m, bytes) = &mut *guard;
            let n = len_of(&value);
            if bytes.saturating_add(n) > PRIME_BUDGET {
                return;
            }
            *bytes += n;
            m.entry(key).or_default().push((range, value));
        }
    }

    /// The value kept for `range` of `key`, removed (`None` when there is none).
    fn take(&self, key: &StoreKey, range: Option<ByteRange>) -> Option<Option<Bytes>> {
        let mut guard = self.0.lock().ok()?;
        let (m, bytes) = &mut *guard;
        let ranges = m.get_mut(key)?;
        let i = ranges.iter().position(|(r, _)| *r == range)?;
        let (_, value) = ranges.swap_remove(i);
        if ranges.is_empty() {
            m.remove(key);
        }
        *bytes = bytes.saturating_sub(len_of(&value));
        Some(value)
    }

    /// Forgets each read of `reads`.
    fn forget(&self, reads: &[Read]) {
        if let Ok(mut guard) = self.0.lock() {
            let (m, bytes) = &mut *guard;
            for (key, range) in reads {
                if let Some(ranges) = m.get_mut(key) {
                    ranges.retain(|(r, v)| {
                        let keep = r != range;
                        if !keep {
                            *bytes = bytes.saturating_sub(len_of(v));
                        }
                        keep
                    });
                    if ranges.is_empty() {
                        m.remove(key);
                    }
                }
            }
        }
    }

    /// How many ranges are kept, and their bytes.
    #[cfg(test)]
    pub(crate) fn held(&self) -> (usize, u64) {
        self.0
            .lock()
            .map(|g| (g.0.values().map(Vec::len).sum(), g.1))
            .unwrap_or((0, 0))
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
        match self.ranges.take(key, None) {
            Some(value) => Ok(value),
            None => self.inner.get(key),
        }
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        match self.ranges.take(key, Some(range)) {
            Some(value) => Ok(value),
            None => self.inner.get_range(key, range),
        }
    }

    fn get_capped(&self, key: &StoreKey, max: u64) -> StoreResult<Option<Bytes>> {
        match self.ranges.take(key, None) {
            Some(value) => {
                if let Some(v) = &value {
                    zv_core::store::StoreError::check_size(key, v.len() as u64, max)?;
                }
                Ok(value)
            }
            None => self.inner.get_capped(key, max),
        }
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
    pub(crate) fn prime(&self, reads: &[Read]) {
        if !self.primes() {
            return;
        }
        reads.par_iter().for_each(|(key, range)| {
            let value = match range {
                Some(r) => self.store.get_range(key, *r),
                None => self.store.get_capped(key, PRIME_BUDGET),
            };
            if let Ok(value) = value {
                self.primed.insert(key.clone(), *range, value);
            }
        });
    }

    /// The reads to make ahead for the grid array at `path` (not opened yet) before a
    /// prefetch of chunks `keys`, guessed from `model`, an open array of the same level: its
    /// first reads ([`GridArray::first_reads`]) below `path`. Empty where nothing is read
    /// ahead, or the array at `path` is open already (its own reads then go with the
    /// model's).
    pub(crate) fn guessed_reads(
        &self,
        model: &GridArray,
        path: &str,
        keys: &[ChunkKey],
    ) -> Vec<Read> {
        let Ok(node) = super::node_path(path) else {
            return Vec::new();
        };
        let open = self.grids.lock().map_or(true, |m| m.contains_key(&node));
        if !self.primes() || open {
            return Vec::new();
        }
        model
            .first_reads(keys)
            .into_iter()
            .filter_map(|(below, range)| Some((node.key(&below).ok()?, range)))
            .collect()
    }

    /// Forgets the reads of `reads` that no read took.
    pub(crate) fn unprime(&self, reads: &[Read]) {
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
            Some(ByteRange::Suffix(4)),
            Some(Bytes::from_static(b"abcd")),
        );
        ranges.insert(key("a/c/1"), Some(ByteRange::Suffix(4)), None);
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
        assert_eq!(ranges.held().0, 0);
        // whole reads are not served from ranges, nor ranged reads from whole values
        ranges.insert(
            key("a/c/0"),
            Some(ByteRange::Suffix(10)),
            Some(Bytes::from_static(b"x")),
        );
        assert_eq!(
            primed.get(&key("a/c/0")).expect("read").as_deref(),
            Some(&b"0123456789"[..])
        );
        ranges.forget(&[(key("a/c/0"), Some(ByteRange::Suffix(10)))]);
        assert_eq!(ranges.held().0, 0);
        ranges.insert(key("a/c/0"), None, Some(Bytes::from_static(b"whole")));
        let part = primed
            .get_range(&key("a/c/0"), ByteRange::Suffix(2))
            .expect("read");
        assert_eq!(part.as_deref(), Some(&b"89"[..]));
        // a whole value read ahead: served once, to `get` or `get_capped` within its cap
        let capped = primed.get_capped(&key("a/c/0"), 4);
        assert!(capped.is_err(), "{capped:?}");
        ranges.insert(key("a/c/0"), None, Some(Bytes::from_static(b"whole")));
        let whole = primed.get_capped(&key("a/c/0"), 5).expect("read");
        assert_eq!(whole.as_deref(), Some(&b"whole"[..]));
        assert_eq!(ranges.held(), (0, 0));
        assert_eq!(primed.concurrency(), inner.concurrency());
    }

    #[test]
    fn read_ahead_is_bounded() {
        let ranges = PrimedRanges::default();
        let big = Bytes::from(vec![0u8; (PRIME_BUDGET / 2) as usize]);
        ranges.insert(key("a/c/0"), None, Some(big.clone()));
        ranges.insert(key("a/c/1"), None, Some(big.clone()));
        // past the budget: not kept
        ranges.insert(key("a/c/2"), None, Some(Bytes::from_static(b"x")));
        assert_eq!(ranges.held(), (2, PRIME_BUDGET));
        assert!(ranges.take(&key("a/c/2"), None).is_none());
        // taken or forgotten: room again
        assert!(ranges.take(&key("a/c/0"), None).is_some());
        ranges.forget(&[(key("a/c/1"), None)]);
        assert_eq!(ranges.held(), (0, 0));
        ranges.insert(key("a/c/2"), None, Some(Bytes::from_static(b"x")));
        assert_eq!(ranges.held(), (1, 1));
    }
}
