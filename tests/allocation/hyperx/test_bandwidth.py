"""Exact partition bandwidth LP against a plain reference formulation."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from allocation.hyperx import POLICIES, HyperX, exact_partition_bandwidth, static_partition


def reference_pb(hx: HyperX, endpoints) -> float:
    """Max lambda, dense LP, paths from HyperX.minimal_paths, one variable per path."""
    sw, w = np.unique(hx.switch_of(endpoints), return_counts=True)
    total = w.sum()
    if sw.size < 2:
        return math.inf
    paths, pair_of_path, demands = [], [], []
    for i, j in itertools.permutations(range(sw.size), 2):
        for p in hx.minimal_paths(int(sw[i]), int(sw[j])):
            paths.append(p)
            pair_of_path.append(len(demands))
        demands.append(w[i] * w[j] / total)
    links = sorted({e for p in paths for e in itertools.pairwise(p)})
    lid = {e: k for k, e in enumerate(links)}
    nv = len(paths) + 1  # last = lambda
    a_ub = np.zeros((len(links), nv))
    for k, p in enumerate(paths):
        for e in itertools.pairwise(p):
            a_ub[lid[e], k] = 1
    a_eq = np.zeros((len(demands), nv))
    for k, pr in enumerate(pair_of_path):
        a_eq[pr, k] = 1
    a_eq[:, -1] = -np.asarray(demands)
    c = np.zeros(nv)
    c[-1] = -1
    res = linprog(c, A_ub=a_ub, b_ub=np.ones(len(links)), A_eq=a_eq,
                  b_eq=np.zeros(len(demands)), bounds=(0, None), method="highs")
    assert res.status == 0
    return float(res.x[-1])


@st.composite
def partitions(draw):
    sides = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    hx = HyperX(sides, draw(st.integers(1, 3)))
    eps = draw(st.lists(st.integers(0, hx.n_endpoints - 1), min_size=1, max_size=10,
                        unique=True))
    return hx, eps


@settings(max_examples=40, deadline=None)
@given(partitions())
def test_matches_reference_lp(case):
    hx, eps = case
    ours = exact_partition_bandwidth(hx, eps)
    ref = reference_pb(hx, eps)
    if math.isinf(ref):
        assert math.isinf(ours)
    else:
        assert ours == pytest.approx(ref, rel=1e-6)


def test_known_values():
    hx = HyperX((8, 8), 8)
    expect = {"row": 1.0, "diagonal": 2.0, "full_spread": 8.0, "rectangular": 0.25,
              "l_shape": 1.0}
    for pol, val in expect.items():
        assert exact_partition_bandwidth(hx, static_partition(pol, 8, 0)) == pytest.approx(val)
    # a 3D full spread: every link used equally, exact == bound == n
    hx3 = HyperX((4, 4, 4), 4)
    assert exact_partition_bandwidth(hx3, np.arange(64) * 4) == pytest.approx(4.0)


def test_single_switch_and_order_independence():
    hx = HyperX((4, 4), 4)
    assert math.isinf(exact_partition_bandwidth(hx, [0, 1, 2]))
    a = exact_partition_bandwidth(hx, [0, 5, 22, 63, 40])
    b = exact_partition_bandwidth(hx, [63, 40, 22, 5, 0])
    assert a == pytest.approx(b)
    with pytest.raises(ValueError):
        exact_partition_bandwidth(hx, [64])


@pytest.mark.parametrize("policy", POLICIES)
def test_every_static_partition_of_8x8_under_5s(policy):
    hx = HyperX((8, 8), 8)
    t = time.perf_counter()
    for j in range(0, 8, 3):
        exact_partition_bandwidth(hx, static_partition(policy, 8, j, seed=1))
    assert (time.perf_counter() - t) / 3 < 5.0
