//! # zv-store-object — stores in object stores and over HTTP
//!
//! [`ObjectStore`] implements zv's store traits on the [`object_store`] crate: Amazon S3 and
//! S3-compatible servers (`s3://bucket/prefix`), Google Cloud Storage (`gs://bucket/prefix`),
//! Azure Blob Storage (`az://container/prefix`, `abfs[s]://…`) and, read-only, plain HTTP(S)
//! servers (`http(s)://host/path`). Linking this crate registers those URL schemes with
//! zv-core's store registry, so `zv_core::plugin::open_store("s3://bucket/data.zv")` — and
//! every zv reader, writer and command that takes a store URL — opens one.
//!
//! - **Configuration** comes from the standard environment variables (`AWS_ENDPOINT_URL` or
//!   `AWS_ENDPOINT`, `AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//!   `AWS_ALLOW_HTTP`, `GOOGLE_APPLICATION_CREDENTIALS`, `AZURE_STORAGE_ACCOUNT_NAME`,
//!   `AZURE_STORAGE_ACCOUNT_KEY`, …) and an options map ([`ObjectStore::open`], or
//!   [`set_default_options`] for stores opened by URL), whose keys are `object_store`'s
//!   configuration keys (module `config`).
//! - **Sync over async**: the store traits are synchronous; each call runs its request on a
//!   tokio runtime of the process (module `runtime`) and waits for it, so that calls from many
//!   threads are many requests in flight.
//! - **Requests in flight**: the store answers [`ReadableStore::concurrency`] with its
//!   [`CONCURRENCY`] option (default [`zv_core::store::DEFAULT_CONCURRENCY`]), so zv's readers
//!   and writers keep that many requests in flight.
//! - **Retries**: transient failures (5xx, timeouts, connection resets) are retried with
//!   exponential backoff and jitter by `object_store` (options [`MAX_RETRIES`],
//!   [`RETRY_TIMEOUT`]); a final failure is an error naming the key, whose message carries
//!   the HTTP status.
//! - **Commit without rename**: each `set` is one PUT, atomic per key; a value of at least
//!   [`MULTIPART_THRESHOLD`] bytes (64 MiB by default) is a multipart upload instead, its
//!   parts ([`MULTIPART_PART_SIZE`], 16 MiB) sent concurrently, which the server makes the
//!   value only when the upload completes — a failed part aborts the upload, so nothing is
//!   stored. [`Store::set_new`] is a
//!   conditional PUT (`If-None-Match: *`): the ZV writer creates the root `zarr.json` with it,
//!   so of two writers creating the same store only one commits.
//! - **Bounded reads**: [`ReadableStore::get_capped`] refuses a value larger than allowed from
//!   the response's length, before its body is read.
//! - **HTTP is read-only and cannot list**: writes are [`StoreError::ReadOnly`], listings
//!   [`StoreError::Unsupported`].
//!
//! ```no_run
//! use std::collections::BTreeMap;
//! let options = BTreeMap::from([
//!     ("aws_endpoint".to_owned(), "http://127.0.0.1:9000".to_owned()),
//!     ("allow_http".to_owned(), "true".to_owned()),
//! ]);
//! let store = zv_store_object::ObjectStore::open("s3://bucket/scan.zv", &options)?;
//! # Ok::<(), zv_core::store::StoreError>(())
//! ```

mod config;
mod runtime;

use std::sync::Arc;

use bytes::Bytes;
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStoreExt, PutMode, PutOptions, PutPayload};
use tokio::runtime::Runtime;
use zv_core::key::{StoreKey, StorePrefix};
use zv_core::plugin::{StorePlugin, StoreUrl};
use zv_core::store::{
    ByteRange, ListableStore, ReadableStore, Store, StoreError, StoreKeysPrefixes, StoreResult,
    WritableStore,
};

pub use config::{
    set_default_options, Multipart, Options, Service, CONCURRENCY, DEFAULT_MULTIPART_PART_SIZE,
    DEFAULT_MULTIPART_THRESHOLD, MAX_RETRIES, MIN_MULTIPART_PART_SIZE, MULTIPART_PART_SIZE,
    MULTIPART_THRESHOLD, RETRY_TIMEOUT, SCHEMES,
};

