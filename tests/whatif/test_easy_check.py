"""With every adjustment off, the replay reproduces an independent EASY schedule."""

from __future__ import annotations

import numpy as np
import pytest

from allocation.hyperx import HyperX
from tests.whatif.easy_reference import easy_schedule
from whatif.replay import IDEAL, Job, fit_to_machine, parse_swf, replay, synthetic_workload


def _random_log(seed: int, n_jobs: int, n_nodes: int, mean_gap: float) -> list[Job]:
    rng = np.random.default_rng(seed)
    submits = np.cumsum(rng.exponential(mean_gap, n_jobs)).round()
    jobs = []
    for i, s in enumerate(submits):
        nodes = int(min(n_nodes, max(1, round(2 ** rng.uniform(0, np.log2(n_nodes))))))
        run = float(rng.integers(1, 3600))
        limit = float(run * rng.choice([1.0, 1.5, 3.0, 10.0]))
        jobs.append(Job(i + 1, float(s), float(s), float(s) + run, nodes, limit))
    return jobs


LOGS = {
    "light": lambda: _random_log(1, 400, 64, 120.0),
    "heavy": lambda: _random_log(2, 600, 64, 20.0),
    "exact-limits": lambda: [Job(j.id, j.submit, j.start, j.end, j.nodes, j.end - j.start)
                             for j in _random_log(3, 400, 64, 30.0)],
    "lublin": lambda: fit_to_machine(synthetic_workload(64, days=10, seed=4, load=3.0).jobs,
                                     64)[0],
    "same-second": lambda: [Job(i, float(i // 10), float(i // 10), float(i // 10 + 5 + i % 7),
                                1 + (i * 7) % 64, float(30)) for i in range(300)],
}


@pytest.mark.parametrize("name", sorted(LOGS))
@pytest.mark.parametrize("policy", ["row", "random_endpoint", "least_loaded_diagonal"])
def test_ideal_replay_matches_the_independent_easy(name, policy):
    jobs = LOGS[name]()
    hx = HyperX((4, 4), 4)
    expected = easy_schedule(jobs, hx.n_endpoints)
    result = replay(jobs, hx, policy, model=IDEAL, seed=7)
    assert result.starts.tolist() == expected
    waits = [s - j.submit for s, j in zip(expected, jobs, strict=True)]
    assert max(waits) > 0  # the logs make jobs queue, so backfill has work to do


def test_backfill_happens_and_changes_the_order():
    jobs = LOGS["heavy"]()
    starts = easy_schedule(jobs, 64)
    overtaken = sum(1 for a in range(len(jobs) - 1) if starts[a + 1] < starts[a])
    assert overtaken > 10


def test_swf_fixture_matches():
    lines = ["; MaxNodes: 16"] + [
        f"{i} {i * 30} -1 {600 + (i * 97) % 1800} {1 + (i * 5) % 16} -1 -1 -1 "
        f"{3600 if i % 3 else -1} -1 1 -1 -1 -1 -1 -1 -1 -1" for i in range(1, 200)]
    jobs = list(parse_swf(lines).jobs)
    hx = HyperX((2, 2), 4)
    assert replay(jobs, hx, "diagonal", model=IDEAL).starts.tolist() == easy_schedule(jobs, 16)
