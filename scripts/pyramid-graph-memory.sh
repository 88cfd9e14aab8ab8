#!/usr/bin/env bash
# Peak memory of a graph pyramid build: a random graph of N nodes (default 2M, uniform in
# [0, 1000)^3) with K edges per node (default 3) is imported (chunks of 100) and
# `zv pyramid --levels 2 --chunk-scale 2` runs under /usr/bin/time -v, twice: with edges that
# stay in their chunk (`local`) and with edges that mostly cross chunks (`crossing`, stored
# as level-wide cross-chunk records). Prints time and peak RSS of each build; no limit is
# enforced (docs/pyramids.md quotes the figures).
#
# The import's peak RSS is printed too (it holds the level's cross-chunk records).
#
# Usage: scripts/pyramid-graph-memory.sh [N] [K] [DIR]   (ZV_IO_PYTHON: python with numpy,
# default .venv-io/bin/python; ZV_FORMAT_VERSION: the stores' layout, 0.9 (default) or 0.7)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
k=${2:-3}
dir=${3:-}
python=${ZV_IO_PYTHON:-.venv-io/bin/python}
version=${ZV_FORMAT_VERSION:-0.9}
cargo build --release -q -p zv-cli
work=$(mktemp -d ${dir:+-p "$dir"})
trap 'rm -rf "$work"' EXIT
printf '%-10s %10s %12s %10s %12s\n' edges edges seconds "peak MiB" "import MiB"
for kind in local crossing; do
  mkdir -p "$work/$kind"
  count=$("$python" scripts/bench/make_graph.py "$n" "$k" "$kind" "$work/$kind" | sed 's/.*nodes, \([0-9]*\) edges.*/\1/')
  /usr/bin/time -v ./target/release/zv -q import "$work/$kind/nodes.csv" "$work/$kind/g.zarr" \
    --edges "$work/$kind/edges.csv" --chunk-shape 100,100,100 --format-version "$version" \
    2>"$work/$kind/import.log" || { cat "$work/$kind/import.log" >&2; exit 1; }
  import_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$kind/import.log")
  /usr/bin/time -v ./target/release/zv -q pyramid "$work/$kind/g.zarr" --levels 2 --chunk-scale 2 \
    2>"$work/$kind/time.log"
  secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/$kind/time.log")
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/$kind/time.log")
  printf '%-10s %10s %12s %10s %12s\n' "$kind" "$count" "$secs" "$((kb / 1024))" \
    "$((import_kb / 1024))"
  rm -rf "${work:?}/$kind"
done
