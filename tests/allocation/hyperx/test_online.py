"""Online allocation: availability, determinism, each policy's character."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.hyperx import (
    POLICIES,
    AllocationError,
    HyperX,
    allocate,
    partition_properties,
    static_partition,
)

ROOT = Path(__file__).resolve().parents[3]
LOCALITY_AWARE = ("row", "diagonal", "rectangular", "l_shape", "random_switch")


def empty(hx: HyperX) -> np.ndarray:
    return np.ones(hx.n_endpoints, dtype=bool)


@pytest.mark.parametrize("n", [4, 6, 8])
@pytest.mark.parametrize("policy", POLICIES)
def test_empty_machine_matches_static_partition(policy, n):
    hx = HyperX((n, n), n)
    got = allocate(hx, empty(hx), policy, n * n, seed=5)
    ref = static_partition(policy, n, 0, seed=5)
    np.testing.assert_array_equal(got, ref)
    if n == 8:
        assert partition_properties(hx, got) == partition_properties(hx, ref)


@pytest.mark.parametrize("policy", ["random_switch", "random_endpoint"])
def test_random_character_other_seeds(policy):
    hx = HyperX((8, 8), 8)
    ref = partition_properties(hx, static_partition(policy, 8, 0, seed=0))
    for seed in (1, 2):
        p = partition_properties(hx, allocate(hx, empty(hx), policy, 64, seed=seed))
        assert p.switch_locality == ref.switch_locality
        assert p.pb_exact == pytest.approx(ref.pb_exact, rel=0.6)


@st.composite
def machine_state(draw):
    sides = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    hx = HyperX(sides, draw(st.integers(1, 4)))
    p_free = draw(st.sampled_from([0.2, 0.5, 0.9, 1.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    avail = rng.random(hx.n_endpoints) < p_free
    if not avail.any():
        avail[rng.integers(hx.n_endpoints)] = True
    size = draw(st.integers(1, int(avail.sum())))
    return hx, avail, size


@settings(max_examples=30, deadline=None)
@given(machine_state(), st.sampled_from(POLICIES), st.integers(0, 3))
def test_respects_availability_and_is_deterministic(state, policy, seed):
    hx, avail, size = state
    before = avail.copy()
    got = allocate(hx, avail, policy, size, seed=seed)
    assert got.dtype == np.int64
    assert got.shape == (size,)
    assert np.unique(got).size == size
    assert avail[got].all()
    np.testing.assert_array_equal(avail, before)  # input untouched
    np.testing.assert_array_equal(got, allocate(hx, avail, policy, size, seed=seed))


@settings(max_examples=30, deadline=None)
@given(machine_state(), st.sampled_from(POLICIES))
def test_successive_jobs_are_disjoint(state, policy):
    hx, avail, size = state
    avail = avail.copy()
    first = allocate(hx, avail, policy, max(1, size // 2))
    avail[first] = False
    if avail.sum() == 0:
        return
    second = allocate(hx, avail, policy, int(avail.sum()) // 2 + 1)
    assert not np.intersect1d(first, second).size


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3),
    st.integers(1, 4),
    st.sampled_from(LOCALITY_AWARE),
    st.data(),
)
def test_switch_locality_on_empty_machine(sides, c, policy, data):
    hx = HyperX(tuple(sides), c)
    k = data.draw(st.integers(1, hx.n_switches))
    got = allocate(hx, empty(hx), policy, k * c)
    _, counts = np.unique(hx.switch_of(got), return_counts=True)
    assert counts.size == k
    assert np.all(counts == c)


@settings(max_examples=30, deadline=None)
@given(machine_state())
def test_full_spread_one_endpoint_per_switch_while_possible(state):
    hx, avail, size = state
    got = allocate(hx, avail, "full_spread", size)
    n_sw_free = int((avail.reshape(hx.n_switches, -1).sum(1) > 0).sum())
    counts = np.bincount(hx.switch_of(got), minlength=hx.n_switches)
    if size <= n_sw_free:
        assert counts.max() == 1
    else:
        assert (counts > 0).sum() == n_sw_free


def test_diagonal_is_a_transversal_while_possible():
    hx = HyperX((6, 6, 6), 2)
    got = allocate(hx, empty(hx), "diagonal", 12)
    coords = hx.switch_coords()[np.unique(hx.switch_of(got))]
    assert coords.shape[0] == 6
    for d in range(3):
        assert np.unique(coords[:, d]).size == 6


def test_row_prefers_best_fitting_row():
    hx = HyperX((4, 4), 4)
    avail = empty(hx)
    avail[0:4] = False  # row 0 has 3 full switches
    avail[20:24] = False  # row 1 has 3 full switches
    avail[32:40] = False  # row 2 has 2 full switches
    got = allocate(hx, avail, "row", 8)
    assert sorted(set(hx.switch_of(got).tolist())) == [10, 11]
    got = allocate(hx, avail, "row", 12)
    assert sorted(set(hx.switch_of(got).tolist())) == [1, 2, 3]


def test_rectangular_box_and_fallback():
    hx = HyperX((8, 8), 8)
    avail = empty(hx)
    got = allocate(hx, avail, "rectangular", 16 * 8)
    coords = hx.switch_coords()[np.unique(hx.switch_of(got))]
    assert [np.unique(coords[:, d]).size for d in range(2)] == [4, 4]
    # no full switch anywhere: compact box of partly free switches
    avail[::8] = False
    got = allocate(hx, avail, "rectangular", 7 * 4)
    assert avail[got].all()
    coords = hx.switch_coords()[np.unique(hx.switch_of(got))]
    assert [np.unique(coords[:, d]).size for d in range(2)] == [2, 2]


def test_l_shape_several_ls_and_fallback():
    hx = HyperX((8, 8), 8)
    got = allocate(hx, empty(hx), "l_shape", 128)
    assert np.unique(hx.switch_of(got)).size == 16
    avail = empty(hx)
    avail[::8] = False
    got = allocate(hx, avail, "l_shape", 100)
    assert avail[got].all()
    assert np.unique(got).size == 100


def test_insufficient_nodes():
    hx = HyperX((4, 4), 25)
    avail = np.zeros(hx.n_endpoints, dtype=bool)
    avail[:120] = True
    with pytest.raises(AllocationError, match="need 300 nodes, 120 available") as info:
        allocate(hx, avail, "row", 300)
    assert info.value.reason == "need 300 nodes, 120 available"
    assert isinstance(info.value, ValueError)


def test_bad_arguments():
    hx = HyperX((4, 4), 4)
    with pytest.raises(ValueError, match="unknown policy"):
        allocate(hx, empty(hx), "zigzag", 4)
    with pytest.raises(ValueError, match="shape"):
        allocate(hx, np.ones(10, dtype=bool), "row", 4)
    with pytest.raises(ValueError, match="size"):
        allocate(hx, empty(hx), "row", 0)


def test_speed_16x16x16_half_occupied():
    hx = HyperX((16, 16, 16), 16)
    avail = np.random.default_rng(0).random(hx.n_endpoints) < 0.5
    for policy in POLICIES:
        allocate(hx, avail, policy, 4096)  # warm-up (numba compile, caches)
        times = []
        for _ in range(3):
            t = time.perf_counter()
            got = allocate(hx, avail, policy, 4096)
            times.append(time.perf_counter() - t)
        assert avail[got].all()
        assert np.unique(got).size == 4096
        assert sorted(times)[1] < 0.1, policy


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3),
    st.integers(1, 4),
    st.sampled_from(LOCALITY_AWARE),
    st.integers(0, 2**16),
    st.data(),
)
def test_whole_switches_kept_while_enough_full_switches(sides, c, policy, seed, data):
    """Jobs that occupy whole switches leave full switches scattered; the
    locality-aware policies must still hand out whole switches."""
    hx = HyperX(tuple(sides), c)
    busy = np.random.default_rng(seed).random(hx.n_switches) < 0.4
    avail = np.repeat(~busy, c)
    n_full = int((~busy).sum())
    if n_full == 0:
        return
    k = data.draw(st.integers(1, n_full))
    got = allocate(hx, avail, policy, k * c)
    assert avail[got].all()
    _, counts = np.unique(hx.switch_of(got), return_counts=True)
    assert counts.size == k
    assert np.all(counts == c)


def test_pure_package_imports_without_django():
    code = ("import sys, allocation.hyperx as h; "
            "assert not any(m.split('.')[0] in ('django', 'celery', 'rest_framework') "
            "for m in sys.modules), 'framework imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT,
                   env={**os.environ, "DJANGO_SETTINGS_MODULE": ""})
