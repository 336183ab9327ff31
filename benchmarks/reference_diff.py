"""Two stored reproduction references side by side, figure by figure.

Why: a change of the model (a new ``ENGINE_VERSION``) remakes the stored
reference (``simulation/reproduction_reference.json``, docs/domain.md 6.8);
this prints what moved: every Table 4 value (mean over the seeds, difference
from the published value, 95 % interval half-width, engine rank, per-kernel
means) and every published ordering, for the old and the new reference on
the same points and seeds.

How: both files go through the report's own aggregation
(:func:`simulation.reproduction.aggregate`), so the figures are those the
reproduction page shows.  ``--old-rev REV`` reads the old reference from a
git revision of this repository (e.g. the commit before the model change).

Usage: python benchmarks/reference_diff.py --old-rev REV [--new FILE]
       python benchmarks/reference_diff.py --old FILE [--new FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simulation import reproduction  # noqa: E402

REFERENCE = "simulation/reproduction_reference.json"


def _load(path: str | None, rev: str | None) -> dict[str, Any]:
    if rev:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{REFERENCE}"],
                              check=True, capture_output=True, text=True).stdout
    else:
        text = Path(path or ROOT / REFERENCE).read_text(encoding="utf-8")
    return json.loads(text)


def _figure(row: dict[str, Any]) -> str:
    return (f"{row['engine']:.3f} {row['difference']:+.3f} "
            f"+-{row['interval']['half_width']:.3f} #{row['engine_rank']}")


def _kernels(row: dict[str, Any]) -> str:
    return ", ".join(f"{k['pattern']} {k['mean']:.3f}" for k in row["kernels"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    old = parser.add_mutually_exclusive_group(required=True)
    old.add_argument("--old", help="the old reference file")
    old.add_argument("--old-rev", help="git revision whose stored reference is the old one")
    parser.add_argument("--new", help="the new reference file (default: this checkout's)")
    args = parser.parse_args()
    published = json.loads((ROOT / "simulation" / "study_published.json").read_text())
    stored = {"old": _load(args.old, args.old_rev), "new": _load(args.new, None)}
    reports = {side: reproduction.aggregate(d["records"], published) for side, d in stored.items()}
    for side, d in stored.items():
        ordering = d.get("ordering_seeds", min(d["seeds"], 2))  # 2 at most before 2026-12-06
        print(f"{side}: engine {d['engine_version']}, {d['run_count']} runs, {d['seeds']} seeds, "
              f"the orderings on {ordering}: {reports[side]['agreement']['sentence']}")
    pairs = zip(reports["old"]["table4"]["ranks"], reports["new"]["table4"]["ranks"], strict=True)
    for old_rank, new_rank in pairs:
        print(f"\nTable 4, {new_rank['ranks']} ranks, T_diagonal / T_policy "
              f"(published; old, new: mean, difference, +- half-width, rank)")
        for o, n in zip(old_rank["rows"], new_rank["rows"], strict=True):
            print(f"  {n['policy']:16s} {n['published']:.2f}; old {_figure(o)}; "
                  f"new {_figure(n)} (published #{n['published_rank']})")
            print(f"      old kernels: {_kernels(o)}\n      new kernels: {_kernels(n)}")
    print("\nOrderings")
    for o, n in zip(reports["old"]["orderings"], reports["new"]["orderings"], strict=True):
        print(f"  {n['id']} {n['text']}: old {'holds' if o['holds'] else 'fails'}, "
              f"new {'holds' if n['holds'] else 'fails'}")
        print(f"      old: {o['detail']}; {o.get('noise_detail', '')}\n"
              f"      new: {n['detail']}; {n.get('noise_detail', '')}")
        values = {v["policy"]: v["value"] for v in o["values"]}
        print("      " + ", ".join(f"{v['policy']} {values[v['policy']]:.3f} -> {v['value']:.3f}"
                                   for v in n["values"]))


if __name__ == "__main__":
    main()
