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
