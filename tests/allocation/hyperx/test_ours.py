"""Our own policy, least_loaded_diagonal: Diagonal's character, occupancy-aware."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.hyperx import HyperX, allocate, partition_properties
from allocation.hyperx.ours import line_load

POLICY = "least_loaded_diagonal"


@given(n=st.integers(2, 8), size=st.integers(1, 64))
@settings(max_examples=40, deadline=None)
def test_empty_machine_gives_exactly_diagonal(n, size):
    hx = HyperX((n, n), n)
    size = min(size, hx.n_endpoints)
    free = np.ones(hx.n_endpoints, dtype=bool)
    assert allocate(hx, free, POLICY, size).tolist() == allocate(hx, free, "diagonal",
                                                                 size).tolist()


@given(seed=st.integers(0, 10_000), busy_fraction=st.floats(0.0, 0.7),
       sides=st.sampled_from([(8, 8), (4, 4, 4), (6,), (3, 5)]))
@settings(max_examples=60, deadline=None)
def test_only_available_endpoints_and_whole_switches_when_possible(seed, busy_fraction, sides):
    hx = HyperX(sides, 4)
    rng = np.random.default_rng(seed)
    switch_busy = rng.random(hx.n_switches) < busy_fraction
    busy = np.repeat(switch_busy, 4)
    free = ~busy
    size = int(min(free.sum(), 4 * max(1, hx.n_switches // 4)))
    if size == 0:
        return
    got = allocate(hx, free, POLICY, size, busy=busy)
    assert len(set(got.tolist())) == size and free[got].all()
    props = partition_properties(hx, got, exact=False)
    if size % 4 == 0:
        assert props.switch_locality


def test_quieter_than_diagonal_next_to_a_running_job():
    hx = HyperX((8, 8), 8)
    busy = np.zeros(hx.n_endpoints, dtype=bool)
    busy[: 2 * 64] = True  # a job holds rows 0 and 1 (switch locality, all 16 switches)
    free = ~busy
    load = line_load(hx, busy)
    plain = np.unique(hx.switch_of(allocate(hx, free, "diagonal", 48)))
    ours = np.unique(hx.switch_of(allocate(hx, free, POLICY, 48, busy=busy)))
    assert load[ours].sum() <= load[plain].sum()
    for policy_switches in (plain, ours):
        coords = hx.switch_coords()[policy_switches]
        assert len(set(coords[:, 0])) == len(policy_switches) == len(set(coords[:, 1]))


def test_avoids_lines_carrying_other_jobs():
    hx = HyperX((8, 8), 8)
    busy = np.zeros(hx.n_endpoints, dtype=bool)
    for s in (0, 9, 18):  # another job on a short diagonal: rows/cols 0-2 are loaded
        busy[s * 8:(s + 1) * 8] = True
    free = ~busy
    ours = np.unique(hx.switch_of(allocate(hx, free, POLICY, 40, busy=busy)))
    coords = hx.switch_coords()[ours]
    assert set(coords[:, 0]).isdisjoint({0, 1, 2}) and set(coords[:, 1]).isdisjoint({0, 1, 2})
    plain = np.unique(hx.switch_of(allocate(hx, free, "diagonal", 40)))
    assert not set(hx.switch_coords()[plain][:, 0]).isdisjoint({0, 1, 2})
