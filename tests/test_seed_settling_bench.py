"""benchmarks/seed_settling.py: the portal's settling rule replayed on recorded seeds."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest

from tests.benchmark_scripts import BENCHMARKS, load_benchmark

#: Two policies split at seeds 0, 1 (b faster at 1); on seeds 0-4 a is clearly faster.
RECORDED = {"a": dict.fromkeys(range(6), 1000),
            "b": {0: 1200, 1: 990, 2: 1200, 3: 1210, 4: 1190, 5: 1200},
            "c": dict.fromkeys(range(6), 2000)}
REPORT = "16x16 c=16 all2all 64@50% (live machine, occupancy seed 19)\n" + "".join(
    f"  {p:22s} mean {sum(c.values()) / 6:8.0f} +- 10 ( 1.0%)  seeds 6: "
    + ", ".join(f"{s}:{n}" for s, n in c.items()) + "  (first two seeds' mean 0)\n"
    for p, c in RECORDED.items())


@pytest.fixture(scope="module")
def settling() -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))
        return load_benchmark("seed_settling")


def test_the_report_parses_back_to_its_seeds(settling: ModuleType) -> None:
    assert settling.parse_report(REPORT) == {"16x16 c=16 all2all 64@50%": RECORDED}


def test_the_replay_runs_the_contest_until_it_settles(settling: ModuleType) -> None:
    # first seeds 0, 1: a on the mean, b faster at seed 1; rounds add seeds 2, 3, 4
    found = settling.replay(RECORDED, first_seeds=2, max_seeds=6, processes=2)
    assert found == settling.Replay("a", extra_runs=6, waves=3, seeds=5)
    assert settling.replay(RECORDED, first_seeds=2, max_seeds=2, processes=2) == \
        settling.Replay("a", 0, 0, 2)
    # a budget the recording cannot meet stops where the recording ends
    assert settling.replay({p: {s: c[s] for s in range(3)} for p, c in RECORDED.items()},
                           first_seeds=2, max_seeds=8, processes=2).seeds == 3
    assert settling.cost(RECORDED, "b") == pytest.approx(0.165, abs=1e-3)


def test_the_script_prints_each_budget(settling: ModuleType, tmp_path, capsys,
                                       monkeypatch) -> None:
    report = tmp_path / "noise.txt"
    report.write_text(REPORT)
    monkeypatch.setattr(sys, "argv", ["seed_settling.py", "--report", str(report),
                                      "--budgets", "2,6"])
    settling.main()
    out = capsys.readouterr().out
    assert "# 1 recorded cases from noise.txt" in out
    assert "max 6 seeds: the best in 1 of 1, within 1 % in 1, mean cost 0.00%" in out
    assert "extra runs 6 in all (1 cases ran more seeds), waves of runs max 3" in out


def test_the_rules_of_a_recorded_case_refuse_as_the_portal_does(settling: ModuleType) -> None:
    """The agreement's live 8x8 case at 50 %: a policy sharing switches with other jobs
    must beat the best whole-switch one clearly, else the replay leaves it out."""
    rules = settling.case_rules("8x8 c=8 all2all 64@50%")
    assert rules.held_fraction == 0.5
    local = next(c["policy"] for c in rules.candidates if c["properties"]["switch_locality"])
    shared = next(c["policy"] for c in rules.candidates
                  if not c["properties"]["switch_locality"])
    close = {local: {0: 1000, 1: 1000}, shared: {0: 950, 1: 950}}
    assert set(settling.contenders(close, rules)) == {local}
    assert settling.best(close, rules) == local and settling.best(close) == shared
    clear = {local: {0: 1000, 1: 1000}, shared: {0: 500, 1: 500}}
    assert set(settling.contenders(clear, rules)) == {local, shared}
    assert settling.case_rules("not a case label") is None
