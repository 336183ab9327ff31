"""benchmarks/bench_simulation.py: the temporary worktree of ``--baseline-rev``
is made and removed, and the report prints both engines' figures, their ratio
and the targets' shares from the runs it is given.  No simulation is timed here
and no speed is asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_simulation.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_benchmark("bench_simulation")


def _git_worktrees() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "worktree", "list", "--porcelain"],
                          capture_output=True, text=True, check=True).stdout


def test_revision_checkout_is_temporary(bench: ModuleType) -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    with bench._revision_checkout("HEAD") as path:
        assert (path / "simulation" / "engine" / "loop.py").is_file()
        assert str(path) in _git_worktrees()
    assert not path.exists()
    assert str(path) not in _git_worktrees()


def _run(cycles: int, hops: int, wall: float, cpu: float) -> dict:
    return {"first_call": 0.1, "wall": wall, "cpu": cpu, "cycles": cycles,
            "phit_hops": hops, "makespan": None, "peak_mib": 100.0}


def test_report_ratios_and_shares(bench: ModuleType, capsys: pytest.CaptureFixture) -> None:
    new = {"ref": [_run(1000, 16000, 1.0, 1.0)] * 3,
           "sat": [_run(250, 8000, 0.5, 0.5)] * 3,
           "big": [_run(10, 4000, 1.0, 1.0)] * 3}
    old = {"ref": [_run(1000, 16000, 2.0, 2.0)] * 3,
           "sat": [_run(250, 8000, 2.0, 2.0)] * 3,
           "big": [_run(10, 4000, 1.0, 1.0)] * 3}
    bench._report(["ref", "sat", "big"], new, old)
    out = capsys.readouterr().out
    assert "ref: 2.00x the baseline's speed (wall), 2.00x (CPU); pair by pair (wall): " \
           "2.00, 2.00, 2.00" in out
    assert "sat: 4.00x the baseline's speed" in out
    assert "new: saturation cycles/s = 0.50 of the reference's" in out
    assert "baseline: saturation cycles/s = 0.25 of the reference's" in out
    assert "new: 16x16x16 phit-hops/s = 0.25 of the reference's" in out
    assert "baseline: 16x16x16 phit-hops/s = 0.50 of the reference's" in out


def test_unknown_row_is_refused() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--rows", "ref,nope"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert "unknown rows ['nope']" in out.stderr
