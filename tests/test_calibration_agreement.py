"""benchmarks/calibration_agreement.py: each shape's cases get the seeds asked for,
for the live runs and the calibration points alike (``--seeds8``, ``--seeds16``), and
``--synthetic`` calibrates on a machine of its own (the portal's by default). Only the plan is
built here; nothing is simulated."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benchmark_scripts import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def agreement() -> ModuleType:
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(BENCHMARKS))  # the script imports its sibling _calibration_runs
        return load_benchmark("calibration_agreement")


def _seeds(runs: list) -> set[int]:
    return {t.label[-1] for t in runs}


def test_each_shape_takes_its_own_seeds(agreement: ModuleType) -> None:
    cases, tasks = agreement.plan("all2all", "64@0.5", only8=False, seeds16=(0,),
                                  seeds8=(0, 1, 2))
    by_shape: dict[str, list] = {}
    for shape, _n, _u, points, live in cases:
        assert points and live
        by_shape.setdefault(agreement.shape_label(shape), []).append(
            (_seeds(points), _seeds(live)))
    assert by_shape["8x8 c=8"] == [({0, 1, 2}, {0, 1, 2})] * 9  # the whole matrix
    assert by_shape["16x16 c=16"] == [({0}, {0})]
    assert len({t.key for t in tasks}) == len(tasks)  # every run once


def test_the_portals_seeds_by_default(agreement: ModuleType) -> None:
    cases, _ = agreement.plan("all2all", "64@0.5", only8=True)
    assert cases
    for _shape, _n, _u, points, live in cases:
        assert _seeds(points) == _seeds(live) == set(agreement.SEEDS)


def test_each_calibration_machine_is_its_own_and_not_the_live_one(
        agreement: ModuleType) -> None:
    """``--synthetic``: the portal's aged machine, the contiguous one it had before and
    the live-like what-if give the points three different machines, none the live
    runs'; an empty machine is the same for all."""
    def keys(kind: str) -> dict[float, set[str]]:
        cases, _ = agreement.plan("all2all", "", only8=True, synthetic_kind=kind)
        out: dict[float, set[str]] = {}
        for _shape, _n, u, points, _live in cases:
            out.setdefault(u, set()).update(t.key for t in points)
        return out

    aged, contiguous, fragmented = keys("aged"), keys("contiguous"), keys("fragmented")
    assert aged[0.0] == contiguous[0.0] == fragmented[0.0]
    for load in (0.5, 0.75):
        assert fragmented[load] and not contiguous[load] & fragmented[load]
        assert aged[load] and not aged[load] & (contiguous[load] | fragmented[load])
    default, _ = agreement.plan("all2all", "", only8=True)
    assert {t.key for case in default for t in case[3]} == set().union(*aged.values())
    shape = agreement.SHAPE_8
    live = agreement.live_occupancy(shape, 0.5, agreement.LIVE_SEED + 50 + shape.node_count)
    other = agreement.live_occupancy(
        shape, 0.5, agreement.FRAGMENTED_SEED + 50 + shape.node_count)
    assert live.size == other.size and not (live == other).all()


def test_the_portals_answer_is_live_settled_or_calibrated_as_its_runs_fit(
        agreement: ModuleType, settings) -> None:
    """``portal_answer``: every policy live where all runs fit the deadline (the live
    fastest), the close call settled live where only its runs fit (its live order, the
    others calibrated), else the calibration's fastest."""
    shape = agreement.SHAPE_8
    runs = [agreement.Task(label=("live", "8x8 c=8", 64, 0.5, p, 0), config={},
                           partitions=[list(range(i * 64, i * 64 + 64)), []])
            for i, p in enumerate(("full_spread", "random_endpoint", "row"))]
    live = {"full_spread": 1200.0, "random_endpoint": 1000.0, "row": 1100.0}
    calibrated = {"full_spread": 1000.0, "random_endpoint": 1010.0, "row": 1080.0}
    spread = {"full_spread": 0.05, "random_endpoint": 0.05, "row": 0.01}
    settings.HX_PREDICTION_PROCESSES = 2
    budget = 30 * 0.6  # the deadline's share the live runs may use
    answer = agreement.portal_answer
    # 3 policies x 2 seeds on 2 processes: 3 rounds; the close call (2 policies): 2
    assert answer(shape, runs, live, calibrated, spread, budget / 3) == (
        "random_endpoint", "live")
    assert answer(shape, runs, live, calibrated, spread, budget / 2) == (
        "random_endpoint", "settled")
    assert answer(shape, runs, live, calibrated, spread, budget) == ("full_spread", "calibrated")
    # no close call (row is 8 % behind, beyond every spread): calibrated, not settled
    assert answer(shape, runs, live, calibrated, {}, budget / 2) == ("full_spread", "calibrated")


def test_answers_judged_on_more_live_seeds(agreement: ModuleType, tmp_path, capsys) -> None:
    """``--truth-seeds``: each pick's regret on the mean of more live seeds, read from the
    cache (here written by hand: Row fastest on the mean, Diagonal on seeds 0 and 1)."""
    import json

    cases, _ = agreement.plan("all2all", "", only8=True)
    case = next(c for c in cases if (c[1], c[2]) == (64, 0.5))
    shape, n, u = case[:3]
    held = agreement.live_occupancy(shape, u, agreement.LIVE_SEED + int(100 * u)
                                    + shape.node_count)
    seeds = agreement.seed_range("0-3")
    assert seeds == (0, 1, 2, 3) and agreement.seed_range("0,2") == (0, 2)
    for t in agreement.live_tasks(shape, "all2all", n, held, agreement.ONLINE_POLICIES, seeds,
                                  ("live", agreement.shape_label(shape), n, u)):
        policy, seed = t.label[-2], t.label[-1]
        cycles = {"row": 1000, "diagonal": 900 if seed < 2 else 1300}.get(policy, 2000)
        (tmp_path / f"{t.key}.json").write_text(json.dumps({"completion_cycles": cycles}))
    row = {"shape": "8x8 c=8", "cal_best": "row", "pick": "row", "live_best": "diagonal"}
    agreement.report_truth([(case, row)], tmp_path, "all2all", seeds)
    out = capsys.readouterr().out
    assert ("8x8 c=8         64   50% row                         0.00%    0.00%"
            "        10.00%") in out
    assert "the two-seed live pick: within 1 % in 0 of 1, mean regret 10.00%" in out
