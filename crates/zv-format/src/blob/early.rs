//! Documents read ahead of their use, on stores whose requests wait on a network.
//!
//! Opening a store reads its root document; opening a level then reads the level's document
//! and its vertices' document, a second round trip that cannot start before the first ends.
//! Every ZV store has a level 0, and almost every use of a store opens it. So on a store that
//! wants more than one request in flight ([`Store::concurrency`] above 1: an object store),
//! [`ZvStore::open`](crate::reader::ZvStore::open) reads level 0's two documents together with
//! the root's ([`read_ahead`]), and keeps them here. Opening level 0 then takes them instead of
//! requesting them: one round trip less for every read.
//!
//! Each document is served once, to the first read of its node; a later read requests it
//! again, as before. A document that could not be read ahead (a failed request) is not kept,
//! so its own read reports the failure. A node found absent is kept as absent: the read
//! ahead answered for it. Local stores read nothing ahead (a read there costs less than the
//! request a document might not need).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use rayon::prelude::*;
use zv_core::key::StoreKey;
use zv_core::metadata::MAX_METADATA_BYTES;
use zv_core::node::NodePath;
use zv_core::store::Store;

use super::Blobs;

/// The documents read ahead, by store key (`None`: the node has no document); unset on stores
/// that read nothing ahead, so that their reads of documents take no lock.
pub(super) type EarlyDocuments = OnceLock<Mutex<HashMap<StoreKey, Option<Bytes>>>>;

/// The node paths of the documents read ahead when a store is opened: level 0's group and
/// its vertices.
const LEVEL_ZERO: [&str; 2] = ["0", "0/vertices"];

/// Reads the documents of [`LEVEL_ZERO`] from `store`, in parallel, when it wants more than
/// one request in flight (else nothing): the ones that could be read, by key.
pub(crate) fn read_ahead(store: &dyn Store) -> Vec<(StoreKey, Option<Bytes>)> {
    if store.concurrency() <= 1 {
        return Vec::new();
    }
    LEVEL_ZERO
        .par_iter()
        .filter_map(|path| {
            let key = NodePath::new(path).ok()?.metadata_key();
            let bytes = store.get_capped(&key, MAX_METADATA_BYTES).ok()?;
            Some((key, bytes))
        })
        .collect()
}

impl Blobs {
    /// Keeps `documents`, read ahead by [`read_ahead`], for the first read of each.
    pub(crate) fn keep_early(&self, documents: Vec<(StoreKey, Option<Bytes>)>) {
        if documents.is_empty() {
            return;
        }
        let early = self.early.get_or_init(Mutex::default);
        if let Ok(mut early) = early.lock() {
            early.extend(documents);
        }
    }

    /// The document of `path` if it was read ahead and not yet served (`Some(None)`: the
    /// node has none); removed, so a later read requests it.
    pub(super) fn take_early(&self, path: &NodePath) -> Option<Option<Bytes>> {
        let mut early = self.early.get()?.lock().ok()?;
        if early.is_empty() {
            return None;
        }
        early.remove(&path.metadata_key())
    }
}
