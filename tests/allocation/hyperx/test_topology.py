"""HyperX topology against networkx on small machines."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.hyperx import HyperX
from tests.allocation.hyperx.graphs import switch_graph

SMALL = [((4,), 2), ((3, 4), 2), ((4, 4), 4), ((2, 3, 4), 1), ((3, 3, 3), 3)]


@pytest.mark.parametrize(("sides", "c"), SMALL)
def test_sizes_and_links(sides, c):
    hx = HyperX(sides, c)
    assert hx.dimensions == len(sides)
    assert hx.n_switches == math.prod(sides)
    assert hx.n_endpoints == math.prod(sides) * c
    links = hx.links()
    assert links.shape == (hx.n_links, 2)
    assert np.all(links[:, 0] < links[:, 1])
    assert len({tuple(x) for x in links.tolist()}) == hx.n_links
    g = switch_graph(hx)
    assert g.number_of_edges() == hx.n_links
    assert all(hx.switch_distance(a, b) == 1 for a, b in links.tolist())


def test_symmetric_link_count_formula():
    for q, n in [(1, 5), (2, 8), (3, 4), (3, 16)]:
        hx = HyperX((n,) * q, n)
        assert hx.n_links == q * (n - 1) * n**q // 2
        if n <= 8:
            assert len(hx.links()) == hx.n_links


@pytest.mark.parametrize(("sides", "c"), SMALL)
def test_distances_and_minimal_paths_match_networkx(sides, c):
    hx = HyperX(sides, c)
    g = switch_graph(hx)
    all_sw = np.arange(hx.n_switches)
    dm = hx.distance_matrix(all_sw)
    lengths = dict(nx.all_pairs_shortest_path_length(g))
    for a, b in itertools.product(range(hx.n_switches), repeat=2):
        assert dm[a, b] == lengths[a][b] == hx.switch_distance(a, b)
    for a, b in itertools.product(range(0, hx.n_switches, 3), range(hx.n_switches)):
        ours = sorted(hx.minimal_paths(a, b))
        theirs = sorted(tuple(p) for p in nx.all_shortest_paths(g, a, b))
        assert ours == theirs
        assert len(ours) == math.factorial(int(dm[a, b]))


def test_average_switch_distance_formula():
    hx = HyperX((8, 8), 8)
    dm = hx.distance_matrix(np.arange(64))
    assert dm.mean() == pytest.approx(2 - 2 / 8)
    assert dm.max() == 2


def test_endpoint_conventions():
    hx = HyperX((8, 8), 8)
    assert hx.switch_index((1, 2)) == 10
    assert hx.switch_coords()[10].tolist() == [1, 2]
    e = np.array([0, 7, 8, 511])
    assert hx.switch_of(e).tolist() == [0, 0, 1, 63]
    assert hx.local_of(e).tolist() == [0, 7, 0, 7]
    np.testing.assert_array_equal(hx.switch_index(hx.switch_coords()), np.arange(64))


def test_coords_cached_and_read_only():
    hx = HyperX((16, 16, 16), 16)
    assert hx.switch_coords() is HyperX((16, 16, 16), 2).switch_coords()
    with pytest.raises(ValueError):
        hx.switch_coords()[0, 0] = 3
    assert hx.n_endpoints == 65536
    assert len(hx.links()) == hx.n_links == 92160


@pytest.mark.parametrize(
    ("sides", "c", "field"),
    [((), 1, "sides"), ((0, 2), 1, "sides"), ((2.5,), 1, "sides"), ((4,), 0, "concentration"),
     ((4,), True, "concentration"), (3, 1, "sides"), ((4,), "2", "concentration")],
)
def test_validation_names_the_field(sides, c, field):
    with pytest.raises(ValueError, match=field):
        HyperX(sides, c)


def test_sides_normalised_to_tuple_of_int():
    hx = HyperX([np.int64(4), 3], np.int32(2))
    assert hx.sides == (4, 3)
    assert type(hx.sides[0]) is int
    assert hx == HyperX((4, 3), 2)
    assert hash(hx) == hash(HyperX((4, 3), 2))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 5), min_size=1, max_size=3),
    st.data(),
)
def test_switch_distance_is_hamming(sides, data):
    hx = HyperX(tuple(sides), 1)
    a = data.draw(st.integers(0, hx.n_switches - 1))
    b = data.draw(st.integers(0, hx.n_switches - 1))
    ca, cb = hx.switch_coords()[a], hx.switch_coords()[b]
    assert hx.switch_distance(a, b) == int((ca != cb).sum())
    assert len(hx.minimal_paths(a, b)) == math.factorial(hx.switch_distance(a, b))
