"""Every array of a Zarr v3 hierarchy, read by zarr-python 3, as {path: sha256 of its values}.

    python zarr_s3_read.py LOCATION [ENDPOINT]

LOCATION is a directory, or an s3:// URL read through fsspec's s3fs from the S3 server at
ENDPOINT (the test server accepts any credentials). Variable-length values hash their items'
reprs; fixed-size arrays hash their bytes in C order.
"""

import hashlib
import json
import sys

import numpy as np
import zarr


def digest(array):
    values = array[...]
    h = hashlib.sha256()
    if values.dtype.kind == "O" or values.dtype.kind == "T":
        for v in np.asarray(values).ravel():
            h.update(repr(v).encode())
    else:
        h.update(np.ascontiguousarray(values).tobytes())
    return h.hexdigest()


def main():
    location = sys.argv[1]
    if location.startswith("s3://"):
        options = {
            "key": "zv-test",
            "secret": "zv-test",
            "client_kwargs": {"endpoint_url": sys.argv[2], "region_name": "us-east-1"},
        }
        root = zarr.open_group(location, mode="r", storage_options=options)
    else:
        root = zarr.open_group(location, mode="r")
    out = {}
    for path, node in root.members(max_depth=None):
        if isinstance(node, zarr.Array):
            out[path] = [list(node.shape), str(node.dtype), digest(node)]
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
