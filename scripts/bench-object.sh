#!/usr/bin/env bash
# The object-store benchmark: zv against zarr-vectors 0.9.2 on the same S3 server (moto on
# 127.0.0.1) behind a proxy that delays every request by a fixed time and counts them
# (tests/interop/fault_proxy.py), so that latency, not the loopback, dominates as in a real
# bucket. Workloads of `zv bench suite`: write N points, read all, a 1% box, read every object.
# Prints min/median times, request counts, the most requests in flight, and each time as a
# ratio to its floor (requests x delay / concurrency).
#
#   scripts/bench-object.sh [--delay-ms 20] [--points 1000000] [--reps 3] [--no-peers]
#                           [--concurrency N] [--json FILE] [--zv-option KEY=VALUE]...
#                           [--shard-shape S,S,S] [--server moto|s3s]
#
# --server s3s runs s3s-fs (a Rust S3 server over a directory, from crates.io; installed into
# .tools/s3s on first use) instead of moto: moto answers about 300 requests a second, so on
# it the server, not the delay, bounds both programs; s3s-fs answers faster than the delay,
# as a bucket does for a client's requests in flight.
# --concurrency sets the floors' requests in flight; --zv-option passes zv a storage option
# (e.g. concurrency=1: zv's requests in flight limited to its CPU threads, as before zv
# sized its loops by the store). --shard-shape packs every chunk-grid array of both writers'
# ZV 0.9 stores in shards of S chunks per dimension (zv's and 0.9.2's `shard_shape`).
#
# ZV_BIN runs another zv binary (e.g. a build of an earlier commit, to compare two builds on
# the same server); the release build of this checkout by default.
#
# Needs .venv-s3 (scripts/test.sh makes it; or ZV_S3_PYTHON) for moto, and makes
# .venv-zv09-s3 (zarr-vectors 0.9.2 with obstore, its object-store backend) if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

delay=20 points=1000000 reps=3 peers="--peers zv09" concurrency="" json="" shard="" zv_options=()
server=moto
while [ $# -gt 0 ]; do
  case "$1" in
    --delay-ms) delay=$2; shift 2 ;;
    --points) points=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --no-peers) peers=""; shift ;;
    --concurrency) concurrency="--concurrency $2"; shift 2 ;;
    --json) json="--json $2"; shift 2 ;;
    --zv-option) zv_options+=(--storage-option "$2"); shift 2 ;;
    --shard-shape) shard="--shard-shape $2"; shift 2 ;;
    --server) server=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

s3_python=${ZV_S3_PYTHON:-$PWD/.venv-s3/bin/python}
if ! "$s3_python" -c 'import moto, boto3' 2>/dev/null; then
  echo "error: $s3_python has no moto (run scripts/test.sh, or set ZV_S3_PYTHON)" >&2
  exit 1
fi
# the same venv scripts/test.sh makes
if [ -n "$peers" ] && ! .venv-zv09-s3/bin/python -c 'import zarr_vectors, obstore' 2>/dev/null; then
  echo "==> creating .venv-zv09-s3 with zarr-vectors 0.9.2 and obstore from PyPI" >&2
  rm -rf .venv-zv09-s3
  python3 -m venv .venv-zv09-s3
  .venv-zv09-s3/bin/pip install --quiet --disable-pip-version-check 'zarr-vectors==0.9.2' \
    'zarr==3.1.6' 'numcodecs==0.16.6' 'obstore>=0.8'
fi

zv_bin=${ZV_BIN:-}
if [ -z "$zv_bin" ]; then
  echo "==> building zv (release)" >&2
  cargo build --release --quiet -p zv-cli
  zv_bin=target/release/zv
fi

free_port() { "$s3_python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 200); do
    "$s3_python" -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),0.2)" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "error: nothing listens on port $1" >&2; exit 1
}
pids=()
s3s_root=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "$s3s_root" ]; then rm -rf "$s3s_root"; fi
}
trap cleanup EXIT INT TERM

s3_port=$(free_port)
case "$server" in
  moto)
    "$s3_python" -m moto.server -H 127.0.0.1 -p "$s3_port" 2>/dev/null &
    pids+=($!)
    ;;
  s3s)
    if [ ! -x .tools/s3s/bin/s3s-fs ]; then
      echo "==> installing s3s-fs 0.14.1 into .tools/s3s (crates.io)" >&2
      cargo install --quiet s3s-fs@0.14.1 --features binary --root .tools/s3s
    fi
    s3s_root=$(mktemp -d)
    mkdir -p "$s3s_root/bench"
    .tools/s3s/bin/s3s-fs --host 127.0.0.1 --port "$s3_port" --access-key zv-bench \
      --secret-key zv-bench "$s3s_root" >/dev/null 2>&1 &
    pids+=($!)
    ;;
  *) echo "unknown server $server (moto or s3s)" >&2; exit 2 ;;
esac
proxy_port=$(free_port)
"$s3_python" tests/interop/fault_proxy.py "$proxy_port" "http://127.0.0.1:$s3_port" --delay-ms "$delay" 2>/dev/null &
pids+=($!)
wait_port "$s3_port"
wait_port "$proxy_port"
if [ "$server" = moto ]; then
  "$s3_python" tests/interop/s3_tool.py "http://127.0.0.1:$s3_port" mkbucket bench
fi

# zv (object_store), obstore and boto3 read the same variables
export AWS_ENDPOINT_URL="http://127.0.0.1:$proxy_port" AWS_ENDPOINT="http://127.0.0.1:$proxy_port"
export AWS_ALLOW_HTTP=true AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export AWS_ACCESS_KEY_ID=zv-bench AWS_SECRET_ACCESS_KEY=zv-bench
# shellcheck disable=SC2086
"$zv_bin" "${zv_options[@]}" bench object --url s3://bench/run --proxy "http://127.0.0.1:$proxy_port" \
  --delay-ms "$delay" --points "$points" --reps "$reps" $peers $concurrency $json $shard \
  --zv09-python .venv-zv09-s3/bin/python
