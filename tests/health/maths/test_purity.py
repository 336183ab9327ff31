"""health.maths is a pure core: importable without Django, no I/O modules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import health.maths as spares

ROOT = Path(__file__).resolve().parents[3]


def test_imports_without_django():
    code = (
        "import sys, health.maths\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'rest_framework', 'celery', 'requests', 'sqlite3'})\n"
        "assert not bad, bad\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": ""}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)


def test_all_is_complete_and_sorted():
    assert sorted(spares.__all__) == sorted(set(spares.__all__))
    for name in spares.__all__:
        assert hasattr(spares, name), name
    for name in (
        "recommend_spares",
        "SpareParameters",
        "SpareRecommendation",
        "CurvePoint",
        "recommend_spares_for_nodes",
        "simulate_cost",
        "MonteCarloResult",
        "BenchmarkRun",
        "classify_runs",
        "estimate",
        "estimate_by_benchmark",
        "synthetic_history",
        "node_suspicion",
        "drain_candidates",
        "select_fastest",
        "Selection",
        "t_cmpt_from_wall",
        "DEFAULT_COMPUTE_FRACTION",
    ):
        assert name in spares.__all__, name
