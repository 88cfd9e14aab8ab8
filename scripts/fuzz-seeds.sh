#!/usr/bin/env bash
# Seed corpora for the fuzz targets (fuzz/fuzz_targets/), written to fuzz/corpus/<target>/
# from the reference fixtures ($ZV_FIXTURES, default ../shared/fixtures/zv-0.7): the stored
# blobs of every kind with the small parameter header each target reads first (see the target's
# doc comment), compressed copies for the codec targets, every zarr.json (plus one per
# fill-value form), and zv-geometry/1 documents and PLY/CSV/SWC/STL/OBJ/TRK/TCK files exported from the
# fixtures by `zv export` (LAS/LAZ from small CSV point clouds).
#
# Needs a Python with numpy and numcodecs ($ZV_PYTHON, default .venv/bin/python: the
# zarr-python venv of scripts/test.sh) and the `zv` binary ($ZV_BIN, default: built with
# `cargo build -p zv-cli`). Seeds are content-named, so rerunning adds nothing twice.
set -euo pipefail
cd "$(dirname "$0")/.."

fixtures="${ZV_FIXTURES:-../shared/fixtures/zv-0.7}"
python="${ZV_PYTHON:-.venv/bin/python}"
out="fuzz/corpus"
if [ ! -d "$fixtures" ]; then
  echo "error: fixtures not found at $fixtures (set ZV_FIXTURES)" >&2
  exit 1
fi
mkdir -p "$out"

# zv-geometry/1 documents: each fixture's level 0 exported by zv.
zv="${ZV_BIN:-}"
if [ -z "$zv" ]; then
  cargo build -q -p zv-cli --locked
  zv="target/debug/zv"
