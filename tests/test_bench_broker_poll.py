"""benchmarks/bench_broker_poll.py keeps working: a real worker on the filesystem
broker, every run finished and reported (one setting: each costs a worker start).
Figures are printed, never asserted (speed is measured, not tested)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.processes
def test_the_broker_poll_benchmark_reports_its_runs():
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_broker_poll.py", "--polls", "100", "--runs",
         "2", "--rounds", "1", "--idle-seconds", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 100 |")]
    assert [row.split("|")[1].strip() for row in rows] == ["100"], result.stdout
    assert "1 rounds x 2 runs per setting" in result.stdout
