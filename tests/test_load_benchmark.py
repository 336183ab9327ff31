"""benchmarks/bench_load.py keeps working: gunicorn with production settings on
PostgreSQL, driven by wrk on every key endpoint, answers every request without an
error. Figures are printed, never asserted (speed is measured, not tested)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.postgres
def test_load_benchmark_runs_every_endpoint_without_errors(tmp_path):
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        skip_or_fail("needs PostgreSQL: run with DATABASE_URL=postgres://...")
    if shutil.which("wrk") is None:
        skip_or_fail("wrk is not installed (apt-get install -y wrk)")
    out = tmp_path / "load.json"
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_load.py", "--duration", "1", "--clients", "4",
         "--mixed-clients", "2,4", "--jobs", "20", "--workers", "2", "--database-url", url,
         "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads(out.read_text())
    assert [(row["endpoint"].split()[1], row["clients"]) for row in rows] == [
        ("machines/ref/", 4), ("nodes/?limit=50", 4), ("jobs/<id>/", 4), ("jobs/?limit=50", 4),
        ("jobs/?limit=1000", 1), ("mixed", 2), ("mixed", 4), ("recommendations/", 4),
        ("benchmarks/", 4)]
    assert all(row["requests"] > 0 and row["errors"] == 0 for row in rows), rows
    assert "uncached" in result.stdout and "HTTP 200" in result.stdout, result.stdout