/// A zv store in an object store bucket (or under an HTTP URL).
pub struct ObjectStore {
    client: Arc<dyn object_store::ObjectStore>,
    /// The key prefix of the store in the bucket, without a trailing `/` (empty: the root).
    prefix: String,
    service: Service,
    url: String,
    runtime: &'static Runtime,
    concurrency: usize,
    multipart: Multipart,
}

impl std::fmt::Debug for ObjectStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStore")
            .field("url", &self.url)
            .field("service", &self.service)
            .finish()
    }
}

/// An error of a request about `key`: `object_store`'s message names the URL and, for a
/// failed response, the HTTP status.
fn request_error(key: &str, e: object_store::Error) -> StoreError {
    StoreError::Other {
        key: key.to_owned(),
        message: e.to_string(),
    }
}

fn is_not_found(e: &object_store::Error) -> bool {
    matches!(e, object_store::Error::NotFound { .. })
}

impl ObjectStore {
    /// Opens the store at `url` (`s3://`, `gs://`, `az://`, `abfs[s]://`, `http(s)://`) with
    /// `options` over the environment's configuration. Nothing is requested yet: a wrong
    /// endpoint or credential shows at the first read or write.
    pub fn open(url: &str, options: &Options) -> StoreResult<Self> {
        let runtime = runtime::runtime(url)?;
        let target = config::build(url, options)?;
        Ok(Self {
            client: target.client,
            prefix: target.prefix,
            service: target.service,
            url: url.to_owned(),
            runtime,
            concurrency: target.concurrency,
            multipart: target.multipart,
        })
    }

    /// The URL the store was opened with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The service behind the store.
    pub fn service(&self) -> Service {
        self.service
    }

    /// The object path of `key`.
    fn path(&self, key: &str) -> StoreResult<Path> {
        let full = if self.prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{}/{key}", self.prefix)
        };
        Path::parse(&full).map_err(|e| StoreError::Other {
            key: key.to_owned(),
            message: e.to_string(),
        })
    }

    /// The object path of `prefix` (`None`: the whole bucket).
    fn prefix_path(&self, prefix: &StorePrefix) -> StoreResult<Option<Path>> {
        let p = prefix.as_str().trim_end_matches('/');
        if p.is_empty() && self.prefix.is_empty() {
            return Ok(None);
        }
        if p.is_empty() {
            return self.path("").map(Some);
        }
        self.path(p).map(Some)
    }

    /// The store key of an object path (`None` for objects that are not keys of this store:
    /// names zv keys cannot have, such as a folder marker `a/`).
    fn key_of(&self, path: &Path) -> Option<StoreKey> {
        let text = path.as_ref();
        let rest = if self.prefix.is_empty() {
            text
        } else {
            text.strip_prefix(self.prefix.as_str())?.strip_prefix('/')?
        };
        StoreKey::new(rest).ok()
    }

    fn run<F, T>(&self, key: &str, future: F) -> StoreResult<T>
    where
        F: std::future::Future<Output = StoreResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        runtime::wait(self.runtime, key, future)
    }

    fn refuse_write(&self, key: &str) -> StoreResult<()> {
        if self.service == Service::Http {
            return Err(StoreError::ReadOnly {
                key: key.to_owned(),
            });
        }
        Ok(())
    }

    fn refuse_list(&self, prefix: &StorePrefix) -> StoreResult<()> {
        if self.service == Service::Http {
            return Err(StoreError::Unsupported {
                key: prefix.to_string(),
                operation: "list",
                reason: format!(
                    "{} is a plain HTTP store, and HTTP has no listing; read it by known keys, \
                     or from the bucket it is served from (s3://, gs://, az://)",
                    self.url
                ),
            });
        }
        Ok(())
    }

    /// A GET of `key` with `options`; `None` if the key does not exist.
    fn get_with(
        &self,
        key: &StoreKey,
        options: GetOptions,
        max: Option<u64>,
    ) -> StoreResult<Option<(Bytes, u64)>> {
        let path = self.path(key.as_str())?;
        let client = self.client.clone();
        let k = key.to_string();
        self.run(key.as_str(), async move {
            let result = match client.get_opts(&path, options).await {
                Ok(r) => r,
                Err(e) if is_not_found(&e) => return Ok(None),
                Err(e) => return Err(request_error(&k, e)),
            };
            let size = result.meta.size;
            if let Some(max) = max {
                // refused before the body is read: dropping the result drops the connection
                StoreError::check_size(&StoreKey::new(k.as_str())?, size, max)?;
            }
            let bytes = result.bytes().await.map_err(|e| request_error(&k, e))?;
            Ok(Some((bytes, size)))
        })
    }

    /// The answer to a ranged GET that failed with `error`: a range that does not fit the
    /// value (or is empty, which HTTP cannot ask for) is told by the value's size.
    fn range_fallback(
        &self,
        key: &StoreKey,
        range: ByteRange,
        error: Option<StoreError>,
    ) -> StoreResult<Option<Bytes>> {
        let Some(size) = self.size(key)? else {
            return Ok(None);
        };
        let r = range.within(key, size)?;
        match error {
            Some(e) if !r.is_empty() => Err(e),
            _ => Ok(Some(Bytes::new())),
        }
    }
}

