//! The tokio runtime under every object store of the process, and the one way the sync store
//! methods wait for an async request.
//!
//! The store traits are synchronous and are called from many threads at once (rayon's
//! workers writing chunks in parallel). Each call hands its future to this runtime and waits
//! on a channel for the answer, so the calling thread may be anything — a plain thread, a
//! rayon worker, even a thread of another tokio runtime (where `block_on` would panic). The
//! runtime is created once, on first use, and lives as long as the process: a runtime owned by
//! each store would be dropped with it, which panics when that happens inside async code.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Runtime;
use zv_core::store::{StoreError, StoreResult};

/// Worker threads of the runtime: the requests wait on the network, not on these threads.
const WORKERS: usize = 2;

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The process's object-store runtime (created on first use), with ring installed as the
/// process's rustls provider if none is yet.
pub(crate) fn runtime(url: &str) -> StoreResult<&'static Runtime> {
    let made = RUNTIME.get_or_init(|| {
        // Another part of the program may have installed a provider already: keep it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(WORKERS)
            .thread_name("zv-object-store")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    });
    made.as_ref().map_err(|e| StoreError::Open {
        url: url.to_owned(),
        reason: format!("cannot start the I/O runtime: {e}"),
    })
}

/// Runs `future` on `runtime` and waits for its output on the calling thread. `key` names
/// what the request was about, for the error when the task ends without an answer (it
/// panicked, or the runtime is shutting down).
pub(crate) fn wait<F, T>(runtime: &Runtime, key: &str, future: F) -> StoreResult<T>
where
    F: Future<Output = StoreResult<T>> + Send + 'static,
    T: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime.spawn(async move {
        // The receiver waits until this is sent; it is gone only if the caller is.
        let _ = tx.send(future.await);
    });
    rx.recv().unwrap_or_else(|_| {
        Err(StoreError::Other {
            key: key.to_owned(),
            message: "the object store request ended without an answer".to_owned(),
        })
    })
}
