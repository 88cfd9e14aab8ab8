//! The store traits: a key/value interface split by capability.
//!
//! Implementers write a few general methods; users get the provided ones:
//!
//! | trait | required | provided |
//! |---|---|---|
//! | [`ReadableStore`] | `get` | `get_range`, `get_capped`, `size`, `exists`, `concurrency` |
//! | [`WritableStore`] | `set`, `delete` | `sync` |
//! | [`ListableStore`] | `list_prefix` | `list`, `list_dir` |
//! | [`Store`] | (all three) | `delete_prefix`, `set_new` |
//!
//! # Contract
//!
//! - Keys are [`StoreKey`]s, validated on construction, so a key never escapes the store.
//! - `get` of a missing key is `Ok(None)`; `delete` of a missing key is `Ok(())`.
//! - `set` is atomic: a concurrent or later `get` sees the old value or the new one, never a
//!   torn value; a failed `set` leaves the old value.
//! - Distinct keys may be written concurrently from several threads; writes of the same key
//!   race (last writer wins).
//! - Listings are sorted by key and contain only keys that exist.
//! - Durability is explicit: a completed `set` is visible to readers at once, but it is on
//!   stable storage only after [`WritableStore::sync`] returns. Writers that commit a
//!   hierarchy (such as the ZV writer) write everything, `sync`, write the committing
//!   document, and `sync` again. A new hierarchy's committing document is written with
//!   [`Store::set_new`], which refuses a key that exists (atomically where the store can).
//! - Reads that know how large a value may be use [`ReadableStore::get_capped`], so a value
//!   larger than its metadata allows is an error before it is read, not an allocation.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use crate::key::{KeyError, StoreKey, StorePrefix};

/// Errors of store operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// An I/O error while handling `key`.
    #[error("I/O error on `{key}`: {source}")]
    Io {
        /// The key (or prefix) concerned.
        key: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A byte range outside the value.
    #[error("byte range {range:?} is outside `{key}` ({size} bytes)")]
    InvalidRange {
        /// The key.
        key: String,
        /// The requested range.
        range: ByteRange,
        /// The value size.
        size: u64,
    },
    /// A key or prefix was invalid.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The store URL could not be opened.
    #[error("cannot open store `{url}`: {reason}")]
    Open {
        /// The URL or path.
        url: String,
        /// Why.
        reason: String,
    },
    /// No store plugin handles the URL scheme.
    #[error("no store is registered for scheme `{scheme}` (registered: {})", registered.join(", "))]
    UnknownScheme {
        /// The scheme asked for.
        scheme: String,
        /// The registered schemes.
        registered: Vec<String>,
    },
    /// The store is read-only.
    #[error("store is read-only; cannot write `{key}`")]
    ReadOnly {
        /// The key that was to be written.
        key: String,
    },
    /// The value is larger than the reader allows (from its metadata or a store limit).
    #[error("`{key}` holds {size} bytes, more than the {max} bytes allowed")]
    TooLarge {
        /// The key.
        key: String,
        /// The stored size.
        size: u64,
        /// The largest size allowed.
        max: u64,
    },
    /// The key names something that is not a value of the store: a special file (FIFO,
    /// device, socket), or a link that leaves the store root.
    #[error("`{key}` is not a value of this store: {reason}")]
    NotAValue {
        /// The key.
        key: String,
        /// What the key names instead.
        reason: String,
    },
    /// A conditional create found a value already there ([`Store::set_new`]): another
    /// writer created the key first.
    #[error("`{key}` already exists (another writer created it first)")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// The store cannot do this operation at all (listing a plain HTTP store, say).
    #[error("cannot {operation} `{key}`: {reason}")]
    Unsupported {
        /// The key or prefix concerned.
        key: String,
        /// What was asked (`list`, `write`, …).
        operation: &'static str,
        /// Why the store cannot do it.
        reason: String,
    },
    /// Any other error of a third-party store.
    #[error("store error on `{key}`: {message}")]
    Other {
        /// The key concerned.
        key: String,
        /// What happened.
        message: String,
    },
}

