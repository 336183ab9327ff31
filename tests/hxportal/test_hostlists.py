"""compress() folds names itself for the common shape and must equal NodeSet's folding."""

from __future__ import annotations

import pytest
from ClusterShell.NodeSet import NodeSet
from hypothesis import given
from hypothesis import strategies as st

from hxportal import hostlists

prefixes = st.sampled_from(["n", "hx", "a-", "node_", "x", "cn-", "n1x", "gpu.", ""])
digits = st.one_of(st.integers(0, 5000).map(str),
                   st.tuples(st.integers(0, 5000), st.integers(1, 6)).map(
                       lambda t: f"{t[0]:0{t[1]}d}"))
names = st.lists(st.tuples(prefixes, digits, st.sampled_from(["", "", "", "-ib", "b"])).map(
    lambda t: "".join(t)).filter(lambda n: n and n[0] != "-"), min_size=1, max_size=200)


@given(names)
def test_compress_equals_nodeset_folding(hostnames):
    assert hostlists.compress(hostnames) == str(NodeSet.fromlist(hostnames))


@given(st.integers(1, 3000), st.integers(1, 5))
def test_compress_round_trips(count, width):
    width = max(width, len(str(count)))
    hostnames = [f"hx{i:0{width}d}" for i in range(1, count + 1) if i % 7]
    assert hostlists.expand(hostlists.compress(hostnames)) == sorted(
        hostnames, key=lambda n: int(n[2:]))


@pytest.mark.parametrize("hostnames", [
    ["hx0001", "hx0002", "hx0004"], ["n9", "n10", "n11"], ["a1", "b2"], ["x"], ["n01"],
    ["n01", "n1"], [f"hx{i:04d}" for i in range(1, 2049, 3)], ["node-a1", "node-a3"],
    ["hx-r01n001", "hx-r01n002"], ["a.b1", "a.b2"],
])
def test_upload_summaries_fold_like_nodeset(hostnames):
    """The shapes benchmark uploads summarise (they once had a folding of their own)."""
    assert hostlists.compress(hostnames) == str(NodeSet.fromlist(hostnames))


def test_simple_shapes_take_the_fast_path():
    assert hostlists._fold_simple(["hx001", "hx002", "hx010"]) == "hx[001-002,010]"
    assert hostlists._fold_simple(["n1", "n10", "n2"]) == "n[1-2,10]"
    assert hostlists._fold_simple(["n01", "n1"]) is None  # padding mixed: NodeSet decides
    assert hostlists._fold_simple(["s1-n2"]) is None       # two numbers: NodeSet decides
