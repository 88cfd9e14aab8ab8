//! Values made once by the first thread that asks, while the threads that ask meanwhile wait
//! for it instead of making it too: a level's chunks are read in parallel, and each chunk's
//! first read asks for the same documents (whether the level has a fragment index, how an
//! attribute is stored, a group's `__shard_*` listing), which without the wait every thread
//! would request (on an object store, 16 requests of one `zarr.json` for a 16-chunk level).
//!
//! A value is made from store reads only, with no parallel work inside `make`: a pool thread
//! waiting for the lock while the maker waited for that pool could deadlock it. Values made
//! with parallel work inside (a level's decoded arrays) are kept otherwise (`reader::cache`'s
//! `once`). An error is returned, not kept: a later call tries again.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, OnceLock, PoisonError};

use crate::error::Result;

/// One value, made once ([module doc](self)).
#[derive(Debug, Default)]
pub(crate) struct Serial<T> {
    value: OnceLock<T>,
    making: Mutex<()>,
}

impl<T: Clone> Serial<T> {
    /// The value, made by `make` if no thread made it yet.
    pub(crate) fn get_or_make(&self, make: impl FnOnce() -> Result<T>) -> Result<T> {
        if let Some(v) = self.value.get() {
            return Ok(v.clone());
        }
        let _making = self.making.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = self.value.get() {
            return Ok(v.clone());
        }
        let v = make()?;
        Ok(self.value.get_or_init(|| v).clone())
    }
}

/// A value per key, each made once ([module doc](self)); one maker at a time for all keys
/// (the values are documents, made on first use only).
#[derive(Debug)]
pub(crate) struct SerialMap<K, V> {
    values: Mutex<HashMap<K, V>>,
    making: Mutex<()>,
}

impl<K, V> Default for SerialMap<K, V> {
    fn default() -> Self {
        Self {
            values: Mutex::new(HashMap::new()),
            making: Mutex::new(()),
        }
    }
}

impl<K: Eq + Hash, V: Clone> SerialMap<K, V> {
    /// The value of `key`, made by `make` if no thread made it yet.
    pub(crate) fn get_or_make<Q>(&self, key: &Q, make: impl FnOnce() -> Result<V>) -> Result<V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let cached = || self.values.lock().ok()?.get(key).cloned();
        if let Some(v) = cached() {
            return Ok(v);
        }
        let _making = self.making.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = cached() {
            return Ok(v);
        }
        let v = make()?;
        if let Ok(mut m) = self.values.lock() {
            m.insert(key.to_owned(), v.clone());
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn threads_asking_at_once_make_a_value_once_and_errors_are_not_kept() {
        let one = Serial::<u32>::default();
        let map = SerialMap::<String, u32>::default();
        let made = AtomicUsize::new(0);
        let slow = || {
            made.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            Ok(7)
        };
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    assert_eq!(one.get_or_make(slow).ok(), Some(7));
                    assert_eq!(map.get_or_make("k", slow).ok(), Some(7));
                });
            }
        });
        assert_eq!(made.load(Ordering::SeqCst), 2);
        let failing = || Err(crate::error::Error::InvalidInput("no".into()));
        assert!(map.get_or_make("e", failing).is_err());
        assert_eq!(map.get_or_make("e", || Ok(3)).ok(), Some(3));
        assert_eq!(map.get_or_make("e", || Ok(4)).ok(), Some(3));
    }
}