/// Result alias of store operations.
pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    /// A [`StoreError::TooLarge`] error when the value of `key` (`size` bytes) is more than
    /// `max` bytes; for stores that override [`ReadableStore::get_capped`].
    pub fn check_size(key: &StoreKey, size: u64, max: u64) -> StoreResult<()> {
        if size > max {
            return Err(StoreError::TooLarge {
                key: key.to_string(),
                size,
                max,
            });
        }
        Ok(())
    }
}

/// A byte range of a stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteRange {
    /// `length` bytes (or to the end, if `None`) from `offset`.
    FromStart {
        /// First byte.
        offset: u64,
        /// Number of bytes, or `None` for "to the end".
        length: Option<u64>,
    },
    /// The last `n` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// The range within a value of `size` bytes, or `None` if it does not fit.
    pub fn to_range(self, size: u64) -> Option<Range<u64>> {
        match self {
            ByteRange::FromStart { offset, length } => {
                let end = match length {
                    Some(l) => offset.checked_add(l)?,
                    None => size,
                };
                (offset <= end && end <= size).then_some(offset..end)
            }
            ByteRange::Suffix(n) => (n <= size).then(|| size - n..size),
        }
    }

    /// The range within the value of `key` (`size` bytes); a [`StoreError::InvalidRange`]
    /// error if it does not fit. For stores that override [`ReadableStore::get_range`].
    pub fn within(self, key: &StoreKey, size: u64) -> StoreResult<Range<u64>> {
        self.to_range(size).ok_or_else(|| StoreError::InvalidRange {
            key: key.to_string(),
            range: self,
            size,
        })
    }
}

/// Keys and child prefixes directly below a prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreKeysPrefixes {
    /// Keys directly below the prefix, sorted.
    pub keys: Vec<StoreKey>,
    /// Child prefixes (each ending with `/`), sorted.
    pub prefixes: Vec<StorePrefix>,
}

/// The requests in flight a store whose requests wait on a network keeps by default (an object
/// store's `concurrency` option): enough that a 20–100 ms round trip does not dominate reads
/// of many small values, few enough not to be throttled by the service (at 20 ms a request,
/// 128 in flight ask for 6,400 a second at most; S3 serves 5,500 GETs a second per prefix and
/// answers more with 503 SlowDown, which the object stores retry). Measured on an S3 server
/// that answers faster than its 20 ms delay (README, "Stores in a bucket"): reading 2,005
/// objects took 3.3 s with 32 in flight, 1.7 s with 64, 1.3 s with 128 (the floor of 32 in
/// flight; the test proxy bounded it there) and no less with 256.
pub const DEFAULT_CONCURRENCY: usize = 128;

/// Reading values.
pub trait ReadableStore: Send + Sync {
    /// The value of `key`, or `None` if it does not exist.
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>>;

    /// A byte range of the value of `key`, or `None` if the key does not exist. A range that
    /// does not fit the value is an error.
    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        let Some(value) = self.get(key)? else {
            return Ok(None);
        };
        let r = range.within(key, value.len() as u64)?;
        Ok(Some(value.slice(r.start as usize..r.end as usize)))
    }

    /// The value of `key`, or `None` if it does not exist; a value of more than `max` bytes is
    /// a [`StoreError::TooLarge`] error. This default reads the value once and checks its
    /// length (asking [`ReadableStore::size`] first would read it twice where `size` is not
    /// overridden); stores that can learn the size first (a file's metadata, an object's
    /// `HEAD` or `Content-Length`) override this to refuse before reading.
    fn get_capped(&self, key: &StoreKey, max: u64) -> StoreResult<Option<Bytes>> {
        let value = self.get(key)?;
        if let Some(v) = &value {
            StoreError::check_size(key, v.len() as u64, max)?;
        }
        Ok(value)
    }

    /// The size of the value of `key`, or `None` if it does not exist.
    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        Ok(self.get(key)?.map(|v| v.len() as u64))
    }

    /// Whether `key` exists.
    fn exists(&self, key: &StoreKey) -> StoreResult<bool> {
        Ok(self.size(key)?.is_some())
    }

    /// How many requests to this store are worth having in flight at once. Readers and
    /// writers that touch many keys run that many of them concurrently when it is more than
    /// their CPU parallelism. 1 (this default): the store's requests cost CPU, not waiting
    /// (memory, local files), so the CPU's parallelism is enough; stores whose requests wait
    /// on a network (object stores) answer more, e.g. [`DEFAULT_CONCURRENCY`].
    fn concurrency(&self) -> usize {
        1
    }

    /// Byte ranges of one value at most this many bytes apart are worth one request: readers
    /// of several ranges (the inner chunks of a shard) read such neighbours, and the bytes
    /// between them, at once. 0 (this default): only touching ranges are merged; a request
    /// costs little more than its bytes (memory, local files). Object stores, where a request
    /// costs tens of milliseconds, answer more, e.g. [`DEFAULT_COALESCE_GAP`].
    fn coalesce_gap(&self) -> u64 {
        0
    }
}

