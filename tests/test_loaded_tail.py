"""benchmarks/loaded_tail.py on a small machine: it dates a loaded point's end against
its injection bound, shows where its last packets wait, and runs the same points on
another checkout (here this one, which must give the very same cycles)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.benchmark_scripts import BENCHMARKS

ROOT = BENCHMARKS.parent


def test_the_tail_is_dated_located_and_compared(tmp_path):
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "loaded_tail.py"), "--sides", "4x4",
         "--concentration", "4", "--size", "16", "--load", "0.5", "--seeds", "0,1",
         "--locate", "--straightforward", str(ROOT)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "HX_DATA_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "injection bound 15,360 cycles" in out  # 15 peers x 64 packets x 16 phits
    ends = [int(e.replace(",", "")) for e in re.findall(r"ends at cycle ([\d,]+)", out)]
    assert len(ends) == 2 and all(e >= 15_360 for e in ends)
    assert "99.9% by" in out and "of the job's packets in flight" in out
    mine = re.search(r"this engine: ([\d,]+)-([\d,]+)", out).groups()
    other = re.search(r"the straightforward loop: ([\d,]+)-([\d,]+)", out).groups()
    assert mine == other  # the same engine in both places
