"""benchmarks/bench_booksim.py reads BookSim 2's output and writes the ref
row's configuration in BookSim's units; without a BookSim binary it skips
(``make bench`` runs every script bare).  No BookSim is run here and no
speed is asserted."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_booksim.py"

# The end of a real BookSim 2 run (flatfly 8x8 c=8, injection_rate 0.02).
BOOKSIM_TAIL = """\
Packet latency average = 31.5 (1 samples)
Draining remaining packets ...
Time taken is 4060 cycles
====== Overall Traffic Statistics ======
====== Traffic class 0 ======
Packet latency average = 25.8645 (1 samples)
\tminimum = 20 (1 samples)
\tmaximum = 41 (1 samples)
Network latency average = 25.7144 (1 samples)
\tminimum = 20 (1 samples)
Injected flit rate average = 0.0199147 (1 samples)
\tminimum = 0 (1 samples)
Accepted flit rate average = 0.0199023 (1 samples)
\tminimum = 0 (1 samples)
Hops average = 2.75837 (1 samples)
Total run time 0.929794
"""


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_booksim", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parse_takes_the_overall_statistics_not_a_sample_period(bench):
    figs = bench.parse_booksim(BOOKSIM_TAIL)
    assert figs["cycles"] == 4060
    assert figs["run_time"] == pytest.approx(0.929794)
    assert figs["latency"] == pytest.approx(25.8645)
    assert figs["network_latency"] == pytest.approx(25.7144)
    assert figs["offered"] == pytest.approx(0.0199147)
    assert figs["throughput"] == pytest.approx(0.0199023)
    assert figs["hops"] == pytest.approx(2.75837)


def test_parse_refuses_output_without_the_cycle_count(bench):
    with pytest.raises(RuntimeError, match="Time taken"):
        bench.parse_booksim(BOOKSIM_TAIL.replace("Time taken is 4060 cycles\n", ""))


def test_config_is_the_ref_row_in_booksim_units(bench):
    lines = set(bench.booksim_config(20_000).splitlines())
    for line in ("topology = flatfly;", "k = 8;", "n = 2;", "c = 8;", "xr = 4;", "yr = 2;",
                 "routing_function = adaptive_xyyx;", "num_vcs = 4;", "packet_size = 16;",
                 "injection_rate_uses_flits = 1;", "injection_rate = 0.5;",
                 "traffic = uniform;", "warmup_periods = 1;", "sample_period = 5000;"):
        assert line in lines, line


def test_without_a_binary_it_says_so_and_succeeds():
    env = {k: v for k, v in os.environ.items() if k != "HX_BOOKSIM"}
    out = subprocess.run([sys.executable, str(SCRIPT)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    assert "skipped" in out.stdout
