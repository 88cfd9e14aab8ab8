//! Writes that do not depend on each other, made together on a store whose requests wait on a
//! network.
//!
//! The end of a commit writes a few small values, each one request: the object index's arrays,
//! then the documents of the vertices, the fragment index and each attribute. None of them
//! needs another to be written first: what commits the store is the root document, written
//! after all of them, and each array's data still goes before its own document. On an object
//! store, where a request waits 10–100 ms, they are sent at once ([`all`]) instead of one
//! round trip after the other. On other stores they are written one after the other, as
//! before: a local write costs less than handing it to another thread.

use rayon::prelude::*;
use zv_core::store::Store;

use crate::error::Result;

/// One write.
pub(super) type Write<'a> = Box<dyn FnOnce() -> Result<()> + Send + 'a>;

/// Makes `writes` to `store`: at once when it wants more than one request in flight (each
/// write is made; the first failure in the given order is returned), else one after the other
/// (stopping at the first failure).
pub(super) fn all(store: &dyn Store, writes: Vec<Write<'_>>) -> Result<()> {
    if store.concurrency() <= 1 || writes.len() <= 1 {
        return writes.into_iter().try_for_each(|w| w());
    }
    let done: Vec<Result<()>> = writes.into_par_iter().map(|w| w()).collect();
    done.into_iter().collect()
}
