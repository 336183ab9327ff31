"""benchmarks/count_loop_work.py: its counting edits still fit the cycle loop as
it is (an anchor that no longer matches fails here, not as a silent miscount),
and its report computes the shares it prints.  The run itself compiles a copy of
the loop (about a minute), so it is a slow test."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.benchmark_scripts import load_benchmark

ENGINE = Path(__file__).resolve().parents[1] / "simulation" / "engine"


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return load_benchmark("count_loop_work")


def _sources() -> tuple[str, str, str]:
    return tuple((ENGINE / name).read_text(encoding="utf-8")
                 for name in ("loop.py", "rng.py", "simulator.py"))


def test_the_counting_edits_fit_the_loop_as_it_is(tool: ModuleType) -> None:
    loop, rng, simulator = tool.counting_sources(*_sources())
    for text in (loop, rng, simulator):
        ast.parse(text)
    assert f"N_ST = N_ST0 + {len(tool.COUNTERS)}" in loop
    for name in tool.COUNTERS:
        assert f"st[N_ST0 + K_{name.upper()}] += 1" in loop, name
    assert "state[1] += np.uint64(1)" in loop
    assert "LAST_POOL.update(pool)" in simulator


def test_an_anchor_that_moved_fails_loudly(tool: ModuleType) -> None:
    loop, rng, simulator = _sources()
    with pytest.raises(LookupError, match="anchor found 0 times"):
        tool.counting_sources(loop.replace("chg = swst[s, SW_CHG]", "chg = 0"), rng, simulator)


def test_the_report_gives_per_cycle_figures_and_shares(tool: ModuleType) -> None:
    values = dict.fromkeys(tool.COUNTERS, 0)
    values.update(visit=500, visit_watch=400, visit_useless=300, bound_skip=100, check=1000,
                  check_useless=700, grant=80, switch=60)
    text = tool.Counts("interf", 10, 0, values, 2500).describe()
    assert "10 cycles" in text and "50.0 input-port visits" in text
    assert "30.0 of the woken useless (75% of them, 60% of all visits)" in text
    assert "skips 10.0 (33% of the useless), wrongly 0 times" in text
    assert "250 random draws" in text
    values.update(touch_credit=300, touch_freed=400, touch_send=310, touch_grant=800)
    text = tool.Counts("interf", 10, 0, values, 2500).describe()
    assert "30.0 credits returned, 40.0 slots freed, 31.0 link sends, 80.0 grants" in text


@pytest.mark.slow
def test_the_counting_copy_runs_as_the_engine_does(tool: ModuleType, tmp_path: Path) -> None:
    tool.build_copy(tmp_path)
    sys.path.insert(0, str(tmp_path))
    try:
        copy = importlib.import_module(tool.COPY_NAME)
        counts = tool.count_row(copy, importlib.import_module("simulation.engine"), "sat",
                                2_000, 200)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.startswith(tool.COPY_NAME)]:
            del sys.modules[name]
    v = counts.values
    assert counts.cycles > 0 and v["grant"] > 0 and counts.draws > 0
    assert v["visit_useless"] <= v["visit_watch"] <= v["visit"]
    assert v["check_useless"] <= v["check"]
    assert v["bound_wrong"] == 0  # the bound never skips a visit that mattered
    assert v["touch_grant"] == v["grant"]  # every grant changes its output port once
    assert v["touch_send"] > 0 and v["touch_credit"] > 0 and v["touch_freed"] > 0
    assert v["send_wrong"] == v["visit_send_wrong"] == 0  # the counted rule is exact
