"""An HTTP proxy in front of an S3 server, for zv's object-store tests and benchmark: it counts
requests, delays each by a fixed time, and injects faults.

    python fault_proxy.py PORT UPSTREAM [--delay-ms MS] [--max-in-flight N]

Listens on 127.0.0.1:PORT and forwards every request to UPSTREAM (`http://127.0.0.1:P`, the
moto server), headers and body unchanged (S3 signatures stay valid: the Host header is the
client's). Requests under `/__proxy/` are the proxy's own, never forwarded:

    GET  /__proxy/stats   {"requests": {KIND: n}, "total": n, "peak_in_flight": n,
                           "faults": n}: the requests forwarded (or failed on purpose)
                           since the last reset, by kind; the most in flight at once
    POST /__proxy/reset   zero the counts (the faults and the delay stay)
    POST /__proxy/delay   body {"ms": 20}: every forwarded request waits this long first
    POST /__proxy/fault   body {"kind": "PUT", "contains": "0/vertices/", "nth": 1,
                           "times": 1, "action": "503" | "drop"}: the nth request of that
                           kind whose path contains the text (counted from when the rule is
                           set, from 1), and the times - 1 after it (times 0: every one from
                           the nth on), answered 503 (SlowDown), or dropped: the proxy
                           reads half the request body, then resets the connection without
                           an answer
    POST /__proxy/clear   remove every fault rule

Kinds: GET, PUT, HEAD, DELETE, POST, and LIST (a GET of a bucket, e.g. ListObjectsV2).
Threads: one per connection, so requests in flight wait out their delays together. With
`--max-in-flight N`, at most N requests are served at once (the others wait their turn before
they are counted; the proxy's own requests never wait): a client that opens thousands of
connections at once (zarr-vectors 0.9.2 gathers every request of a read) would otherwise have
thousands of Python threads contend for the interpreter, which once starved the proxy until
its clients gave up. 0 (the default) sets no limit.
"""

import http.client
import http.server
import json
import socket
import struct
import sys
import threading
import time
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-connection", "proxy-authenticate", "proxy-authorization"}


class State:
    def __init__(self, delay_ms):
        self.lock = threading.Lock()
        self.delay = delay_ms / 1000.0
        self.counts = {}
        self.in_flight = 0
        self.peak = 0
        self.faults_done = 0
        self.rules = []

    def reset(self):
        with self.lock:
            self.counts = {}
            self.peak = self.in_flight
            self.faults_done = 0

    def stats(self):
        with self.lock:
            return {"requests": dict(self.counts), "total": sum(self.counts.values()),
                    "peak_in_flight": self.peak, "faults": self.faults_done}

    def begin(self, kind, path):
        """Counts a request; returns the fault action to take, if any."""
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            for rule in self.rules:
                if rule["kind"] != kind or rule.get("contains", "") not in path:
                    continue
                rule["seen"] += 1
                nth, times = rule.get("nth", 1), rule.get("times", 1)
                if rule["seen"] >= nth and (times == 0 or rule["seen"] < nth + times):
                    self.faults_done += 1
                    return rule["action"]
            return None

    def end(self):
        with self.lock:
            self.in_flight -= 1


def kind_of(method, path):
    parts = urllib.parse.urlsplit(path)
    if method == "GET" and parts.path.strip("/").count("/") == 0:
        return "LIST"
    return method


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # answers go out at once (TCP_NODELAY), as a real server's do: with Nagle's algorithm the
    # body of an answer waited for the client's delayed acknowledgement of its headers, up to
    # 40 ms more on some requests, a delay that was not the one asked for
    disable_nagle_algorithm = True
    # an idle kept-alive connection is closed after this many seconds, so that clients that
    # open many connections (connection pools of two benchmarked programs) do not leave a
    # thread each waiting on them: thousands of such threads once starved the proxy
    timeout = 30
    state = None
    slots = None
    upstream = None
    local = threading.local()

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.handle_any()

    do_PUT = do_POST = do_HEAD = do_DELETE = do_GET

    def reply(self, status, body=b"", content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def read_body(self, partial=False):
        length = self.headers.get("Content-Length")
        if length is not None:
            n = int(length)
            return self.rfile.read(n // 2 if partial else n)
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
                if partial:
                    return out
        return b""

    def control(self):
        body = self.read_body()
        path = self.path[len("/__proxy/"):]
        if path == "stats":
            return self.reply(200, json.dumps(self.state.stats()).encode())
        if path == "reset":
            self.state.reset()
        elif path == "delay":
            self.state.delay = json.loads(body)["ms"] / 1000.0
        elif path == "fault":
            rule = json.loads(body)
            rule["seen"] = 0
            with self.state.lock:
                self.state.rules.append(rule)
        elif path == "clear":
            with self.state.lock:
                self.state.rules = []
        else:
            return self.reply(404, b'{"error": "unknown control"}')
        return self.reply(200, b"{}")

    def connection_to_upstream(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            u = urllib.parse.urlsplit(self.upstream)
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
            self.local.conn = conn
        return conn

    def drop(self):
        """Reads half the body, then resets the connection (no answer)."""
        self.read_body(partial=True)
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def handle_any(self):
        if self.path.startswith("/__proxy/"):
            return self.control()
        if self.slots is None:
            return self.serve()
        with self.slots:
            return self.serve()

    def serve(self):
        kind = kind_of(self.command, self.path)
        action = self.state.begin(kind, self.path)
        try:
            if self.state.delay:
                time.sleep(self.state.delay)
            if action == "drop":
                return self.drop()
            body = self.read_body()
            if action == "503":
                return self.reply(503, b"<Error><Code>SlowDown</Code><Message>injected by "
                                       b"fault_proxy.py</Message></Error>", "application/xml")
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            if self.command in ("PUT", "POST") or body:
                headers["Content-Length"] = str(len(body))
            status, reason, out_headers, data = self.forward(headers, body)
            self.send_response(status, reason)
            for k, v in out_headers:
                if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                    self.send_header(k, v)
            if self.command == "HEAD":
                length = dict((k.lower(), v) for k, v in out_headers).get("content-length", "0")
                self.send_header("Content-Length", length)
            else:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        finally:
            self.state.end()

    def forward(self, headers, body):
        for attempt in range(2):
            conn = self.connection_to_upstream()
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                return resp.status, resp.reason, resp.getheaders(), data
            except (http.client.HTTPException, OSError):
                # a kept-alive upstream connection closed under us: one fresh try
                conn.close()
                self.local.conn = None
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main():
    port, upstream = int(sys.argv[1]), sys.argv[2]
    delay = 0.0
    if "--delay-ms" in sys.argv:
        delay = float(sys.argv[sys.argv.index("--delay-ms") + 1])
    Handler.state = State(delay)
    Handler.upstream = upstream
    limit = 0
    if "--max-in-flight" in sys.argv:
        limit = int(sys.argv[sys.argv.index("--max-in-flight") + 1])
    Handler.slots = threading.BoundedSemaphore(limit) if limit > 0 else None
    server = Server(("127.0.0.1", port), Handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
