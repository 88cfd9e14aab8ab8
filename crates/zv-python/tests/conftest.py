"""Shared locations: the fixtures (ZV_FIXTURES, else ../shared/fixtures/zv-0.7 beside the
checkout) and the reference Python (ZV_REFERENCE_PYTHON, else the checkout's .venv-ref).
Missing ones fail the tests that need them: nothing is skipped."""

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def fixtures_dir() -> Path:
    d = Path(os.environ.get("ZV_FIXTURES", ROOT.parent / "shared" / "fixtures" / "zv-0.7"))
    if not d.is_dir():
        pytest.fail(f"fixtures not found at {d} (set ZV_FIXTURES)")
    return d


def fixture_names():
    d = Path(os.environ.get("ZV_FIXTURES", ROOT.parent / "shared" / "fixtures" / "zv-0.7"))
    return sorted(p.name[: -len(".expected.json")] for p in d.glob("*.expected.json"))


@pytest.fixture
def reference_python() -> str:
    p = os.environ.get("ZV_REFERENCE_PYTHON", str(ROOT / ".venv-ref" / "bin" / "python"))
    if not Path(p).exists():
        pytest.fail(f"reference Python {p} not found (set ZV_REFERENCE_PYTHON)")
    return p


def expected(name: str) -> dict:
    return json.loads((fixtures_dir() / f"{name}.expected.json").read_text())


@pytest.fixture
def s3_server():
    """A moto S3 server on a free port of 127.0.0.1 (from ZV_S3_PYTHON, else the checkout's
    .venv-s3, which the README's test command creates), with a bucket ``zv-test``; yields the
    storage options that point zv at it. Missing moto fails the test."""
    import socket
    import subprocess
    import time
    import urllib.request

    python = os.environ.get("ZV_S3_PYTHON", str(ROOT / ".venv-s3" / "bin" / "python"))
    if not Path(python).exists():
        pytest.fail(f"moto's Python {python} not found (set ZV_S3_PYTHON)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([python, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(endpoint + "/", timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("the moto server exited")
                time.sleep(0.05)
        urllib.request.urlopen(urllib.request.Request(endpoint + "/zv-test", method="PUT"), timeout=5).close()
        yield {"aws_endpoint": endpoint, "allow_http": "true", "region": "us-east-1",
               "aws_access_key_id": "zv-test", "aws_secret_access_key": "zv-test"}
    finally:
        proc.kill()
        proc.wait()
