"""The examples in the simulation app's docstrings run (the default doctest paths
cover only the pure engine)."""

from __future__ import annotations

import doctest

import pytest

from simulation import charts, models, presets, services


@pytest.mark.parametrize("module", [charts, models, presets, services])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_presets_are_pure():
    """The study definition imports without Django settings (like the engine)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = ("import sys, simulation.presets as p; assert p.study_size() == 2380; "
            "assert not any(m.startswith(('django', 'celery')) for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
