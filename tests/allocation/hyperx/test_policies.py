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


def test_blocks_concatenate_consecutive_partitions():
    parts = static_partitions("diagonal", 8)
    job = static_partition("diagonal", 8, 1, blocks=2)
    np.testing.assert_array_equal(job, np.concatenate(parts[2:4]))
    whole = static_partition("row", 8, 0, blocks=8)
    np.testing.assert_array_equal(np.sort(whole), np.arange(512))
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
