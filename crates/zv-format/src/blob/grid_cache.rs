//! The decoded stored chunks (shards) of a ZV 0.9 grid array that holds more than one cell
//! per stored chunk, so that the cells of one shard cost one read and one decoding.
//!
//! Readers ask for cells from many threads at once, often for cells of the same shard; each
//! stored chunk has a slot whose lock is held while it is fetched, so concurrent askers wait
//! for that one read instead of issuing their own (on an object store, a request each). A
//! stored chunk found absent is remembered too. The cache holds at most [`CACHE_BYTES`] of
//! decoded cells (the oldest shards are forgotten first), so a whole-level read of a large
//! sharded store does not keep the level in memory; a forgotten shard is read again if asked.
//!
//! It also holds single cells read ahead by [`GridArray::prefetch`](super::GridArray::prefetch)
//! (a box query's few cells of a shard, read by byte ranges instead of the whole shard), by
//! grid index, up to [`CELL_BYTES`]; past that, cells are read through their shards.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::error::Result;

/// One decoded stored chunk (or shard): its elements, C order over the chunk shape.
pub(super) type Decoded = Arc<Vec<Vec<u8>>>;

/// The most decoded bytes the cache keeps.
pub(super) const CACHE_BYTES: usize = 256 << 20;

/// The most bytes of cells read ahead the cache keeps.
pub(super) const CELL_BYTES: usize = 64 << 20;

/// A stored chunk's state: not yet read (`None`), absent (`Some(None)`), or decoded.
type Slot = Arc<Mutex<Option<Option<Decoded>>>>;

#[derive(Debug, Default)]
struct Slots {
    slots: HashMap<Vec<u64>, Slot>,
    /// Decoded chunks in the order they were stored, with their sizes, for eviction.
    order: VecDeque<(Vec<u64>, usize)>,
    bytes: usize,
}

/// Cells read ahead, by grid index, and their bytes in all.
#[derive(Debug, Default)]
struct Cells {
    cells: HashMap<Vec<u64>, Vec<u8>>,
    bytes: usize,
}

/// The cache of one grid array.
#[derive(Debug, Default)]
pub(super) struct ShardCache {
    inner: Mutex<Slots>,
    cells: Mutex<Cells>,
}

fn size_of(d: &Decoded) -> usize {
    d.iter().map(|e| e.len() + 24).sum()
}

impl ShardCache {
    /// The decoded stored chunk `chunk`, fetched by `fetch` only if no other caller has it or
    /// is fetching it; a failed fetch is not remembered (the next caller tries again).
    pub(super) fn get_or_fetch(
        &self,
        chunk: &[u64],
        fetch: impl FnOnce() -> Result<Option<Decoded>>,
    ) -> Result<Option<Decoded>> {
        let slot = match self.inner.lock() {
            Ok(mut m) => m.slots.entry(chunk.to_vec()).or_default().clone(),
            // a poisoned cache only costs the caching
            Err(_) => return fetch(),
        };
        let mut state = match slot.lock() {
            Ok(s) => s,
            Err(_) => return fetch(),
        };
        if let Some(known) = &*state {
            return Ok(known.clone());
        }
        let fetched = fetch()?;
        *state = Some(fetched.clone());
        drop(state);
        if let Some(d) = &fetched {
            self.account(chunk, size_of(d));
        }
        Ok(fetched)
    }

    /// Whether stored chunk `chunk` is decoded (or known absent) here.
    pub(super) fn has_chunk(&self, chunk: &[u64]) -> bool {
        let Some(slot) = self
            .inner
            .lock()
            .ok()
            .and_then(|m| m.slots.get(chunk).cloned())
        else {
            return false;
        };
        slot.lock().is_ok_and(|s| s.is_some())
    }

    /// The cell at grid index `index`, if it was read ahead (`Some(empty)`: an empty cell).
    pub(super) fn cell(&self, index: &[u64]) -> Option<Vec<u8>> {
        self.cells.lock().ok()?.cells.get(index).cloned()
    }

    /// Keeps the cells read ahead (grid index, bytes) while they fit [`CELL_BYTES`]; returns
    /// whether all were kept.
    pub(super) fn keep_cells(&self, cells: Vec<(Vec<u64>, Vec<u8>)>) -> bool {
        let Ok(mut m) = self.cells.lock() else {
            return false;
        };
        for (index, bytes) in cells {
            let size = bytes.len() + 24;
            if m.bytes + size > CELL_BYTES {
                return false;
            }
            m.bytes += size;
            if let Some(old) = m.cells.insert(index, bytes) {
                m.bytes -= old.len() + 24;
            }
        }
        true
    }

    /// Counts `size` decoded bytes for `chunk` and forgets the oldest chunks past the bound.
    fn account(&self, chunk: &[u64], size: usize) {
        let Ok(mut m) = self.inner.lock() else {
            return;
        };
        m.order.push_back((chunk.to_vec(), size));
        m.bytes += size;
        while m.bytes > CACHE_BYTES && m.order.len() > 1 {
            let Some((old, n)) = m.order.pop_front() else {
                break;
            };
            m.bytes -= n;
            m.slots.remove(&old);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn concurrent_askers_share_one_fetch_and_failures_are_retried() {
        let cache = ShardCache::default();
        let fetches = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let d = cache
                        .get_or_fetch(&[1, 2], || {
                            fetches.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            Ok(Some(Arc::new(vec![vec![7u8; 3], vec![]])))
                        })
                        .unwrap();
                    assert_eq!(d.unwrap()[0], vec![7u8; 3]);
                });
            }
        });
        assert_eq!(fetches.load(Ordering::SeqCst), 1);
        // an absent chunk is remembered as absent
        assert!(cache.get_or_fetch(&[0], || Ok(None)).unwrap().is_none());
        assert!(cache
            .get_or_fetch(&[0], || panic!("fetched twice"))
            .unwrap()
            .is_none());
        // a failure is not remembered
        let err = cache.get_or_fetch(&[5], || {
            Err(crate::error::Error::InvalidInput("boom".into()))
        });
        assert!(err.is_err());
        let d = cache
            .get_or_fetch(&[5], || Ok(Some(Arc::new(vec![vec![1]]))))
            .unwrap();
        assert_eq!(d.unwrap()[0], vec![1]);
    }

    #[test]
    fn the_oldest_chunks_are_forgotten_past_the_bound() {
        let cache = ShardCache::default();
        let big = CACHE_BYTES / 3;
        for i in 0..5u64 {
            cache
                .get_or_fetch(&[i], || Ok(Some(Arc::new(vec![vec![0u8; big]]))))
                .unwrap();
        }
        let m = cache.inner.lock().unwrap();
        assert!(m.bytes <= CACHE_BYTES, "{} cached", m.bytes);
        assert!(!m.slots.contains_key(&vec![0]) && m.slots.contains_key(&vec![4]));
    }
}
