//! Parallel loops sized by the store: a store whose requests wait on a network
//! ([`zv_core::store::ReadableStore::concurrency`] above 1, an object store) gets that many requests in
//! flight by running the loops that read or write its keys in a rayon pool of that many
//! threads. A thread waiting on a response costs little; the CPU work of the loop is
//! time-sliced over the cores as before. Stores whose requests cost CPU (memory, local
//! files) answer 1 and run on the caller's pool, unchanged.
//!
//! Independent requests ([`join_requests`] for two reads, [`all_requests`] for any number of
//! writes: the end of a commit writes the object index's arrays and the vertex, fragment-index
//! and attribute documents, none depending on another, the root still written after them) go
//! out at once on such stores and one after the other on the others, where a request costs
//! less than handing it to another thread.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use rayon::ThreadPool;
use zv_core::store::Store;

use crate::error::Result;

/// The pools made so far, by size (a process uses one or two sizes; they live as long as it).
static POOLS: OnceLock<Mutex<HashMap<usize, Arc<ThreadPool>>>> = OnceLock::new();

/// A pool of `threads` threads, made on first use (`None` if the system refuses threads).
fn pool(threads: usize) -> Option<Arc<ThreadPool>> {
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    let mut pools = pools.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Some(Arc::clone(p));
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("zv-io-{threads}-{i}"))
        .build()
        .ok()?;
    let p = Arc::new(p);
    pools.insert(threads, Arc::clone(&p));
    Some(p)
}

/// Runs `f`, whose parallel loops issue requests to `store`, with as many threads as the
/// store wants requests in flight when that is more than the current pool has (and on the
/// current pool otherwise, or when no pool can be made).
pub(crate) fn with_store<T: Send>(store: &dyn Store, f: impl FnOnce() -> T + Send) -> T {
    if fits_current_pool(store) {
        return f();
    }
    let wanted = store.concurrency();
    match pool(wanted) {
        Some(p) => p.install(f),
        None => f(),
    }
}

/// [`with_store`] for reads: on a store that wants no more requests in flight than the
/// current pool has threads, `f` runs on one of the pool's threads (`rayon::scope`), so that
/// its parallel loops hand work between the pool's threads instead of back and forth with a
/// calling thread outside the pool. Each such hand-off wakes a sleeping thread, and on an idle
/// machine (a query between others) the wake-ups cost more than a small query's own work.
/// Reads only: a writer's `f` may wait on its own pipeline, which must not hold a pool thread.
pub(crate) fn with_store_reads<T: Send>(store: &dyn Store, f: impl FnOnce() -> T + Send) -> T {
    if fits_current_pool(store) {
        return rayon::scope(|_| f());
    }
    with_store(store, f)
}

/// Whether `store` wants no more requests in flight than the current pool has threads (a
/// local store): its loops run on the current pool.
fn fits_current_pool(store: &dyn Store) -> bool {
    store.concurrency() <= rayon::current_num_threads()
}

/// Runs `f` on a thread of the current pool when `store` is one [`with_store_reads`] runs
/// there (else on the calling thread): for a read made of several parallel sections, some
/// of them CPU work that should stay on the current pool whatever the store.
pub(crate) fn on_pool_thread<T: Send>(store: &dyn Store, f: impl FnOnce() -> T + Send) -> T {
    if fits_current_pool(store) {
        return rayon::scope(|_| f());
    }
    f()
}

/// `a` and `b`, each a request or two to `store`: at once (`rayon::join`) on a store whose
/// requests wait on a network, one after the other on the others, whose requests cost less
/// than handing one of them to another thread.
pub(crate) fn join_requests<A: Send, B: Send>(
    store: &dyn Store,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if store.concurrency() > 1 {
        rayon::join(a, b)
    } else {
        (a(), b())
    }
}

/// One write.
pub(crate) type Write<'a> = Box<dyn FnOnce() -> Result<()> + Send + 'a>;

/// Makes `writes` (each a request or two to `store`, none depending on another): at once when it wants more than one request in flight (each
/// write is made; the first failure in the given order is returned), else one after the other
/// (stopping at the first failure).
pub(crate) fn all_requests(store: &dyn Store, writes: Vec<Write<'_>>) -> Result<()> {
    if store.concurrency() <= 1 || writes.len() <= 1 {
        return writes.into_iter().try_for_each(|w| w());
    }
    let done: Vec<Result<()>> = writes.into_par_iter().map(|w| w()).collect();
    done.into_iter().collect()
}

/// How many items (chunks, cells) a loop that must use its items in order takes at a time, to
/// make or read them in parallel first: four per thread of the current pool, so that a slow
/// item does not idle the others, and at most [`MAX_WINDOW`], so that memory holds a bounded
/// number of items (a window's pairs or decoded cells) however many threads there are.
pub(crate) fn window_len() -> usize {
    (rayon::current_num_threads().max(1) * 4).min(MAX_WINDOW)
}

/// The largest [`window_len`].
pub(crate) const MAX_WINDOW: usize = 64;

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use zv_testkit::store::CountingStore;

    use super::*;
    use crate::error::Error;
    use zv_core::store::Store;

    #[test]
    fn every_write_is_made_at_once_and_the_first_failure_in_order_is_returned() {
        for concurrency in [16, 1] {
            let inner: Arc<dyn Store> = Arc::new(zv_store_mem::MemoryStore::new());
            let store = if concurrency > 1 {
                CountingStore::with_latency(inner, Duration::ZERO, concurrency)
            } else {
                CountingStore::new(inner)
            };
            let made = Mutex::new(Vec::new());
            let writes: Vec<Write<'_>> = (0..6)
                .map(|i| {
                    let made = &made;
                    Box::new(move || {
                        made.lock().unwrap_or_else(|p| p.into_inner()).push(i);
                        if i == 2 || i == 4 {
                            return Err(Error::InvalidInput(format!("write {i} failed")));
                        }
                        Ok(())
                    }) as Write<'_>
                })
                .collect();
            let err = all_requests(&store, writes).expect_err("two writes fail");
            assert!(err.to_string().contains("write 2 failed"), "{err}");
            let mut made = made.into_inner().unwrap_or_else(|p| p.into_inner());
            made.sort_unstable();
            if concurrency > 1 {
                // at once: every write is made, whatever fails
                assert_eq!(made, [0, 1, 2, 3, 4, 5]);
            } else {
                // one after the other: up to the first failure
                assert_eq!(made, [0, 1, 2]);
            }
        }
        // no writes, and all succeeding
        let store = zv_store_mem::MemoryStore::new();
        all_requests(&store, Vec::new()).expect("nothing to write");
        let ok: Vec<Write<'_>> = vec![Box::new(|| Ok(())), Box::new(|| Ok(()))];
        all_requests(&store, ok).expect("all succeed");
    }

    #[test]
    fn a_window_is_four_items_a_thread_up_to_its_bound() {
        for (threads, window) in [(1, 4), (2, 8), (16, 64), (100, MAX_WINDOW)] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a pool");
            assert_eq!(pool.install(window_len), window, "{threads} threads");
        }
    }
}
