"""Starting a process does not load the LP and assignment solvers.

Every ``manage.py`` command imports the allocation core through the models;
scipy.optimize and scipy.sparse cost a few tenths of a second to load (the
``interf-process`` row of ``benchmarks/bench_simulation.py`` includes it) and only
an exact partition bandwidth or the least-loaded diagonal needs them, so they load
on first use (their own tests, test_bandwidth.py and test_ours.py, use them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import sys
import django
django.setup()
import allocation.models, allocation.hyperx, simulation.engine
print(",".join(sorted(m for m in ("scipy.optimize", "scipy.sparse") if m in sys.modules)))
"""


def test_django_and_the_cores_start_without_the_solvers():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True,
                         env={**os.environ,
                              "DJANGO_SETTINGS_MODULE": "hxportal.settings.local"})
    assert out.stdout.strip() == "", f"loaded at start: {out.stdout.strip()}"
