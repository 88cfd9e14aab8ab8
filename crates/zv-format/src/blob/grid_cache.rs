//! The stored chunks (shards) of a ZV 0.9 grid array that holds more than one cell per stored
//! chunk, so that the cells of one shard cost one read and one decoding.
//!
//! Readers ask for cells from many rayon threads at once, often for cells of the same shard.
//! Each stored chunk has a slot; the first asker reads the shard's bytes while holding the
//! slot's lock, and concurrent askers wait for that one read instead of issuing their own (on
//! an object store, a request each). The lock is held around the read only — a store read
//! waits on nothing but the store — never around decoding, which runs on rayon: a thread
//! waiting for rayon work may run other queued work, which may ask for the same shard, and a
//! lock held there could never be released. The reader then decodes the whole shard and keeps
//! it; an asker that finds the bytes read but not yet decoded decodes just its own cell from
//! them. A stored chunk found absent is remembered too. At most [`CACHE_BYTES`] of decoded
//! shards are kept (the oldest are forgotten first), so a whole-level read of a large sharded
//! store does not keep the level in memory; a forgotten shard is read again if asked.
//!
//! It also holds single cells read ahead by [`GridArray::prefetch`](super::GridArray::prefetch)
//! (a box query's few cells of a shard, read by byte ranges instead of the whole shard), by
//! grid index, up to [`CELL_BYTES`]; past that, cells are read through their shards.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

use crate::error::Result;

/// One decoded stored chunk (or shard): its elements, C order over the chunk shape.
pub(super) type Decoded = Arc<Vec<Vec<u8>>>;

/// The most decoded bytes the cache keeps.
pub(super) const CACHE_BYTES: usize = 256 << 20;

/// The most bytes of cells read ahead the cache keeps.
pub(super) const CELL_BYTES: usize = 64 << 20;

/// What is known of a stored chunk.
#[derive(Debug, Clone, Default)]
pub(super) enum State {
    /// Not read yet.
    #[default]
    Unread,
    /// Not stored.
    Absent,
    /// Read, not decoded yet (its reader is decoding it).
    Read(Bytes),
    /// Decoded.
    Decoded(Decoded),
}

type Slot = Arc<Mutex<State>>;

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
    /// What is known of stored chunk `chunk`, reading it with `read` if nobody has: `read`
    /// must only read the store (it runs under the slot's lock). Returns the state and
    /// whether this call read it (and so should decode it and [`ShardCache::keep`] it).
    pub(super) fn get_or_read(
        &self,
        chunk: &[u64],
        read: impl FnOnce() -> Result<Option<Bytes>>,
    ) -> Result<(State, bool)> {
        let slot = match self.inner.lock() {
            Ok(mut m) => m.slots.entry(chunk.to_vec()).or_default().clone(),
            // a poisoned cache only costs the caching
            Err(_) => return Ok((read()?.map_or(State::Absent, State::Read), true)),
        };
        let mut state = match slot.lock() {
            Ok(s) => s,
            Err(_) => return Ok((read()?.map_or(State::Absent, State::Read), true)),
        };
        if !matches!(*state, State::Unread) {
            return Ok((state.clone(), false));
        }
        // a failed read is not remembered: the next asker tries again
        *state = read()?.map_or(State::Absent, State::Read);
        Ok((state.clone(), true))
    }

    /// Keeps `decoded` as stored chunk `chunk`, and forgets the oldest chunks past the bound.
    pub(super) fn keep(&self, chunk: &[u64], decoded: Decoded) {
        let size = size_of(&decoded);
        let Ok(mut m) = self.inner.lock() else {
            return;
        };
        let Some(slot) = m.slots.get(chunk).cloned() else {
            return;
        };
        match slot.lock() {
            // kept already (two askers decoded it): counted once
            Ok(s) if matches!(*s, State::Decoded(_)) => return,
            Ok(mut s) => *s = State::Decoded(decoded),
            Err(_) => return,
        }
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
        slot.lock()
            .is_ok_and(|s| matches!(*s, State::Absent | State::Decoded(_)))
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn concurrent_askers_share_one_read_and_failures_are_retried() {
        let cache = ShardCache::default();
        let reads = AtomicUsize::new(0);
        let mine = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let (state, read_here) = cache
                        .get_or_read(&[1, 2], || {
                            reads.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(20));
                            Ok(Some(Bytes::from_static(b"shard")))
                        })
                        .unwrap();
                    assert!(matches!(state, State::Read(_) | State::Decoded(_)));
                    if read_here {
                        mine.fetch_add(1, Ordering::SeqCst);
                        cache.keep(&[1, 2], Arc::new(vec![vec![7u8; 3]]));
                    }
                });
            }
        });
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        assert_eq!(mine.load(Ordering::SeqCst), 1);
        assert!(cache.has_chunk(&[1, 2]));
        let (state, _) = cache.get_or_read(&[1, 2], || panic!("read twice")).unwrap();
        assert!(matches!(state, State::Decoded(d) if d[0] == vec![7u8; 3]));
        // an absent chunk is remembered as absent
        let (state, _) = cache.get_or_read(&[0], || Ok(None)).unwrap();
        assert!(matches!(state, State::Absent));
        let (state, _) = cache.get_or_read(&[0], || panic!("read twice")).unwrap();
        assert!(matches!(state, State::Absent));
        // a failure is not remembered
        let err = cache.get_or_read(&[5], || {
            Err(crate::error::Error::InvalidInput("boom".into()))
        });
        assert!(err.is_err());
        let (state, read_here) = cache
            .get_or_read(&[5], || Ok(Some(Bytes::from_static(b"x"))))
            .unwrap();
        assert!(read_here && matches!(state, State::Read(_)));
    }

    #[test]
    fn the_oldest_chunks_are_forgotten_past_the_bound() {
        let cache = ShardCache::default();
        let big = CACHE_BYTES / 3;
        for i in 0..5u64 {
            cache
                .get_or_read(&[i], || Ok(Some(Bytes::from_static(b"s"))))
                .unwrap();
            cache.keep(&[i], Arc::new(vec![vec![0u8; big]]));
        }
        let m = cache.inner.lock().unwrap();
        assert!(m.bytes <= CACHE_BYTES, "{} cached", m.bytes);
        assert!(!m.slots.contains_key(&vec![0]) && m.slots.contains_key(&vec![4]));
    }
}
