//! Servers on the loopback address for the object-store tests, started and stopped by the
//! tests themselves: an S3 server ([`S3Server`], `moto` in server mode) and a read-only HTTP
//! server over a directory ([`HttpServer`], `tests/interop/http_store_server.py`), both run
//! by [`env::s3_python`]; a fault-injecting proxy in front of a server ([`FaultProxy`]); the
//! Azure Blob emulator ([`AzuriteServer`], Azurite) and a Google Cloud Storage emulator
//! ([`GcsServer`], fake-gcs-server). Each is a guard: dropping it kills the process.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::env;

mod cloud;
mod proxy;

pub use cloud::{AzuriteServer, GcsServer, AZURITE_ACCOUNT, AZURITE_ACCOUNT_KEY};
pub use proxy::{Fault, FaultProxy, ProxyStats};

/// How long a server may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A child process killed (and reaped) on drop, and the file its stderr went to (removed
/// then too).
#[derive(Debug)]
struct Guard(Child, PathBuf);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_file(&self.1);
    }
}

/// A free TCP port on 127.0.0.1 (free when asked; the server binds it right after).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local address").port()
}

/// Starts `command` listening on `port` and waits until it accepts connections. Its stderr
/// (a line per request, for moto) goes to a file, shown if it exits early.
fn start(mut command: Command, port: u16, what: &str) -> Guard {
    let log = std::env::temp_dir().join(format!("zv-test-server-{port}.log"));
    let file =
        std::fs::File::create(&log).unwrap_or_else(|e| panic!("creating {}: {e}", log.display()));
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(file)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    let mut guard = Guard(child, log);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let started = Instant::now();
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return guard;
        }
        if let Ok(Some(status)) = guard.0.try_wait() {
            let text = std::fs::read_to_string(&guard.1).unwrap_or_default();
            panic!("{what} exited before listening on port {port}: {status}\n{text}");
        }
        assert!(
            started.elapsed() < START_TIMEOUT,
            "{what} did not listen on port {port} within {START_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `tests/interop/SCRIPT` with `python` and `args`; returns its stdout. Panics with its
/// stderr when it fails.
fn run_tool(python: &Path, script: &str, args: &[&str]) -> String {
    let path = env::workspace_root().join("tests/interop").join(script);
    let out = Command::new(python)
        .arg(&path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `tests/interop/s3_tool.py` (boto3) with `args`.
fn s3_tool(args: &[&str]) -> String {
    run_tool(&env::s3_python(), "s3_tool.py", args)
}

/// A JSON list of keys printed by a tool.
fn parse_keys(script: &str, text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{script} keys: {e}: {text}"))
}

/// An S3 server (`python -m moto.server`) on a free port of 127.0.0.1, killed on drop.
#[derive(Debug)]
pub struct S3Server {
    endpoint: String,
    _guard: Guard,
}

impl S3Server {
    /// Starts the server and waits until it listens.
    pub fn start() -> Self {
        let port = free_port();
        let mut command = Command::new(env::s3_python());
        command.args([
            "-m",
            "moto.server",
            "-H",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ]);
        let guard = start(command, port, "the moto S3 server");
        Self {
            endpoint: format!("http://127.0.0.1:{port}"),
            _guard: guard,
        }
    }

    /// The endpoint URL (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Creates a bucket (with boto3).
    pub fn create_bucket(&self, bucket: &str) {
        s3_tool(&[&self.endpoint, "mkbucket", bucket]);
    }

    /// Uploads every file under `dir` to `bucket` as `prefix/relative/path` (with boto3).
    pub fn upload_dir(&self, bucket: &str, prefix: &str, dir: &Path) {
        let dir = dir.to_string_lossy();
        s3_tool(&[&self.endpoint, "upload", bucket, prefix, &dir]);
    }

    /// Downloads every key under `prefix/` of `bucket` to `dir` (with boto3), `dir/rest/of/key`.
    pub fn download_dir(&self, bucket: &str, prefix: &str, dir: &Path) {
        let dir = dir.to_string_lossy();
        s3_tool(&[&self.endpoint, "download", bucket, prefix, &dir]);
    }

    /// The keys under `prefix/` of `bucket` (listed with boto3), sorted.
    pub fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        parse_keys(
            "s3_tool.py",
            &s3_tool(&[&self.endpoint, "keys", bucket, prefix]),
        )
    }

    /// The storage options that point an `s3://` store at this server (endpoint, plain HTTP,
    /// region, the test credentials), as `(key, value)` pairs.
    pub fn options(&self) -> Vec<(String, String)> {
        [
            ("aws_endpoint", self.endpoint.as_str()),
            ("allow_http", "true"),
            ("region", "us-east-1"),
            ("aws_access_key_id", "zv-test"),
            ("aws_secret_access_key", "zv-test"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    }
}

/// A read-only HTTP server over a directory (`tests/interop/http_store_server.py`: files
/// only, byte ranges) on a free port of 127.0.0.1, killed on drop.
#[derive(Debug)]
pub struct HttpServer {
    url: String,
    _guard: Guard,
}

impl HttpServer {
    /// Serves `dir` and waits until the server listens.
    pub fn start(dir: &Path) -> Self {
        let port = free_port();
        let script = env::workspace_root().join("tests/interop/http_store_server.py");
        let mut command = Command::new(env::s3_python());
        command.arg(script).arg(port.to_string()).arg(dir);
        let guard = start(command, port, "the HTTP store server");
        Self {
            url: format!("http://127.0.0.1:{port}"),
            _guard: guard,
        }
    }

    /// The URL of the served directory (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.url
    }
}
