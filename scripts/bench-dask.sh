#!/usr/bin/env bash
# Dask write throughput (1 and 2 workers against the single-process writer) and the commit's
# cost by parts and points: scripts/bench/dask_write.py on the Python package in release mode
# (.venv-py, made by scripts/test.sh).
#
#   scripts/bench-dask.sh [DIR] [POINTS] [REPS] [--streamlines S] [--streamlines-only] [--pyramid]
#                                                   (DIR on tmpfs by default)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/dev/shm/zv-bench-dask}
POINTS=${2:-5000000}
REPS=${3:-3}
VIRTUAL_ENV="$PWD/.venv-py" CARGO_TARGET_DIR="$PWD/target" \
  .venv-py/bin/maturin develop --release --quiet -m crates/zv-python/Cargo.toml --locked
rm -rf "$DIR"
.venv-py/bin/python scripts/bench/dask_write.py --dir "$DIR" --points "$POINTS" --reps "$REPS" "${@:4}" 2>/dev/null
rm -rf "$DIR"
