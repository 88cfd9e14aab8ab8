//! Servers on the loopback address for the object-store tests, started and stopped by the
//! tests themselves: an S3 server ([`S3Server`], `moto` in server mode) and a read-only HTTP
//! server over a directory ([`HttpServer`], `tests/interop/http_store_server.py`), both run
//! by [`env::s3_python`]. Each is a guard: dropping it kills the process.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::env;

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

/// Runs `tests/interop/s3_tool.py` with `args`; returns its stdout. Panics with its stderr
/// when it fails.
fn s3_tool(args: &[&str]) -> String {
    let script = env::workspace_root().join("tests/interop/s3_tool.py");
    let out = Command::new(env::s3_python())
        .arg(&script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running s3_tool.py: {e}"));
    assert!(
        out.status.success(),
        "s3_tool.py {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
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
        let text = s3_tool(&[&self.endpoint, "keys", bucket, prefix]);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("s3_tool.py keys: {e}: {text}"))
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

/// A fault: what [`FaultProxy::inject`] does to the requests it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer `503 SlowDown` (a transient failure a client retries).
    Unavailable,
    /// Read half the request body, then reset the connection without an answer.
    Drop,
}

/// The proxy's request counts (`GET /__proxy/stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProxyStats {
    /// Requests by kind (`GET`, `PUT`, `HEAD`, `DELETE`, `POST`, `LIST`).
    pub requests: std::collections::BTreeMap<String, u64>,
    /// All requests.
    pub total: u64,
    /// The most requests in flight at once.
    pub peak_in_flight: u64,
    /// Requests failed on purpose.
    pub faults: u64,
}

/// `tests/interop/fault_proxy.py` in front of an [`S3Server`] on a free port of 127.0.0.1:
/// counts requests, delays each by a fixed time, injects faults. Killed on drop.
#[derive(Debug)]
pub struct FaultProxy {
    endpoint: String,
    port: u16,
    _guard: Guard,
}

impl FaultProxy {
    /// Starts the proxy in front of `upstream` (an endpoint URL) with `delay_ms` per request.
    pub fn start(upstream: &str, delay_ms: u64) -> Self {
        let port = free_port();
        let script = env::workspace_root().join("tests/interop/fault_proxy.py");
        let mut command = Command::new(env::s3_python());
        command.arg(script).arg(port.to_string()).arg(upstream);
        command.args(["--delay-ms", &delay_ms.to_string()]);
        let guard = start(command, port, "the fault proxy");
        Self {
            endpoint: format!("http://127.0.0.1:{port}"),
            port,
            _guard: guard,
        }
    }

    /// The proxy's endpoint URL (`http://127.0.0.1:PORT`), to use in place of the server's.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// `server`'s storage options ([`S3Server::options`]) with this proxy as the endpoint.
    pub fn options(&self, server: &S3Server) -> Vec<(String, String)> {
        let mut out = server.options();
        for (k, v) in &mut out {
            if k == "aws_endpoint" {
                v.clone_from(&self.endpoint);
            }
        }
        out
    }

    /// Fails the `nth` request of `kind` (counted from now, from 1) whose path contains
    /// `contains`, and the `times - 1` after it (`times` 0: every one from the `nth` on).
    pub fn inject(&self, kind: &str, contains: &str, nth: u64, times: u64, fault: Fault) {
        let action = match fault {
            Fault::Unavailable => "503",
            Fault::Drop => "drop",
        };
        let rule = serde_json::json!({
            "kind": kind, "contains": contains, "nth": nth, "times": times, "action": action,
        });
        self.control("POST", "fault", &rule.to_string());
    }

    /// Removes every fault rule.
    pub fn clear(&self) {
        self.control("POST", "clear", "");
    }

    /// Zeroes the counts.
    pub fn reset(&self) {
        self.control("POST", "reset", "");
    }

    /// The counts since the last reset.
    pub fn stats(&self) -> ProxyStats {
        let text = self.control("GET", "stats", "");
        let doc: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("fault proxy stats: {e}: {text}"));
        let number = |k: &str| doc[k].as_u64().unwrap_or(0);
        ProxyStats {
            requests: doc["requests"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(0)))
                        .collect()
                })
                .unwrap_or_default(),
            total: number("total"),
            peak_in_flight: number("peak_in_flight"),
            faults: number("faults"),
        }
    }

    /// One control request (`/__proxy/WHAT`); returns the answer's body.
    fn control(&self, method: &str, what: &str, body: &str) -> String {
        use std::io::{Read, Write};
        let mut stream = TcpStream::connect(("127.0.0.1", self.port))
            .unwrap_or_else(|e| panic!("connecting to the fault proxy: {e}"));
        let request = format!(
            "{method} /__proxy/{what} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .unwrap_or_else(|e| panic!("writing to the fault proxy: {e}"));
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .unwrap_or_else(|e| panic!("reading from the fault proxy: {e}"));
        let (head, rest) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        assert!(
            head.starts_with("HTTP/1.1 200") || head.starts_with("HTTP/1.0 200"),
            "fault proxy {what}: {head}"
        );
        rest.to_owned()
    }
}
