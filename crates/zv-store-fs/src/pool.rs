//! Reuse of large read buffers.
//!
//! Reading a large value (a shard, a big chunk) into a fresh buffer costs more than the read:
//! the allocator maps new pages for it, the kernel faults each page in and zeroes it while the
//! file is copied in, and unmaps them all when the buffer is dropped. A store read returns
//! [`Bytes`] owned by a [`Pooled`] buffer that goes back to the store's pool when the last
//! `Bytes` referring to it is dropped, so that reads one after another (the shards of a region
//! read) reuse mapped memory. The pool is small and bounded ([`MAX_IDLE`] buffers of at most
//! [`MAX_IDLE_BYTES`] in all, only buffers of at least [`MIN_POOLED`] bytes); small values are
//! left to the allocator, which reuses their memory anyway.

use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;

/// The smallest buffer worth keeping: below this the allocator reuses freed memory itself.
pub(crate) const MIN_POOLED: usize = 1 << 20;
/// The most idle buffers a store keeps.
pub(crate) const MAX_IDLE: usize = 8;
/// The most bytes (of capacity) a store keeps in idle buffers.
pub(crate) const MAX_IDLE_BYTES: usize = 256 << 20;

/// Idle read buffers of one store.
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    idle: Mutex<Vec<Vec<u8>>>,
}

impl BufferPool {
    /// An empty buffer able to hold `n` bytes without growing, if an idle one fits: the
    /// smallest with a capacity of `n` to `2n` bytes. `None` for small `n` or no fit.
    pub(crate) fn take(&self, n: usize) -> Option<Vec<u8>> {
        if n < MIN_POOLED {
            return None;
        }
        let mut idle = self.idle.lock().ok()?;
        let best = idle
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= n && b.capacity() / 2 <= n)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)?;
        let mut buf = idle.swap_remove(best);
        buf.clear();
        Some(buf)
    }

    /// Keeps `buf` for a later read if it is large enough and the pool has room.
    fn give(&self, buf: Vec<u8>) {
        if buf.capacity() < MIN_POOLED {
            return;
        }
        if let Ok(mut idle) = self.idle.lock() {
            let held: usize = idle.iter().map(Vec::capacity).sum();
            if idle.len() < MAX_IDLE && held.saturating_add(buf.capacity()) <= MAX_IDLE_BYTES {
                idle.push(buf);
            }
        }
    }

    /// `buf` (a value just read) as [`Bytes`]: large buffers return to `pool` when the last
    /// `Bytes` referring to them is dropped.
    pub(crate) fn share(pool: &Arc<Self>, buf: Vec<u8>) -> Bytes {
        if buf.capacity() < MIN_POOLED {
            return Bytes::from(buf);
        }
        Bytes::from_owner(Pooled {
            buf,
            pool: Arc::downgrade(pool),
        })
    }

    /// The number of idle buffers (for tests).
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.idle.lock().map(|i| i.len()).unwrap_or(0)
    }
}

/// A read buffer that returns to its pool (if the store still exists) when dropped.
struct Pooled {
    buf: Vec<u8>,
    pool: Weak<BufferPool>,
}

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.upgrade() {
            pool.give(std::mem::take(&mut self.buf));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(n: usize, byte: u8) -> Vec<u8> {
        vec![byte; n]
    }

    #[test]
    fn large_buffers_return_to_the_pool_and_are_reused_empty() {
        let pool = Arc::new(BufferPool::default());
        let n = 3 * MIN_POOLED;
        let bytes = BufferPool::share(&pool, filled(n, 7));
        let copy = bytes.slice(10..20);
        drop(bytes);
        assert_eq!(pool.idle(), 0, "a slice still refers to the buffer");
        assert_eq!(&copy[..], &[7; 10]);
        drop(copy);
        assert_eq!(pool.idle(), 1);
        // too small a request, or one for which the buffer is more than twice too large
        assert!(pool.take(MIN_POOLED - 1).is_none());
        assert!(pool.take(n / 2 - 1).is_none());
        assert!(pool.take(n + 1).is_none());
        let again = pool.take(n - 5).unwrap_or_default();
        assert!(again.is_empty() && again.capacity() >= n);
        assert_eq!(pool.idle(), 0);
    }

    #[test]
    fn small_buffers_and_full_pools_are_not_kept() {
        let pool = Arc::new(BufferPool::default());
        drop(BufferPool::share(&pool, filled(100, 1)));
        assert_eq!(pool.idle(), 0);
        let big: Vec<Bytes> = (0..MAX_IDLE + 2)
            .map(|i| BufferPool::share(&pool, filled(MIN_POOLED, i as u8)))
            .collect();
        drop(big);
        assert_eq!(pool.idle(), MAX_IDLE);
        let held = BufferPool::share(&pool, filled(2 * MIN_POOLED, 0));
        let orphan = Arc::new(BufferPool::default());
        let kept = BufferPool::share(&orphan, filled(MIN_POOLED, 0));
        drop(orphan);
        drop(kept); // the pool is gone: the buffer is freed
        drop(held);
        assert_eq!(pool.idle(), MAX_IDLE, "the pool was full");
    }
}
