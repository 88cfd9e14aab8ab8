#!/usr/bin/env bash
# The Python package against zarr-vectors 0.9.2's Python API, same inputs, same run: numpy
# reads of the suite's 1M points (with an attribute) and of its 1% box. 0.9.2's read_points
# with a box or none returns positions and attributes, no object ids: the like-for-like rows
# are zv's "no ids" ones; zv's reads with each point's object id are printed beside.
#
#   scripts/bench-python.sh [DIR] [REPS]     (DIR on tmpfs by default; REPS 5)
#
# Builds the zv CLI and the Python package in release mode (into .venv-py, made by
# scripts/test.sh), runs `zv bench suite` for the inputs, zv's point store and the peer's
# figures (.venv-zv09, also made by scripts/test.sh), then times `zv.open(...)[0].points()`
# and the box with scripts/bench/python_reads.py, and prints min / median and the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/dev/shm/zv-bench-python}
REPS=${2:-5}
cargo build --release --locked -p zv-cli
VIRTUAL_ENV="$PWD/.venv-py" CARGO_TARGET_DIR="$PWD/target" \
  .venv-py/bin/maturin develop --release --quiet -m crates/zv-python/Cargo.toml --locked
rm -rf "$DIR"
./target/release/zv bench suite --dir "$DIR" --reps "$REPS" --quiet \
  --phases read_points,box --peers zv09 --peer-phases write_points,read_points,box --json "$DIR/suite.json" >/dev/null
.venv-py/bin/python scripts/bench/python_reads.py --store "$DIR/zv-points.zarr" \
  --inputs "$DIR/inputs" --reps "$REPS" > "$DIR/python.json"
python3 - "$DIR/suite.json" "$DIR/python.json" <<'PY'
import json, statistics, sys
suite, py = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
figs = suite["figures"]
def peer(label):
    if f"zv09: {label}" in figs:
        return figs[f"zv09: {label}"]
    raise SystemExit(f"no zarr-vectors 0.9.2 figure for {label!r} in {list(figs)}")
print(f"{'figure':52} {'min s':>9} {'median s':>9}")
rows = [("read all points, no ids", "read_points_no_ids", "read all points"),
        ("1% box, no ids", "box_no_ids", "1% box"),
        ("read all points + object ids", "read_points", "read all points"),
        ("1% box + object ids", "box", "1% box")]
for name, key, label in rows:
    mine = py[key]
    z = peer(label)
    zmin, zmed = min(mine), statistics.median(mine)
    print(f"{'zv (Python) ' + name:52} {zmin:9.4f} {zmed:9.4f}")
    print(f"{'zarr-vectors 0.9.2 (Python, no ids) ' + label:52} {z['min']:9.4f} {z['median']:9.4f}")
    print(f"{'  0.9.2 / zv':52} {z['min'] / zmin:9.2f} {z['median'] / zmed:9.2f}")
print(f"points read: {py['count_points']}, in the box: {py['count_box']}")
print(f"(zv's Rust call, same run: read all points {figs['read all points']['median']:.4f} s, "
      f"1% box {figs['1% box']['median']:.4f} s, medians)")
PY
