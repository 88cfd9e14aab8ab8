"""Reading 10M points into numpy peaks below 1.5x the size of the arrays returned: no Python
object per point, at most one copy from the decoded chunks. ``scripts/python-memory.py``
writes the store (float32 positions, int64 object ids over 1000 objects, a float32
attribute; 1000 chunks) and reads it whole in a fresh process that reports its peak RSS
(``VmHWM``) before and after the read."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "python-memory.py"


def test_reading_ten_million_points_peaks_below_one_and_a_half_times_the_arrays(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), "--points", "10000000", "--dir",
                          str(tmp_path)], capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    report = json.loads("\n".join(lines[:-1]))
    assert report["points"] == 10_000_000
    # positions 12 B, object id 8 B, attribute 4 B a point
    assert report["arrays_bytes"] == 10_000_000 * 24
    assert report["peak_over_arrays"] < 1.5, lines[-1]
    assert out.returncode == 0, out.stderr