impl ObjectStore {
    /// A suffix range read as the range from its start, found from the value's size: Azure's
    /// `Range` header has no suffix form (`bytes=-N`), and `object_store` refuses to send one
    /// there. One more request (a `HEAD`); a value replaced between the two requests is read
    /// with the new value's bytes at the old offsets, checked to be as many as asked for.
    fn suffix_by_size(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        let Some(size) = self.size(key)? else {
            return Ok(None);
        };
        let r = range.within(key, size)?;
        if r.is_empty() {
            return Ok(Some(Bytes::new()));
        }
        let from_start = ByteRange::FromStart {
            offset: r.start,
            length: Some(r.end - r.start),
        };
        self.get_range(key, from_start)
    }
}

/// The HTTP range of a non-empty [`ByteRange`] (`None`: empty, or past the largest offset).
fn http_range(range: ByteRange) -> Option<GetRange> {
    match range {
        ByteRange::FromStart {
            offset,
            length: None,
        } => Some(GetRange::Offset(offset)),
        ByteRange::FromStart {
            offset,
            length: Some(n),
        } if n > 0 => Some(GetRange::Bounded(offset..offset.checked_add(n)?)),
        ByteRange::Suffix(n) if n > 0 => Some(GetRange::Suffix(n)),
        _ => None,
    }
}

impl ReadableStore for ObjectStore {
    fn get(&self, key: &StoreKey) -> StoreResult<Option<Bytes>> {
        Ok(self
            .get_with(key, GetOptions::default(), None)?
            .map(|(b, _)| b))
    }

    fn get_capped(&self, key: &StoreKey, max: u64) -> StoreResult<Option<Bytes>> {
        Ok(self
            .get_with(key, GetOptions::default(), Some(max))?
            .map(|(b, _)| b))
    }

    fn get_range(&self, key: &StoreKey, range: ByteRange) -> StoreResult<Option<Bytes>> {
        if let (ByteRange::Suffix(_), Service::Azure) = (range, self.service) {
            return self.suffix_by_size(key, range);
        }
        let Some(http) = http_range(range) else {
            return self.range_fallback(key, range, None);
        };
        let options = GetOptions::new().with_range(Some(http));
        match self.get_with(key, options, None) {
            Ok(None) => Ok(None),
            Ok(Some((bytes, size))) => {
                // Servers shorten a range past the end; the contract refuses it.
                let r = range.within(key, size)?;
                if bytes.len() as u64 != r.end - r.start {
                    return Err(StoreError::Other {
                        key: key.to_string(),
                        message: format!(
                            "asked for bytes {r:?}, the server sent {} bytes",
                            bytes.len()
                        ),
                    });
                }
                Ok(Some(bytes))
            }
            // 416 for a range starting at or past the end, and the like
            Err(e) => self.range_fallback(key, range, Some(e)),
        }
    }

