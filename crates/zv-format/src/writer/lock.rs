//! The writer's claim on a store it creates: the key [`LOCK_KEY`], created conditionally
//! (`Store::set_new`: of two writers, exactly one creates it) before anything else is
//! written, and deleted once the store is committed — or when the writer is dropped without
//! committing (an error, or a caller that gives up).
//!
//! Without it, two writers that start creating the same store while it is empty (two
//! processes, two machines on one bucket) would both write their blobs under the same keys;
//! the conditional root `zarr.json` lets only one commit, but the committed store could hold
//! the other's blobs. With it, the second writer is refused at `ZvWriter::create`, before it
//! writes anything. A writer that dies leaves the key behind; the store then has no root
//! `zarr.json`, so it never opens as ZV, and the error names the key to delete (or the store
//! is emptied, as `zv import --overwrite` does) before writing again.

use std::sync::Arc;

use bytes::Bytes;
use zv_core::key::StoreKey;
use zv_core::store::{Store, StoreError};

use crate::error::{Error, Result};

/// The key a writer holds while it creates a store.
pub const LOCK_KEY: &str = ".zv-writer";

/// A held claim; deleted when dropped.
#[derive(Debug)]
pub(crate) struct WriterLock {
    store: Arc<dyn Store>,
    key: StoreKey,
}

impl WriterLock {
    /// Claims `store` for one writer; another writer's claim is an error naming the key.
    pub(crate) fn acquire(store: Arc<dyn Store>) -> Result<Self> {
        let key = StoreKey::new(LOCK_KEY).map_err(|e| Error::InvalidInput(e.to_string()))?;
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let body = serde_json::json!({
            "writer": "zv",
            "version": env!("CARGO_PKG_VERSION"),
            "pid": std::process::id(),
            "started_unix_seconds": started,
        });
        match store.set_new(&key, Bytes::from(body.to_string())) {
            Ok(()) => Ok(Self { store, key }),
            Err(StoreError::AlreadyExists { .. }) => Err(Error::InvalidInput(format!(
                "another writer is creating a store here (it holds `{LOCK_KEY}`); if none is \
                 running, one died: delete `{LOCK_KEY}` (or empty the store, as `zv import \
                 --overwrite` does) and write again"
            ))),
            Err(e) => Err(e.into()),
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // best effort: a claim that cannot be deleted is reported by the next writer
        let _ = self.store.delete(&self.key);
    }
}
