"""benchmarks/bench_checkpoint.py on a small machine: it saves a calibration point's
state once, resumes from the file and finds the same result; a run that cannot save
before its end says so. No speed is asserted."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.benchmark_scripts import BENCHMARKS

SMALL = ["--sides", "4x4", "--concentration", "4", "--size", "16", "--load", "0.5"]


def _bench(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HX_DATA_DIR": str(tmp_path)}
    return subprocess.run([sys.executable, str(BENCHMARKS / "bench_checkpoint.py"), *SMALL,
                           *args], capture_output=True, text=True, env=env, timeout=300,
                          check=False)


def test_the_resumed_run_is_the_uninterrupted_run(tmp_path):
    done = _bench(tmp_path, "--save-at", "500", "--cycles", "5000")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the resumed run's result is the uninterrupted run's: yes (5,000 cycles" in done.stdout
    assert "MiB at cycle 2,048" in done.stdout and "write:" in done.stdout
    assert list(tmp_path.glob("bench-checkpoint-*")) == []  # its folder is gone


def test_no_save_before_the_end_is_an_error(tmp_path):
    short = _bench(tmp_path, "--save-at", "4000", "--cycles", "3000")
    assert short.returncode != 0 and "raise --cycles" in short.stderr


def test_a_run_handed_over_several_times_ends_as_the_uninterrupted_run(tmp_path):
    """Each stop is asked within two chunks of its resumption and takes effect at the end
    of a chunk, so three take up to nine chunks, more when chunks run faster than the
    first run's median said: on 20,000 cycles (9 chunks after the save) a fast CI host
    ended the run after two (2026-12-07). 40,000 cycles leave 18."""
    done = _bench(tmp_path, "--save-at", "500", "--cycles", "40000", "--handovers", "3")
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("hand-over"))
    assert "stopped and resumed 3 times, the run ends as the uninterrupted one: yes" in line
    assert "2,048 cycles in a median" in line
