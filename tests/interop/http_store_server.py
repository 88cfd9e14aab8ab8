"""A read-only HTTP server over a store directory, for zv's HTTP store tests.

    python http_store_server.py PORT DIR

Python's `http.server` (SimpleHTTPRequestHandler) with what an object-store client needs and
it lacks: byte ranges (`Range: bytes=a-b`, `a-`, `-n`; 206 with Content-Range, 416 when the
range does not fit) and files only (a directory is 404, not an HTML listing). Listens on
127.0.0.1 only.
"""

import http.server
import os
import re
import sys

RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404, "not a file")
            return None
        size = os.path.getsize(path)
        f = open(path, "rb")
        header = self.headers.get("Range")
        if header is None:
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("Last-Modified", self.date_time_string(int(os.path.getmtime(path))))
            self.end_headers()
            return f
        m = RANGE.match(header.strip())
        span = None
        if m and m.group(1):
            first = int(m.group(1))
            last = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            if first < size and last >= first:
                span = (first, last)
        elif m and m.group(2):
            n = int(m.group(2))
            if n > 0 and size > 0:
                span = (max(size - n, 0), size - 1)
        if span is None:
            f.close()
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        start, end = span
        f.seek(start)
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self._remaining = end - start + 1
        return f

    def copyfile(self, source, outputfile):
        remaining = getattr(self, "_remaining", None)
        if remaining is None:
            return super().copyfile(source, outputfile)
        self._remaining = None
        outputfile.write(source.read(remaining))


class Server(http.server.ThreadingHTTPServer):
    # the store keeps many requests in flight: the default backlog of 5 refuses connections
    # when the machine is busy (the client then gives up after its retries)
    request_queue_size = 256
    daemon_threads = True


def main():
    port, directory = int(sys.argv[1]), sys.argv[2]
    handler = lambda *a, **k: Handler(*a, directory=directory, **k)  # noqa: E731
    server = Server(("127.0.0.1", port), handler)
    server.serve_forever()


if __name__ == "__main__":
    main()
