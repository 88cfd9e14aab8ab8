//! From a URL and options to an `object_store` client: which service, which bucket and key
//! prefix, which configuration.
//!
//! Configuration comes, lowest precedence first, from the service's standard environment
//! variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`, read by `object_store`'s `from_env` builders),
//! then from the options map. Option keys are `object_store`'s configuration keys of the
//! service (`aws_endpoint`, `region`, `allow_http`, `google_service_account`,
//! `azure_storage_account_name`, `timeout`, …), plus zv's own [`MAX_RETRIES`],
//! [`RETRY_TIMEOUT`], [`CONCURRENCY`], [`MULTIPART_THRESHOLD`] and [`MULTIPART_PART_SIZE`].

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::path::Path;
use object_store::{ClientConfigKey, RetryConfig};
use zv_core::store::{StoreError, StoreResult};

/// Options of an object store: configuration key → value.
pub type Options = BTreeMap<String, String>;

/// Option: how many times a request that failed transiently (5xx, timeout, connection reset)
/// is retried, with exponential backoff and jitter (default 10).
pub const MAX_RETRIES: &str = "max_retries";

/// Option: seconds after the first attempt of a request past which it is not retried any more
/// (default 180).
pub const RETRY_TIMEOUT: &str = "retry_timeout";

/// Option: how many requests readers and writers keep in flight on the store (default
/// [`zv_core::store::DEFAULT_CONCURRENCY`]); see [`zv_core::store::ReadableStore::concurrency`].
pub const CONCURRENCY: &str = "concurrency";

/// Option: values of at least this many bytes are written by a multipart upload (default
/// [`DEFAULT_MULTIPART_THRESHOLD`]); smaller ones by one PUT.
pub const MULTIPART_THRESHOLD: &str = "multipart_threshold";

/// Option: the size of a multipart upload's parts, the last one excepted (default
/// [`DEFAULT_MULTIPART_PART_SIZE`]; at least [`MIN_MULTIPART_PART_SIZE`], S3's smallest).
pub const MULTIPART_PART_SIZE: &str = "multipart_part_size";

/// The default [`MULTIPART_THRESHOLD`]: 64 MiB.
pub const DEFAULT_MULTIPART_THRESHOLD: u64 = 64 << 20;

/// The default [`MULTIPART_PART_SIZE`]: 16 MiB.
pub const DEFAULT_MULTIPART_PART_SIZE: u64 = 16 << 20;

/// The smallest [`MULTIPART_PART_SIZE`]: 5 MiB (S3 refuses smaller parts but the last).
pub const MIN_MULTIPART_PART_SIZE: u64 = 5 << 20;

/// When and how values are uploaded in parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Multipart {
    /// Values of at least this many bytes go in parts.
    pub threshold: u64,
    /// The part size.
    pub part_size: u64,
}

/// The URL schemes this crate registers.
pub const SCHEMES: [&str; 7] = ["s3", "gs", "az", "abfs", "abfss", "http", "https"];

/// The service behind a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Amazon S3 or an S3-compatible server (`s3://bucket/prefix`).
    S3,
    /// Google Cloud Storage (`gs://bucket/prefix`).
    Gcs,
    /// Azure Blob Storage (`az://container/prefix`, `abfs[s]://container@account…/prefix`).
    Azure,
    /// A plain HTTP(S) server, read-only (`http(s)://host/path`).
    Http,
}

impl Service {
    fn of(scheme: &str) -> Option<Self> {
        Some(match scheme {
            "s3" | "s3a" => Self::S3,
            "gs" => Self::Gcs,
            "az" | "azure" | "abfs" | "abfss" => Self::Azure,
            "http" | "https" => Self::Http,
            _ => return None,
        })
    }
}

/// A client and where the store is inside it.
pub(crate) struct Target {
    pub(crate) client: Arc<dyn object_store::ObjectStore>,
    /// The key prefix of the store in the bucket (empty: the bucket's root).
    pub(crate) prefix: String,
    pub(crate) service: Service,
    /// Requests to keep in flight (option [`CONCURRENCY`]).
    pub(crate) concurrency: usize,
    /// Multipart uploads (options [`MULTIPART_THRESHOLD`], [`MULTIPART_PART_SIZE`]).
    pub(crate) multipart: Multipart,
}

static DEFAULTS: RwLock<Options> = RwLock::new(BTreeMap::new());

/// Sets the options that every store opened by URL through the plugin registry
/// (`zv_core::plugin::open_store`) gets, under any given to [`crate::ObjectStore::open`]:
/// the CLI's `--storage-option KEY=VALUE` flags.
pub fn set_default_options(options: Options) {
    let mut guard = DEFAULTS.write().unwrap_or_else(|p| p.into_inner());
    *guard = options;
}

/// The options set by [`set_default_options`].
pub(crate) fn default_options() -> Options {
    DEFAULTS.read().unwrap_or_else(|p| p.into_inner()).clone()
}

