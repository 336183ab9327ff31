"""Slurm topology export: tree, block and node features, from the API and the page."""

from __future__ import annotations

import math

import pytest

from allocation.services import machines
from allocation.slurm_topology import render
from hxportal.hostlists import expand

pytestmark = pytest.mark.django_db


@pytest.fixture
def hx(db):
    return machines.create_machine(name="hx", sides=[8, 8], concentration=8)


def test_tree_has_a_leaf_per_switch_a_parent_per_row_and_a_root(api, hx):
    response = api("viewer").get("/api/v1/machines/hx/topology/?kind=tree")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert 'filename="hx-tree.conf"' in response["Content-Disposition"]
    lines = response.content.decode().splitlines()
    leaves = [line for line in lines if "Nodes=" in line]
    assert len(leaves) == 64
    assert leaves[0] == "SwitchName=hx_s0_0 Nodes=hx[001-008]"
    assert leaves[9] == "SwitchName=hx_s1_1 Nodes=hx[073-080]"
    assert "SwitchName=hx_row3 Switches=hx_s3_[0-7]" in lines
    assert lines[-1] == "SwitchName=hx_root Switches=hx_row[0-7]"


def test_block_and_features(api, hx):
    block = api("viewer").get("/api/v1/machines/hx/topology/?kind=block").content.decode()
    assert "BlockName=hx_row0 Nodes=hx[001-064]" in block
    assert "BlockSizes=64,128,256,512" in block
    features = api("viewer").get("/api/v1/machines/hx/topology/?kind=features")
    text = features.content.decode()
    assert "NodeName=hx[073-080] Features=hx_row1,hx_col1" in text


def test_unknown_kind_is_400_and_anonymous_is_401(api, hx):
    assert api("viewer").get("/api/v1/machines/hx/topology/?kind=fat").status_code == 400
    assert api(None).get("/api/v1/machines/hx/topology/").status_code == 401


def test_three_dimensional_features_name_every_dimension():
    names = [f"n{i:03d}" for i in range(2 * 2 * 2 * 2)]
    text = render("features", "h3", (2, 2, 2), 2, names)
    assert "NodeName=n[014-015] Features=hx_row1,hx_col1,hx_d0_1" in text
    tree = render("tree", "h3", (2, 2, 2), 2, names)
    assert "SwitchName=h3_row3 Switches=h3_s1_1_[0-1]" in tree


def test_default_kind_is_the_nested_diagonal_tree(api, hx):
    response = api("viewer").get("/api/v1/machines/hx/topology/")
    assert 'filename="hx-tree-nested.conf"' in response["Content-Disposition"]
    lines = response.content.decode().splitlines()
    assert "SwitchName=hx_diag1_l1_3 Switches=hx_s6_7,hx_s7_0" in lines
    assert "SwitchName=hx_diags_l1_0 Switches=hx_diag[0-1]" in lines
    assert lines[-1] == "SwitchName=hx_root Switches=hx_diags_l2_[0-1]"


def parse_tree(text: str) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """(leaf names in file order, leaf -> nodes, group -> children), names expanded."""
    leaves, nodes, children = [], {}, {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        fields = dict(part.split("=", 1) for part in line.split())
        if "Nodes" in fields:
            leaves.append(fields["SwitchName"])
            nodes[fields["SwitchName"]] = expand(fields["Nodes"])
        else:
            children[fields["SwitchName"]] = expand(fields["Switches"])
    return leaves, nodes, children


def members(group: str, nodes: dict, children: dict) -> set[str]:
    if group in nodes:
        return set(nodes[group])
    return set().union(*(members(child, nodes, children) for child in children[group]))


@pytest.mark.parametrize("sides, c", [((8, 8), 8), ((4, 4), 4), ((3, 5), 2), ((2, 2, 4), 2),
                                      ((5,), 3)])
@pytest.mark.parametrize("kind", ["tree", "tree-diagonal", "tree-nested"])
def test_every_tree_is_a_tree_over_every_switch(kind, sides, c):
    names = [f"n{i:04d}" for i in range(math.prod(sides) * c)]
    leaves, nodes, children = parse_tree(render(kind, "m", sides, c, names))
    assert len(leaves) == math.prod(sides)
    assert sorted(n for leaf in nodes.values() for n in leaf) == names
    parents = [child for kids in children.values() for child in kids]
    assert len(parents) == len(set(parents)) == len(children) - 1 + len(leaves)
    assert set(children) - set(parents) == {"m_root"}
    assert members("m_root", nodes, children) == set(names)


def test_diagonal_groups_are_transversals_and_nest_in_halves():
    names = [f"hx{i:03d}" for i in range(1, 513)]
    leaves, nodes, children = parse_tree(render("tree-nested", "hx", (8, 8), 8, names))
    coords = {leaf: tuple(int(x) for x in leaf[4:].split("_")) for leaf in leaves}
    assert leaves[:8] == [f"hx_s{i}_{i}" for i in range(8)]  # diagonal 0 first
    for p in range(8):
        switches = [coords[leaf] for leaf in children_leaves(f"hx_diag{p}", children)]
        assert len({y for y, _ in switches}) == len({x for _, x in switches}) == 8
        assert {(x - y) % 8 for y, x in switches} == {p}
    sizes = {group: len(members(group, nodes, children)) for group in children}
    assert sorted(set(sizes.values())) == [16, 32, 64, 128, 256, 512]
    assert children["hx_diags_l1_1"] == ["hx_diag2", "hx_diag3"]
    plain = parse_tree(render("tree-diagonal", "hx", (8, 8), 8, names))[2]
    assert plain["hx_diag3"] == children_leaves("hx_diag3", children)
    assert plain["hx_root"] == [f"hx_diag{p}" for p in range(8)]


def children_leaves(group: str, children: dict) -> list[str]:
    if group not in children:
        return [group]
    return [leaf for child in children[group] for leaf in children_leaves(child, children)]