/// The gap up to which an object store merges neighbouring byte ranges of one value into one
/// request (1 MiB, as the `object_store` crate does for its own ranged reads).
pub const DEFAULT_COALESCE_GAP: u64 = 1 << 20;

/// Writing values.
pub trait WritableStore: Send + Sync {
    /// Stores `value` at `key` atomically, replacing any old value.
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()>;

    /// Deletes `key`; deleting a missing key is not an error.
    fn delete(&self, key: &StoreKey) -> StoreResult<()>;

    /// Makes every completed `set` and `delete` durable (on stable storage). Stores without a
    /// notion of durability (memory) do nothing.
    fn sync(&self) -> StoreResult<()> {
        Ok(())
    }
}

/// Listing keys.
pub trait ListableStore: Send + Sync {
    /// Every key under `prefix` (recursively), sorted.
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>>;

    /// Every key of the store, sorted.
    fn list(&self) -> StoreResult<Vec<StoreKey>> {
        self.list_prefix(&StorePrefix::root())
    }

    /// The keys and child prefixes directly below `prefix`.
    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        let mut out = StoreKeysPrefixes::default();
        for key in self.list_prefix(prefix)? {
            let rest = &key.as_str()[prefix.as_str().len()..];
            match rest.find('/') {
                None => out.keys.push(key.clone()),
                Some(i) => {
                    let child = prefix.child(&rest[..i])?;
                    if out.prefixes.last() != Some(&child) {
                        out.prefixes.push(child);
                    }
                }
            }
        }
        out.prefixes.dedup();
        Ok(out)
    }
}

/// A store that can read, write and list.
pub trait Store: ReadableStore + WritableStore + ListableStore {
    /// Stores `value` at `key` only if `key` holds no value; a [`StoreError::AlreadyExists`]
    /// error otherwise. Writers that commit a new hierarchy write its committing document
    /// with this, so that of two writers creating the same store only one commits. This
    /// default checks, then writes: it refuses a key that exists, but two writers racing
    /// between the check and the write may both succeed. Stores that can create
    /// conditionally (an object store's `If-None-Match: *` PUT) override it.
    fn set_new(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        if self.exists(key)? {
            return Err(StoreError::AlreadyExists {
                key: key.to_string(),
            });
        }
        self.set(key, value)
    }

    /// Deletes every key under `prefix`.
    fn delete_prefix(&self, prefix: &StorePrefix) -> StoreResult<()> {
        for key in self.list_prefix(prefix)? {
            self.delete(&key)?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for dyn Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("dyn Store")
    }
}

/// A shared, dynamically typed store.
pub type DynStore = Arc<dyn Store>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges() {
        let r = ByteRange::FromStart {
            offset: 2,
            length: Some(3),
        };
        assert_eq!(r.to_range(10), Some(2..5));
        assert_eq!(r.to_range(4), None);
        assert_eq!(ByteRange::Suffix(3).to_range(10), Some(7..10));
        assert_eq!(ByteRange::Suffix(11).to_range(10), None);
        let open = ByteRange::FromStart {
            offset: 10,
            length: None,
        };
        assert_eq!(open.to_range(10), Some(10..10));
        let overflow = ByteRange::FromStart {
            offset: u64::MAX,
            length: Some(2),
        };
        assert_eq!(overflow.to_range(10), None);
    }
}
