#!/usr/bin/env bash
# The whole zv test suite, on a fresh machine (Rust toolchain, gcc, Python 3.11 with pip).
# Creates .venv with zarr-python 3 from PyPI for the interoperability tests, then runs
# formatting and lint checks, every test of the workspace, and the minimal-feature build.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# zarr-python for the interoperability tests.
if ! .venv/bin/python -c 'import zarr, sys; sys.exit(0 if zarr.__version__.startswith("3") else 1)' 2>/dev/null; then
  step "creating .venv with zarr-python 3 from PyPI"
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'zarr>=3.1,<4' 'numcodecs>=0.15' 'google-crc32c>=1.5'
fi
export ZV_PYTHON="$PWD/.venv/bin/python"
"$ZV_PYTHON" -c 'import zarr; print("zarr-python", zarr.__version__)'

# The shared fixtures must be beside the checkout.
if [ ! -d ../shared/fixtures/zv-0.7 ] && [ -z "${ZV_FIXTURES:-}" ]; then
  echo "error: ../shared/fixtures/zv-0.7 not found (set ZV_FIXTURES)" >&2
  exit 1
fi

have() { cargo "$1" --version >/dev/null 2>&1 || rustup component add "$2" >/dev/null 2>&1; }

if have fmt rustfmt; then
  step "cargo fmt --check"
  cargo fmt --all -- --check
else
  echo "warning: rustfmt is not installed and could not be added; skipping the format check" >&2
fi

if have clippy clippy; then
  step "cargo clippy (all targets, warnings are errors)"
  cargo clippy --workspace --all-targets --locked -- -D warnings
else
  echo "warning: clippy is not installed and could not be added; skipping the lint check" >&2
fi

step "cargo test (workspace)"
cargo test --workspace --locked

step "minimal build: zv-format with only the memory store and zstd (no blosc)"
cargo test -p zv-format --no-default-features --features mem,zstd --locked --test features
if cargo tree -p zv-format --no-default-features --features mem,zstd -e normal,build | grep -q blosc; then
  echo "error: blosc is part of the minimal build" >&2
  exit 1
fi

step "all tests passed"
