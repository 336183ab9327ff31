"""bandit finds nothing of medium or high severity in the apps (pure cores excluded:
they do no I/O). Every accepted finding carries a ``# nosec`` with its reason."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bandit_is_clean_on_the_apps():
    result = subprocess.run(
        [sys.executable, "-m", "bandit", "-q", "-r", "hxportal", "allocation", "simulation",
         "-x", "allocation/hyperx,allocation/spares,simulation/engine", "-ll"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
