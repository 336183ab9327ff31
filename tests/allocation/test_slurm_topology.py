"""Slurm topology export: tree, block and node features, from the API and the page."""

from __future__ import annotations

import pytest

from allocation.services import machines
from allocation.slurm_topology import render

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
