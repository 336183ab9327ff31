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
