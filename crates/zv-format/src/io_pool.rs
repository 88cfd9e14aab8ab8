//! Parallel loops sized by the store: a store whose requests wait on a network
//! ([`zv_core::store::ReadableStore::concurrency`] above 1, an object store) gets that many requests in
//! flight by running the loops that read or write its keys in a rayon pool of that many
//! threads. A thread waiting on a response costs little; the CPU work of the loop is
//! time-sliced over the cores as before. Stores whose requests cost CPU (memory, local
//! files) answer 1 and run on the caller's pool, unchanged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use rayon::ThreadPool;
use zv_core::store::Store;

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