fn open_error(url: &str, reason: impl ToString) -> StoreError {
    StoreError::Open {
        url: url.to_owned(),
        reason: reason.to_string(),
    }
}

/// The retry policy from the options (removing zv's own keys from them).
fn retry_config(url: &str, options: &mut Options) -> StoreResult<RetryConfig> {
    let mut retry = RetryConfig::default();
    if let Some(v) = options.remove(MAX_RETRIES) {
        retry.max_retries = v.parse().map_err(|_| {
            open_error(
                url,
                format!("option {MAX_RETRIES}={v} is not a whole number"),
            )
        })?;
    }
    if let Some(v) = options.remove(RETRY_TIMEOUT) {
        let secs: f64 = v
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| {
                open_error(
                    url,
                    format!("option {RETRY_TIMEOUT}={v} is not a number of seconds"),
                )
            })?;
        retry.retry_timeout = Duration::from_secs_f64(secs);
    }
    Ok(retry)
}

/// Parses an option key as `K`, or an error naming it and the service.
fn key<K: FromStr>(url: &str, service: &str, k: &str) -> StoreResult<K> {
    k.parse().map_err(|_| {
        open_error(
            url,
            format!("unknown storage option `{k}` for {service} (object_store's configuration keys, e.g. for S3 aws_endpoint, region, allow_http)"),
        )
    })
}

/// The client for `url` with `options`.
pub(crate) fn build(url: &str, options: &Options) -> StoreResult<Target> {
    let parsed = url::Url::parse(url).map_err(|e| open_error(url, e))?;
    let service = Service::of(parsed.scheme()).ok_or_else(|| {
        open_error(
            url,
            format!("not an object store URL (schemes: {SCHEMES:?})"),
        )
    })?;
    let mut options = options.clone();
    let retry = retry_config(url, &mut options)?;
    let concurrency = match options.remove(CONCURRENCY) {
        None => zv_core::store::DEFAULT_CONCURRENCY,
        Some(v) => v.parse().ok().filter(|n: &usize| *n >= 1).ok_or_else(|| {
            open_error(
                url,
                format!("option {CONCURRENCY}={v} is not a whole number from 1"),
            )
        })?,
    };
    let multipart = multipart_config(url, &mut options)?;
    let fail = |e: object_store::Error| open_error(url, e);
    let client: Arc<dyn object_store::ObjectStore> = match service {
        Service::S3 => {
            let mut b = AmazonS3Builder::from_env().with_url(url).with_retry(retry);
            for (k, v) in &options {
                b = b.with_config(key::<AmazonS3ConfigKey>(url, "s3://", k)?, v);
            }
            Arc::new(b.build().map_err(fail)?)
        }
        Service::Gcs => {
            let mut b = GoogleCloudStorageBuilder::from_env()
                .with_url(url)
                .with_retry(retry);
            for (k, v) in &options {
                b = b.with_config(key::<GoogleConfigKey>(url, "gs://", k)?, v);
            }
            Arc::new(b.build().map_err(fail)?)
        }
        Service::Azure => {
            let mut b = MicrosoftAzureBuilder::from_env()
                .with_url(url)
                .with_retry(retry);
            for (k, v) in &options {
                b = b.with_config(key::<AzureConfigKey>(url, "az://", k)?, v);
            }
            Arc::new(b.build().map_err(fail)?)
        }
        Service::Http => {
            // An http:// URL given on purpose is allowed (the clouds need allow_http).
            let mut b = HttpBuilder::new()
                .with_url(url)
                .with_retry(retry)
                .with_config(ClientConfigKey::AllowHttp, "true");
            for (k, v) in &options {
                b = b.with_config(key::<ClientConfigKey>(url, "http(s)://", k)?, v);
            }
            Arc::new(b.build().map_err(fail)?)
        }
    };
    // The HTTP client's base URL holds the whole path; the clouds' URLs name the bucket (or
    // container) in the authority and the store's prefix in the path.
    let prefix = match service {
        Service::Http => String::new(),
        _ => Path::from_url_path(parsed.path())
            .map_err(|e| open_error(url, e))?
            .to_string(),
    };
    Ok(Target {
        client,
        prefix,
        service,
        concurrency,
        multipart,
    })
}

/// The multipart options (removed from `options`).
fn multipart_config(url: &str, options: &mut Options) -> StoreResult<Multipart> {
    let mut bytes = |key: &str, default: u64, least: u64| match options.remove(key) {
        None => Ok(default),
        Some(v) => v.parse().ok().filter(|n: &u64| *n >= least).ok_or_else(|| {
            open_error(
                url,
                format!("option {key}={v} is not a whole number of bytes from {least}"),
            )
        }),
    };
    Ok(Multipart {
        threshold: bytes(MULTIPART_THRESHOLD, DEFAULT_MULTIPART_THRESHOLD, 1)?,
        part_size: bytes(
            MULTIPART_PART_SIZE,
            DEFAULT_MULTIPART_PART_SIZE,
            MIN_MULTIPART_PART_SIZE,
        )?,
    })
}
