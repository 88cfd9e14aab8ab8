#!/usr/bin/env python3
"""Several stores read by the 0.7.0 reference, in one process.

    python reference_dumps.py TOOLS_DIR STORE OUT.json [STORE OUT.json ...]

Runs the shared ``dump_store.py`` (in TOOLS_DIR) on each STORE, writing its
"zv-dump/1" reading to the OUT.json after it, as ``dump_store.py STORE -o OUT.json``
does: one interpreter and one import of the reference for all of them (the import is
about half of a small store's dump). Exits non-zero, naming the store, at the first
store the tool fails on.

Runs in the virtualenv that has the reference ``zarr-vectors==0.7.0`` (``.venv-ref``).
"""

from __future__ import annotations

import importlib.util
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3 or len(argv) % 2 == 0:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("dump_store", f"{argv[0]}/dump_store.py")
    dump_store = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dump_store)
    pairs = argv[1:]
    for store, out in zip(pairs[::2], pairs[1::2]):
        status = dump_store.main([store, "-o", out])
        if status:
            print(f"dump_store.py {store}: exit status {status}", file=sys.stderr)
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
