"""Hostlist folding: ``hostlists.compress`` against ClusterShell's ``NodeSet.fromlist``
(the baseline, measured in the same run) on the node names of whole machines.

Usage: .venv/bin/python benchmarks/bench_hostlists.py
"""

from __future__ import annotations

import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ClusterShell.NodeSet import NodeSet

from hxportal import hostlists


def best_ms(function, repeat: int = 5) -> float:
    number = 3
    return min(timeit.repeat(function, number=number, repeat=repeat)) / number * 1000


def main() -> None:
    print(f"{'names':<34}{'NodeSet ms':>12}{'compress ms':>13}{'speed-up':>10}")
    cases = {
        "8x8, c = 8 (hx001..hx512)": [f"hx{i:03d}" for i in range(1, 513)],
        "16x16x16, c = 16 (65,536)": [f"hx{i:05d}" for i in range(1, 65_537)],
        "every 3rd of 65,536": [f"hx{i:05d}" for i in range(1, 65_537, 3)],
        "switch-node names s01-n02 (4,096)": [f"s{s:03d}-n{n:02d}" for s in range(256)
                                              for n in range(16)],
    }
    for label, names in cases.items():
        base = best_ms(lambda names=names: str(NodeSet.fromlist(names)))
        ours = best_ms(lambda names=names: hostlists.compress(names))
        assert hostlists.compress(names) == str(NodeSet.fromlist(names))
        print(f"{label:<34}{base:>12.2f}{ours:>13.2f}{base / ours:>9.1f}x")


if __name__ == "__main__":
    main()
