"""The pure cores import without Django settings (docs/architecture.md section 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE = ["allocation.hyperx", "allocation.usage", "health.maths", "simulation.engine",
        "whatif.replay"]


@pytest.mark.parametrize("package", PURE)
def test_pure_package_imports_without_django(package):
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = (f"import sys, {package}; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('django', 'rest_framework', 'celery', 'hxportal')]; "
            "print(','.join(bad)); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