    fn size(&self, key: &StoreKey) -> StoreResult<Option<u64>> {
        let path = self.path(key.as_str())?;
        let client = self.client.clone();
        let k = key.to_string();
        self.run(key.as_str(), async move {
            match client.head(&path).await {
                Ok(meta) => Ok(Some(meta.size)),
                Err(e) if is_not_found(&e) => Ok(None),
                Err(e) => Err(request_error(&k, e)),
            }
        })
    }

    /// The `concurrency` option ([`CONCURRENCY`]; default
    /// [`zv_core::store::DEFAULT_CONCURRENCY`]).
    fn concurrency(&self) -> usize {
        self.concurrency
    }

    /// [`zv_core::store::DEFAULT_COALESCE_GAP`]: a request costs tens of milliseconds, a
    /// megabyte on the way costs about as much.
    fn coalesce_gap(&self) -> u64 {
        zv_core::store::DEFAULT_COALESCE_GAP
    }
}

impl ObjectStore {
    fn put(&self, key: &StoreKey, value: Bytes, mode: PutMode) -> StoreResult<()> {
        self.refuse_write(key.as_str())?;
        let path = self.path(key.as_str())?;
        let client = self.client.clone();
        let k = key.to_string();
        if matches!(mode, PutMode::Overwrite) && value.len() as u64 >= self.multipart.threshold {
            let (part, in_flight) = (self.multipart.part_size as usize, self.concurrency);
            return self.run(key.as_str(), async move {
                put_multipart(client.as_ref(), &path, value, part, in_flight)
                    .await
                    .map_err(|e| request_error(&k, e))
            });
        }
        self.run(key.as_str(), async move {
            let options = PutOptions {
                mode,
                ..PutOptions::default()
            };
            match client
                .put_opts(&path, PutPayload::from_bytes(value), options)
                .await
            {
                Ok(_) => Ok(()),
                Err(object_store::Error::AlreadyExists { .. }) => {
                    Err(StoreError::AlreadyExists { key: k })
                }
                Err(e) => Err(request_error(&k, e)),
            }
        })
    }
}

/// Uploads `value` to `path` in parts of `part` bytes (the last may be smaller), at most
/// `in_flight` at once; the value appears when the upload completes. A part that fails for
/// good aborts the upload (the server drops the parts sent), and its error is returned.
async fn put_multipart(
    client: &dyn object_store::ObjectStore,
    path: &Path,
    value: Bytes,
    part: usize,
    in_flight: usize,
) -> object_store::Result<()> {
    let mut upload = client.put_multipart(path).await?;
    let parts: Vec<_> = (0..value.len().div_ceil(part.max(1)))
        .map(|i| {
            let range = i * part..((i + 1) * part).min(value.len());
            upload.put_part(PutPayload::from_bytes(value.slice(range)))
        })
        .collect();
    let sent: object_store::Result<Vec<()>> = futures_util::stream::iter(parts)
        .buffered(in_flight.max(1))
        .try_collect()
        .await;
    let done = match sent {
        Ok(_) => upload.complete().await.map(|_| ()),
        Err(e) => Err(e),
    };
    if let Err(e) = done {
        // the parts sent are dropped with the upload; the first error is the one reported
        let _ = upload.abort().await;
        return Err(e);
    }
    Ok(())
}

impl WritableStore for ObjectStore {
    fn set(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.put(key, value, PutMode::Overwrite)
    }

    fn delete(&self, key: &StoreKey) -> StoreResult<()> {
        self.refuse_write(key.as_str())?;
        let path = self.path(key.as_str())?;
        let client = self.client.clone();
        let k = key.to_string();
        self.run(key.as_str(), async move {
            match client.delete(&path).await {
                Ok(()) => Ok(()),
                Err(e) if is_not_found(&e) => Ok(()),
                Err(e) => Err(request_error(&k, e)),
            }
        })
    }

    /// A completed PUT is durable: nothing to do.
    fn sync(&self) -> StoreResult<()> {
        Ok(())
    }
}

