"""Tractography files written and read by nibabel, for zv-io's TRK and TCK tests.

    streamlines_interop.py write DIR    random streamlines as DIR/nib.trk (with per-point
                                        scalars `fa`, `rgb` and a per-streamline property
                                        `len`, under a non-trivial voxel-to-RAS affine) and
                                        DIR/nib.tck
    streamlines_interop.py read FILE    what nibabel's `streamlines` API reads (RAS+mm), as
                                        JSON: streamlines, data_per_point, data_per_streamline

Floats are printed as Python floats (float32 values widened exactly).
"""
import json
import os
import sys

import numpy as np
import nibabel as nib
from nibabel.streamlines import Field, Tractogram
from nibabel.streamlines.tck import TckFile
from nibabel.streamlines.trk import TrkFile


def write(d):
    rng = np.random.default_rng(13)
    lines = [rng.uniform(-60, 60, (int(rng.integers(2, 30)), 3)).astype(np.float32)
             for _ in range(25)]
    fa = [rng.uniform(0, 1, (len(s), 1)).astype(np.float32) for s in lines]
    rgb = [rng.uniform(0, 255, (len(s), 3)).astype(np.float32) for s in lines]
    length = rng.uniform(0, 100, (len(lines), 1)).astype(np.float32)
    t = Tractogram(lines, data_per_point={"fa": fa, "rgb": rgb},
                   data_per_streamline={"len": length}, affine_to_rasmm=np.eye(4))
    aff = np.array([[2.0, 0, 0, -40], [0, 2.0, 0, -50], [0, 0, 2.5, -75], [0, 0, 0, 1]])
    header = {Field.VOXEL_TO_RASMM: aff, Field.VOXEL_SIZES: np.array([2.0, 2.0, 2.5]),
              Field.DIMENSIONS: np.array([40, 50, 60]), Field.VOXEL_ORDER: b"RAS"}
    TrkFile(t, header=header).save(os.path.join(d, "nib.trk"))
    TckFile(Tractogram(lines, affine_to_rasmm=np.eye(4))).save(os.path.join(d, "nib.tck"))


def read(path):
    t = nib.streamlines.load(path).tractogram
    out = {
        "streamlines": [np.asarray(s, dtype=np.float64).tolist() for s in t.streamlines],
        "data_per_point": {k: [np.asarray(x, dtype=np.float64).tolist() for x in v]
                           for k, v in t.data_per_point.items()},
        "data_per_streamline": {k: np.asarray(v, dtype=np.float64).tolist()
                                for k, v in t.data_per_streamline.items()},
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    cmd, arg = sys.argv[1], sys.argv[2]
    {"write": write, "read": read}[cmd](arg)
