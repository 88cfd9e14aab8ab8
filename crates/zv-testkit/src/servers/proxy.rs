//! `tests/interop/fault_proxy.py` in front of a server: counts requests, delays them, injects
//! faults.

use std::net::TcpStream;
use std::process::Command;

use super::{free_port, start, Guard, S3Server};
use crate::env;

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
        Self::start_limited(upstream, delay_ms, 0)
    }

    /// [`FaultProxy::start`], serving at most `max_in_flight` requests at once (0: no limit;
    /// the others wait their turn), for clients that open thousands of connections at once.
    pub fn start_limited(upstream: &str, delay_ms: u64, max_in_flight: usize) -> Self {
        let port = free_port();
        let script = env::workspace_root().join("tests/interop/fault_proxy.py");
        let mut command = Command::new(env::s3_python());
        command.arg(script).arg(port.to_string()).arg(upstream);
        command.args(["--delay-ms", &delay_ms.to_string()]);
        command.args(["--max-in-flight", &max_in_flight.to_string()]);
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
