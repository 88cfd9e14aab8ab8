#!/usr/bin/env bash
# Smoke test of scripts/bench/peer.py against both Python peer implementations.
#
# Generates a small input (make_inputs.py), runs every phase of peer.py under
# both virtualenvs and checks each JSON answer. A peer that answers wrongly
# (box count != expected_count, ...) is a finding, printed as a `WRONG:` line,
# not a failure; the test fails (exit 1) only if peer.py itself errors, prints
# something that is not one JSON object, or reports count <= 0.
#
# Env: ZV09_PYTHON, REF_PYTHON  interpreters of the two venvs
#      POINTS POLYLINES LENGTH SEED OBJECTS   input size (20000 200 20 1 100)
#      BIN_CHECK=0   skip the extra box check on a store written with bin_shape 50
#      KEEP=1        keep the scratch directory
set -u
here="$(cd "$(dirname "$0")" && pwd)"
ZV09_PYTHON="${ZV09_PYTHON:-$PWD/.venv-zv09/bin/python}"
REF_PYTHON="${REF_PYTHON:-$PWD/.venv-ref/bin/python}"
POINTS="${POINTS:-20000}" POLYLINES="${POLYLINES:-200}" LENGTH="${LENGTH:-20}"
SEED="${SEED:-1}" OBJECTS="${OBJECTS:-100}" BIN_CHECK="${BIN_CHECK:-1}"

work="$(mktemp -d "${TMPDIR:-/tmp}/zv-peer-test.XXXXXX")"
if [ "${KEEP:-0}" = 1 ]; then echo "scratch: $work"; else trap 'rm -rf "$work"' EXIT; fi

failures=0
wrongs=0

# check NAME JSONFILE RC : validate one answer; print it and any WRONG/NOTE line
check() {
    local name="$1" file="$2" rc="$3" verdict
    verdict="$(python3 - "$name" "$file" "$rc" <<'PY'
import json, sys
name, path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(path).read()
lines = [l for l in text.splitlines() if l.strip()]
try:
    if len(lines) != 1:
        raise ValueError(f"{len(lines)} lines on stdout")
    j = json.loads(lines[0])
    if not isinstance(j, dict):
        raise ValueError("not an object")
except Exception as e:
    print(f"FAIL: {name}: stdout is not one JSON object ({e}): {text[:400]!r}")
    sys.exit(0)
print(json.dumps(j))
if "error" in j:
    print(f"FAIL: {name}: error: {j['error']}")
elif rc != 0:
    print(f"FAIL: {name}: exit status {rc}")
elif "unsupported" in j:
    print(f"NOTE: {name}: unsupported: {j['unsupported']}")
else:
    for k in ("impl", "phase", "seconds", "count"):
        if k not in j:
            print(f"FAIL: {name}: no {k!r} key")
    c = j.get("count", 0)
    if not isinstance(c, int) or c <= 0:
        print(f"FAIL: {name}: count {c!r} is not > 0")
    exp = j.get("expected_count")
    if exp is not None and c != exp:
        extra = f" ({j['wrong']})" if "wrong" in j else ""
        print(f"WRONG: {j.get('impl')} {j['phase']}: count {c} != expected_count {exp}{extra}")
    for k in ("content_ok", "positions_ok", "intensity_ok", "per_object_counts_ok"):
        if j.get(k) is False:
            if k == "intensity_ok" and j.get("attribute_returned") is False:
                print(f"NOTE: {j.get('impl')} {j['phase']}: intensity attribute not returned by this API")
            elif not (k == "content_ok" and exp is not None and c != exp):
                print(f"WRONG: {j.get('impl')} {j['phase']}: {k} is false")
PY
)"
    echo "$verdict"
    case "$verdict" in *"FAIL: "*) failures=$((failures + 1)) ;; esac
    case "$verdict" in *"WRONG: "*) wrongs=$((wrongs + 1)) ;; esac
}

# run NAME PYTHON ARGS... : one peer.py process
run() {
    local name="$1" py="$2"; shift 2
    local out="$work/out.json" rc
    "$py" "$here/peer.py" "$@" >"$out" 2>"$work/$name.stderr"
    rc=$?
    echo "--- $name (exit $rc)"
    check "$name" "$out" "$rc"
    if [ "$rc" != 0 ]; then tail -n 5 "$work/$name.stderr" | sed 's/^/    stderr: /'; fi
}

echo "== inputs: $POINTS points, $POLYLINES polylines x $LENGTH, seed $SEED"
"$REF_PYTHON" "$here/make_inputs.py" --out "$work/in" --points "$POINTS" \
    --polylines "$POLYLINES" --length "$LENGTH" --seed "$SEED" --objects "$OBJECTS" || exit 1
if [ "$BIN_CHECK" = 1 ]; then
    "$REF_PYTHON" "$here/make_inputs.py" --out "$work/in_bins" --points "$POINTS" \
        --polylines 2 --length 2 --seed "$SEED" --objects "$OBJECTS" --bin-shape 50 || exit 1
fi

for peer in zv09 ref; do
    if [ "$peer" = zv09 ]; then py="$ZV09_PYTHON"; else py="$REF_PYTHON"; fi
    echo "== $peer: $py"
    if [ ! -x "$py" ]; then echo "FAIL: $py is not executable"; failures=$((failures + 1)); continue; fi
    pts="$work/$peer.points.zarr"
    run "$peer.write_points.none" "$py" --inputs "$work/in" --store "$work/$peer.none.zarr" \
        --phase write_points --codecs none
    run "$peer.write_points" "$py" --inputs "$work/in" --store "$pts" --phase write_points
    run "$peer.read_points" "$py" --inputs "$work/in" --store "$pts" --phase read_points
    run "$peer.box" "$py" --inputs "$work/in" --store "$pts" --phase box
    run "$peer.read_objects" "$py" --inputs "$work/in" --store "$pts" --phase read_objects
    run "$peer.write_polylines" "$py" --inputs "$work/in" --store "$work/$peer.poly.zarr" \
        --phase write_polylines
    if [ "$BIN_CHECK" = 1 ]; then
        echo "   (extra: store written with bin_shape [50,50,50] < chunk_shape, with object ids)"
        run "$peer.write_points.bins50" "$py" --inputs "$work/in_bins" \
            --store "$work/$peer.bins.zarr" --phase write_points
        run "$peer.box.bins50" "$py" --inputs "$work/in_bins" \
            --store "$work/$peer.bins.zarr" --phase box
    fi
done

# the error path: a read of a store that does not exist must say so as JSON, exit 1
out="$work/err.json"
"$ZV09_PYTHON" "$here/peer.py" --inputs "$work/in" --store "$work/nonexistent.zarr" \
    --phase read_points >"$out" 2>/dev/null
rc=$?
if [ "$rc" = 1 ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if "error" in j else 1)' "$out"; then
    echo "--- error path: ok ($(head -c 160 "$out")...)"
else
    echo "FAIL: error path: exit $rc, stdout: $(cat "$out")"; failures=$((failures + 1))
fi

echo "== $failures failure(s), $wrongs answer(s) flagged WRONG (findings about the peers, not failures)"
[ "$failures" = 0 ]
