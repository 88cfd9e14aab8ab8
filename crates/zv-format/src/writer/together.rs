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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use zv_testkit::store::CountingStore;

    use super::*;
    use crate::error::Error;

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
            let err = all(&store, writes).expect_err("two writes fail");
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
        all(&store, Vec::new()).expect("nothing to write");
        let ok: Vec<Write<'_>> = vec![Box::new(|| Ok(())), Box::new(|| Ok(()))];
        all(&store, ok).expect("all succeed");
    }
}
