"""Static allocation functions of the study (docs/domain.md section 2.1)."""

from __future__ import annotations

import numpy as np
import pytest

from allocation.hyperx import POLICIES, HyperX, static_partition, static_partitions

RANDOM = ("random_switch", "random_endpoint")


def test_policy_names_in_order():
    assert POLICIES == ("row", "diagonal", "full_spread", "rectangular", "l_shape",
                        "random_switch", "random_endpoint")


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("n", [4, 6, 8])
def test_partitions_tile_the_machine(policy, n):
    parts = static_partitions(policy, n, seed=7)
    assert len(parts) == n
    assert all(p.shape == (n * n,) and p.dtype == np.int64 for p in parts)
    allp = np.concatenate(parts)
    np.testing.assert_array_equal(np.sort(allp), np.arange(n**3))
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(p, static_partition(policy, n, i, seed=7))


@pytest.mark.parametrize("policy", [p for p in POLICIES if p not in ("rectangular", "l_shape")])
def test_odd_n_tiles(policy):
    parts = static_partitions(policy, 5)
    np.testing.assert_array_equal(np.sort(np.concatenate(parts)), np.arange(125))


@pytest.mark.parametrize("policy", ["rectangular", "l_shape"])
def test_odd_n_rejected(policy):
    with pytest.raises(ValueError, match="even"):
        static_partition(policy, 5, 0)


def _switch(e, n=8):
    s = np.asarray(e) // n
    return list(zip((s // n).tolist(), (s % n).tolist(), strict=True))


def test_formulas_on_8x8():
    n = 8
    # rank r = n*ry + rx -> (sy, sx, c)
    row = static_partition("row", n, 3)
    assert set(_switch(row)) == {(3, x) for x in range(n)}
    assert row[n * 2 + 5] == (3 * n + 2) * n + 5
    fs = static_partition("full_spread", n, 5)
    assert fs[n * 2 + 3] == (2 * n + 3) * n + 5
    diag = static_partition("diagonal", n, 2)
    assert set(_switch(diag)) == {(y, (y + 2) % n) for y in range(n)}
    rect = static_partition("rectangular", n, 3)
    assert set(_switch(rect)) == {(y, x) for y in (2, 3) for x in range(4, 8)}
    ls = static_partition("l_shape", n, 6)
    expect = {((6 + y) % n, 6) for y in range(4)} | {(6, (6 + x) % n) for x in range(1, 5)}
    assert set(_switch(ls)) == expect
    assert _switch(ls[:1]) == [(6, 6)]


def test_blocks_take_consecutive_partitions():
    parts = static_partitions("diagonal", 8)
    job = static_partition("diagonal", 8, 1, blocks=2)
    np.testing.assert_array_equal(np.sort(job), np.sort(np.concatenate(parts[2:4])))
    whole = static_partition("row", 8, 0, blocks=8)
    np.testing.assert_array_equal(whole, np.arange(512))
    with pytest.raises(ValueError, match="partitions"):
        static_partition("row", 8, 2, blocks=3)
    with pytest.raises(ValueError, match="blocks"):
        static_partition("row", 8, 0, blocks=0)
    with pytest.raises(ValueError, match="index"):
        static_partition("row", 8, -1)
    with pytest.raises(ValueError, match="partitions"):
        static_partition("row", 8, 8)


def test_unknown_policy():
    with pytest.raises(ValueError, match="unknown policy"):
        static_partition("zigzag", 8, 0)
    with pytest.raises(ValueError, match="unknown policy"):
        static_partitions("zigzag", 8)


@pytest.mark.parametrize("policy", RANDOM)
def test_random_reproducible(policy):
    a = static_partitions(policy, 8, seed=11)
    b = static_partitions(policy, 8, seed=11)
    c = static_partitions(policy, 8, seed=12)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    none = static_partitions(policy, 8, seed=None)
    zero = static_partitions(policy, 8, seed=0)
    assert all(np.array_equal(x, y) for x, y in zip(none, zero, strict=True))


def test_random_switch_keeps_whole_switches():
    hx = HyperX((8, 8), 8)
    for p in static_partitions("random_switch", 8, seed=3):
        _, counts = np.unique(hx.switch_of(p), return_counts=True)
        assert counts.size == 8
        assert np.all(counts == 8)


def _switches_in_rank_order(endpoints: np.ndarray, c: int) -> list[int]:
    return [int(e) // c for e in endpoints[::c]]


# CaMinOS's switch order for a 128-task job on the empty 8 x 8, c = 8 machine, as
# (x, y) with x fastest in its server index: its selections (diagonals, L tiles, one
# server per switch round-robin) sort the chosen servers by index.
CAMINOS_128 = {
    "diagonal": [(0, 0), (1, 0), (1, 1), (2, 1), (2, 2), (3, 2), (3, 3), (4, 3), (4, 4),
                 (5, 4), (5, 5), (6, 5), (6, 6), (7, 6), (0, 7), (7, 7)],
    "l_shape": [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1), (4, 1),
                (0, 2), (1, 2), (0, 3), (1, 3), (0, 4), (1, 4), (1, 5)],
}


def test_a_job_over_two_partitions_takes_caminos_task_order():
    """Ranks follow ascending server index over the whole job, as in the study's
    simulator: the two diagonals (two L tiles) alternate switch by switch, and
    Full Spread puts ranks 2k and 2k + 1 on switch k."""
    diag = _switches_in_rank_order(static_partition("diagonal", 8, 0, blocks=2), 8)
    assert diag == [8 * y + x for x, y in CAMINOS_128["diagonal"]]
    # The study's L runs along the other dimension from CaMinOS's tile: x is sy here.
    ls = _switches_in_rank_order(static_partition("l_shape", 8, 0, blocks=2), 8)
    assert ls == [8 * x + y for x, y in CAMINOS_128["l_shape"]]
    spread = static_partition("full_spread", 8, 0, blocks=2)
    assert (spread // 8).tolist() == [k for k in range(64) for _ in range(2)]


@pytest.mark.parametrize("policy", ["row", "rectangular", *RANDOM])
def test_some_policies_number_a_job_partition_after_partition(policy):
    """Two rows (two rectangles side by side) in server-index order are the two
    partitions one after the other; the random policies keep their draw."""
    parts = static_partitions(policy, 8, seed=5)
    job = static_partition(policy, 8, 1, blocks=2, seed=5)
    np.testing.assert_array_equal(job, np.concatenate(parts[2:4]))


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("n", [4, 6, 8])
def test_the_job_order_keeps_each_partition_in_formula_order(policy, n):
    """A partition's ranks keep their relative order inside a job that holds it, also
    when the partition wraps round the machine (L-shape from p = n/2 + 1 on). Beyond
    n/2 partitions an L-shape job wraps round from its own first switch, and server
    order then cuts its last Ls, as CaMinOS's wrapping tiles would."""
    parts = static_partitions(policy, n, seed=3)
    for blocks in range(1, n // 2 + 1):
        for index in range(n // blocks):
            job = static_partition(policy, n, index, blocks=blocks, seed=3).tolist()
            for p in parts[blocks * index: blocks * (index + 1)]:
                mine = set(p.tolist())
                assert [e for e in job if e in mine] == p.tolist()