fi
mkdir -p "$out/geometry_document"
for store in "$fixtures"/*.zarr; do
  name=$(basename "$store" .zarr)
  "$zv" export "$store" -o "$out/geometry_document/$name.json" || {
    echo "warning: zv export $store failed; no seed from it" >&2
  }
done

# The file formats zv imports: each fixture's level 0 exported in every format that holds its
# geometry (an export a geometry does not fit is skipped), plus ascii PLY.
for fmt in ply csv swc stl obj trk tck; do
  mkdir -p "$out/io_$fmt"
  for store in "$fixtures"/*.zarr; do
    name=$(basename "$store" .zarr)
    "$zv" export "$store" -o "$out/io_$fmt/$name.$fmt" 2>/dev/null || rm -f "$out/io_$fmt/$name.$fmt"
  done
done
for store in "$fixtures"/*.zarr; do
  name=$(basename "$store" .zarr)
  "$zv" export "$store" -o "$out/io_ply/$name-ascii.ply" --ply-encoding ascii 2>/dev/null ||
    rm -f "$out/io_ply/$name-ascii.ply"
done

# LAS/LAZ: no fixture exports as LAS (object ids, float attributes), so small point clouds of
# the standard dimensions (LAS 1.2 formats 0-3, 1.4 formats 6-8) go CSV -> zv -> LAS and LAZ.
mkdir -p "$out/io_las"
las_tmp=$(mktemp -d)
las_cloud() { # NAME HEADER: 12 rows of the columns in HEADER
  local name=$1 header=$2 i
  {
    echo "$header"
    for i in $(seq 0 11); do
      local row="$i.25,$((i * 3)).5,-$i"
      local n=$(($(tr -cd , <<<"$header" | wc -c) - 2))
      local k
      for k in $(seq 1 "$n"); do row="$row,$(((i + k) % 2))"; done
      echo "$row"
    done
  } >"$las_tmp/$name.csv"
  "$zv" import -q "$las_tmp/$name.csv" "$las_tmp/$name.zv" &&
    "$zv" export "$las_tmp/$name.zv" -o "$out/io_las/$name.las" &&
    "$zv" export "$las_tmp/$name.zv" -o "$out/io_las/$name.laz" ||
    echo "warning: no LAS seed $name" >&2
}
las_cloud f0 "x,y,z,intensity,return_number,number_of_returns,classification,user_data"
las_cloud f3 "x,y,z,intensity,gps_time,red,green,blue,scan_angle_rank"
las_cloud f7 "x,y,z,intensity,gps_time,red,green,blue,scan_angle,overlap,scanner_channel"
las_cloud f8 "x,y,z,gps_time,red,green,blue,nir,scan_angle"
rm -rf "$las_tmp"

"$python" - "$fixtures" "$out" <<'PY'
import hashlib, json, os, struct, sys
import numpy as np
import numcodecs

fixtures, out = sys.argv[1], sys.argv[2]

def seed(target, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def u16(n): return struct.pack("<H", n & 0xFFFF)
def u32(n): return struct.pack("<I", n & 0xFFFFFFFF)

# The data types of fuzz/src/lib.rs DATA_TYPES and zv_core::data_type::ALL_DATA_TYPES.
CODEC_TYPES = ["uint8", "uint16", "int32", "int64", "uint64", "float16", "float32", "float64"]
ALL_TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128", "variable_length_bytes"]

def decode_b2b(raw, codecs):
    """Undo the bytes-to-bytes codecs of a chunk (the fixtures use zstd only)."""
    for c in reversed(codecs):
        name = c["name"]
        if name == "zstd":
            raw = numcodecs.Zstd().decode(raw)
        elif name == "gzip":
            raw = numcodecs.GZip().decode(raw)
        elif name == "blosc":
            raw = numcodecs.Blosc().decode(raw)
        elif name == "crc32c":
            raw = raw[:-4]
    return bytes(raw)

def group_attrs(path):
    try:
        with open(os.path.join(path, "zarr.json")) as f:
            return json.load(f).get("attributes", {})
    except (OSError, ValueError):
        return {}

def vlen_items(raw):
    n = struct.unpack_from("<I", raw, 0)[0]
    pos, items = 4, []
    for _ in range(n):
        k = struct.unpack_from("<I", raw, pos)[0]
        items.append(raw[pos + 4:pos + 4 + k])
        pos += 4 + k
    return items

blobs = []  # (relative path parts, group attributes, array metadata, raw blob)
for store in sorted(os.listdir(fixtures)):
    if not store.endswith(".zarr"):
        continue
    root = os.path.join(fixtures, store)
    docs = []
    for d, _, files in os.walk(root):
        if "zarr.json" not in files:
            continue
        with open(os.path.join(d, "zarr.json"), "rb") as f:
            doc = f.read()
        seed("zarr_json", doc)
        meta = json.loads(doc)
        if meta.get("node_type") == "group":
            docs.append((os.path.relpath(d, root), doc))
            continue
        chunk = os.path.join(d, "c", "0")
        if not os.path.isfile(chunk):
            continue
        with open(chunk, "rb") as f:
            raw = decode_b2b(f.read(), meta["codecs"])
        parts = os.path.relpath(d, root).split(os.sep)
        blobs.append((parts, group_attrs(os.path.dirname(d)), meta, raw))
    # zv metadata: the root, the root then each level, and every array group alone.
    rootdoc = dict(docs).get(".")
    for rel, doc in docs:
        if rel == ".":
            seed("zv_metadata", doc)
        elif "/" not in rel and rootdoc is not None:
            seed("zv_metadata", rootdoc + b"\xff" + doc)
        else:
            seed("zv_metadata", doc)

codec_inputs = []
for parts, attrs, meta, raw in blobs:
    kind = attrs.get("zv_array", "")
    names = set(parts)
    if meta["data_type"] == "variable_length_bytes":
        seed("codec_vlen_bytes", b"\x00" + u16(meta["chunk_grid"]["configuration"]["chunk_shape"][0]) + raw)
        if "manifests" in names:
            sid = attrs.get("sid_ndim", 3)
            items = vlen_items(raw)
            num = attrs.get("num_objects", len(items))
            seed("manifest_vlen", bytes([sid]) + u16(num) + b"".join(u16(len(i)) + i for i in items))
            real = [i if i else b"\x00\x00\x00\x00" for i in items[:num]]
            stream = b"".join(real)
            seed("manifest_stream", bytes([sid, 1]) + u16(len(real)) + stream)
            offs, pos = [], 0
            for i in real:
                offs.append(pos)
                pos += len(i)
            table = b"".join(struct.pack("<q", o) for o in offs)
            seed("manifest_offsets", bytes([sid]) + u16(len(table)) + table + stream)
        continue
    codec_inputs.append(raw)
    if "vertex_fragments" in names or "link_fragments" in names:
        seed("fragment_index", b"\x00" + u32(0) + raw)
    elif kind == "links":
        width = attrs.get("link_width", 2)
        if attrs.get("level_delta", 0) == 0:
            seed("links", bytes([width, 0]) + u32(0) + raw)
        else:
            seed("ragged_links", bytes([width]) + raw)
    elif kind == "cross_chunk_links":
        width, sid = attrs.get("link_width", 2), attrs.get("sid_ndim", 3)
        num = attrs.get("num_links", len(raw) // max(1, 8 * width * (sid + 1)))
        seed("cross_chunk_links", u32(num) + bytes([width, sid]) + raw)
    elif kind == "groups" or "groups" in names:
        pass  # paired below
    elif parts[-1] == "present_mask":
        seed("attributes", bytes([2, 0]) + u32(len(raw)) + b"\x00" + raw)
    elif kind in ("object_attribute", "groupings_attribute"):
        dt = attrs.get("dtype", "float32")
        shape = attrs.get("shape", [0])
        ch = attrs.get("num_channels", 1)
        seed("attributes", bytes([1, ALL_TYPES.index(dt)]) + u32(shape[0]) + bytes([ch]) + raw)
    elif kind in ("attribute", "link_attribute"):
        dt = attrs.get("dtype", "float32")
        size = np.dtype(dt).itemsize
        ch = len(attrs.get("channel_names", [])) or 1
        seed("attributes", bytes([0, ALL_TYPES.index(dt)]) + u32(len(raw) // size // ch) + bytes([ch]) + raw)

# groups: data and offsets of the same level
by_dir = {}
for parts, attrs, meta, raw in blobs:
    if len(parts) >= 2 and parts[-2] == "groups":
        by_dir.setdefault(tuple(parts[:-1]), {})[parts[-1]] = raw
for d in by_dir.values():
    if "data" in d and "offsets" in d:
        seed("groups", u16(len(d["offsets"])) + d["offsets"] + d["data"])

# A dictionary-encoded attribute (the fixtures have none): int32 codes 0, 1, -1 (missing).
dict_attrs = json.dumps({"encoding": "dictionary", "categories": ["a", "b"], "ordered": False,
                         "_FillValue": -1}).encode()
codes = struct.pack("<3i", 0, 1, -1)
seed("attributes", bytes([3, ALL_TYPES.index("int32")]) + u32(3) + b"\x01" + u16(len(dict_attrs)) + dict_attrs + codes)

# Codec frames: a few blobs compressed by each codec, with the element count of the target's
# header (uint8 elements, or the blob's 8-byte words as float64 / int64).
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF

picked = sorted(codec_inputs, key=len)
picked = [picked[i] for i in sorted({0, len(picked) // 3, len(picked) // 2, 2 * len(picked) // 3, len(picked) - 1})]
for raw in picked:
    for dt in ("uint8", "float64", "int32"):
        size = np.dtype(dt).itemsize
        n = len(raw) // size
        if n == 0 or n > 0xFFFF:
            continue
        body = raw[:n * size]
        arr = np.frombuffer(body, dtype=dt)
        head = bytes([CODEC_TYPES.index(dt)]) + u16(n)
        for cname, shuffle in (("zstd", 1), ("lz4", 2), ("blosclz", 0), ("zlib", 1)):
            seed("codec_blosc", head + numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle).encode(arr))
        seed("codec_zstd", head + numcodecs.Zstd(level=3).encode(body))
        seed("codec_gzip", head + numcodecs.GZip(level=5).encode(body))
        seed("codec_crc32c", head + body + struct.pack("<I", crc32c(body)))
        z = numcodecs.Zstd(level=0).encode(body)
        seed("codec_crc32c", bytes([0x80 | CODEC_TYPES.index(dt)]) + u16(n) + z + struct.pack("<I", crc32c(z)))

# zarr.json in every fill-value form, on an array document of each data type.
fills = {
    "bool": [True, False],
    "float16": ["NaN", "Infinity", "-Infinity", "0x7e00", 1.5, 0],
    "float32": ["NaN", "Infinity", "-Infinity", "0x7fc00001", -0.0, 3.25],
    "float64": ["NaN", "-Infinity", "0x7ff8000000000001", 1e300, 0],
    "complex64": [[1.0, "NaN"], ["Infinity", 0.0]],
    "complex128": [[0.5, -2.0], ["0x7ff8000000000000", "-Infinity"]],
    "int8": [-128, 127], "int16": [-1], "int32": [2147483647], "int64": [-9223372036854775808],
    "uint8": [255], "uint16": [0], "uint32": [4294967295], "uint64": [18446744073709551615],
    "variable_length_bytes": ["", "AAEC"],
}
for dt, values in fills.items():
    for v in values:
        codecs = ([{"name": "vlen-bytes", "configuration": {}}] if dt == "variable_length_bytes"
                  else [{"name": "bytes", "configuration": {"endian": "little"}},
                        {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle"}}])
        doc = {"zarr_format": 3, "node_type": "array", "shape": [10, 4], "data_type": dt,
               "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5, 4]}},
               "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
               "fill_value": v, "codecs": codecs, "attributes": {"a": 1},
               "dimension_names": ["x", None]}
        seed("zarr_json", json.dumps(doc).encode())

# whole_store: one seed per fixture (no edits); the fuzzer finds the edits.
for i in range(sum(1 for s in os.listdir(fixtures) if s.endswith(".zarr"))):
    seed("whole_store", bytes([i]))
PY

for d in "$out"/*/; do
  printf '%-22s %4d seeds %6d KiB\n' "$(basename "$d")" "$(ls "$d" | wc -l)" "$(du -sk "$d" | cut -f1)"
done