impl ListableStore for ObjectStore {
    fn list_prefix(&self, prefix: &StorePrefix) -> StoreResult<Vec<StoreKey>> {
        self.refuse_list(prefix)?;
        let at = self.prefix_path(prefix)?;
        let client = self.client.clone();
        let p = prefix.to_string();
        let paths = self.run(prefix.as_str(), async move {
            client
                .list(at.as_ref())
                .map_ok(|meta| meta.location)
                .try_collect::<Vec<Path>>()
                .await
                .map_err(|e| request_error(&p, e))
        })?;
        let mut keys: Vec<StoreKey> = paths.iter().filter_map(|p| self.key_of(p)).collect();
        keys.sort();
        Ok(keys)
    }

    fn list_dir(&self, prefix: &StorePrefix) -> StoreResult<StoreKeysPrefixes> {
        self.refuse_list(prefix)?;
        let at = self.prefix_path(prefix)?;
        let client = self.client.clone();
        let p = prefix.to_string();
        let listed = self.run(prefix.as_str(), async move {
            client
                .list_with_delimiter(at.as_ref())
                .await
                .map_err(|e| request_error(&p, e))
        })?;
        let mut out = StoreKeysPrefixes {
            keys: listed
                .objects
                .iter()
                .filter_map(|m| self.key_of(&m.location))
                .collect(),
            prefixes: Vec::new(),
        };
        for common in &listed.common_prefixes {
            if let Some(name) = common.filename() {
                out.prefixes.push(prefix.child(name)?);
            }
        }
        out.keys.sort();
        out.prefixes.sort();
        out.prefixes.dedup();
        Ok(out)
    }
}

impl Store for ObjectStore {
    /// A conditional PUT (`If-None-Match: *`): of two writers creating `key`, one succeeds and
    /// the other gets [`StoreError::AlreadyExists`].
    fn set_new(&self, key: &StoreKey, value: Bytes) -> StoreResult<()> {
        self.put(key, value, PutMode::Create)
    }

    /// One listing, then batched deletes (S3's `DeleteObjects`, where the service has them).
    fn delete_prefix(&self, prefix: &StorePrefix) -> StoreResult<()> {
        self.refuse_write(prefix.as_str())?;
        let mut paths = Vec::new();
        for key in self.list_prefix(prefix)? {
            paths.push(self.path(key.as_str())?);
        }
        let client = self.client.clone();
        let p = prefix.to_string();
        self.run(prefix.as_str(), async move {
            let stream = futures_util::stream::iter(paths.into_iter().map(Ok)).boxed();
            client
                .delete_stream(stream)
                .try_for_each(|_| futures_util::future::ready(Ok(())))
                .await
                .or_else(|e| {
                    if is_not_found(&e) {
                        Ok(())
                    } else {
                        Err(request_error(&p, e))
                    }
                })
        })
    }
}

/// Opens an object store for a URL of a registered scheme, with the options of
/// [`set_default_options`].
pub fn open_url(url: &StoreUrl) -> Result<Arc<dyn Store>, StoreError> {
    Ok(Arc::new(ObjectStore::open(
        &url.original,
        &config::default_options(),
    )?))
}

/// Does nothing; calling it makes sure this crate (and its registrations) is linked.
#[inline(never)]
pub fn link() {}

inventory::submit! {
    StorePlugin::new("s3", "Amazon S3 or an S3-compatible server (s3://bucket/prefix)", open_url)
}
inventory::submit! {
    StorePlugin::new("gs", "Google Cloud Storage (gs://bucket/prefix)", open_url)
}
inventory::submit! {
    StorePlugin::new("az", "Azure Blob Storage (az://container/prefix)", open_url)
}
inventory::submit! {
    StorePlugin::new("abfs", "Azure Blob Storage (abfs://container@account.dfs.core.windows.net/prefix)", open_url)
}
inventory::submit! {
    StorePlugin::new("abfss", "Azure Blob Storage over TLS (abfss://container@account.dfs.core.windows.net/prefix)", open_url)
}
inventory::submit! {
    StorePlugin::new("http", "a plain HTTP server, read-only, no listing (http://host/path)", open_url)
}
inventory::submit! {
    StorePlugin::new("https", "a plain HTTPS server, read-only, no listing (https://host/path)", open_url)
}
