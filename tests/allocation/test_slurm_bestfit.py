"""The model of Slurm's best fit on a topology/tree grouping (pure)."""

from __future__ import annotations

import pytest

from allocation.slurm_bestfit import best_fit, parse_tree
from allocation.slurm_topology import render

HOSTS = [f"hx{i:03d}" for i in range(1, 513)]


def switches_of(nodes: list[str]) -> list[int]:
    return sorted({(int(h[2:]) - 1) // 8 for h in nodes})


def tree(kind: str):
    return parse_tree(render(kind, "hx", (8, 8), 8, HOSTS))


@pytest.mark.parametrize("kind, size, switches", [
    ("tree", 16, [0, 1]), ("tree", 64, list(range(8))),
    ("tree-diagonal", 16, [0, 9]), ("tree-diagonal", 64, [0, 9, 18, 27, 36, 45, 54, 63]),
    ("tree-nested", 16, [0, 9]), ("tree-nested", 32, [0, 9, 18, 27]),
    ("tree-nested", 128, [0, 1, 9, 10, 18, 19, 27, 28, 36, 37, 45, 46, 54, 55, 56, 63]),
])
def test_an_empty_machine_gives_the_first_group_of_the_size(kind, size, switches):
    assert switches_of(best_fit(tree(kind), HOSTS, size)) == switches


def test_partly_used_switches_go_first_inside_the_chosen_group():
    free = [h for h in HOSTS if h not in {"hx001", "hx073"}]  # switches 0 and 9
    # Row tree: row 0 has 63 free nodes, the fewest that fit 16: switch 0 (7 free)
    # first, then whole switch 1, then one node of switch 2.
    row = best_fit(tree("tree"), free, 16)
    assert switches_of(row) == [0, 1, 2] and row[0] == "hx002"
    # Nested: the pair {0, 9} lost two nodes; the next whole pair {18, 27} fits.
    assert switches_of(best_fit(tree("tree-nested"), free, 16)) == [18, 27]
    # Plain diagonals: diagonal 0 is the fullest that fits, so its broken switches go first.
    assert switches_of(best_fit(tree("tree-diagonal"), free, 16))[:2] == [0, 9]


def test_too_large_a_job_and_bad_files():
    assert best_fit(tree("tree-nested"), HOSTS[:10], 11) is None
    with pytest.raises(ValueError, match="used before it is defined"):
        parse_tree("SwitchName=top Switches=leaf\nSwitchName=leaf Nodes=hx001\n")
    with pytest.raises(ValueError, match="not a topology/tree line"):
        parse_tree("BlockName=b0 Nodes=hx[001-064]\n")
