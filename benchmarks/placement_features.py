"""Exploration: do load features of a placement explain the calibration's times?

Reads the cached runs of ``calibration_agreement.py`` (same cases, same cache) and,
for each calibration point and each live candidate, computes load features of the
job's placement on its machine (the job's all-to-all traffic and the other jobs'
permutation traffic, both at one phit per endpoint and cycle, split evenly over the
minimal dimension orders). Prints per cell the Spearman correlation of each feature
with the completion cycles, and how a per-cell fit on the feature ranks the live
candidates against their live times.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_runs import cached, default_cache_dir, setup_django


def link_loads(shape, endpoints: np.ndarray, ranks_total: int) -> np.ndarray:
    """Directed switch-to-switch loads (S x S) of ``endpoints`` sending to each other evenly
    at one phit per cycle each, minimal routes split over dimension orders."""
    c = shape.concentration
    coords = shape.switch_coords()
    s_count, dims = coords.shape
    per = np.bincount(np.asarray(endpoints, dtype=np.int64) // c, minlength=s_count)
    if ranks_total < 2:
        return np.zeros((s_count, s_count))
    demand = np.outer(per, per).astype(float) / (ranks_total - 1)
    np.fill_diagonal(demand, 0.0)
    src, dst = np.nonzero(demand)
    weight = demand[src, dst]
    strides = np.array([int(np.prod(shape.sides[d + 1:])) for d in range(dims)])
    loads = np.zeros((s_count, s_count))
    orders = list(itertools.permutations(range(dims)))
    for order in orders:
        here = coords[src].copy()
        for d in order:
            there = here.copy()
            there[:, d] = coords[dst, d]
            move = here[:, d] != there[:, d]
            a, b = here[move] @ strides, there[move] @ strides
            np.add.at(loads, (a, b), weight[move] / len(orders))
            here = there
    return loads


def features(shape, job: np.ndarray, held: np.ndarray) -> dict[str, float]:
    job_load = link_loads(shape, job, job.size)
    total = job_load + link_loads(shape, held, held.size)
    used = job_load > 0
    if not used.any():
        return {"maxlink": 0.0, "meanlink": 0.0, "meanline": 0.0, "maxline": 0.0,
                "switches": float(np.unique(job // shape.concentration).size)}
    coords = shape.switch_coords()
    line_util = np.zeros_like(total)
    for d in range(coords.shape[1]):
        rest = np.delete(coords, d, axis=1)
        keys = np.unique(rest, axis=0, return_inverse=True)[1].ravel()
        same = (keys[:, None] == keys[None, :]) & (coords[:, d][:, None] != coords[:, d][None, :])
        for line in np.unique(keys):
            members = np.nonzero(keys == line)[0]
            block = np.ix_(members, members)
            k = members.size
            util = total[block].sum() / (k * (k - 1))
            line_util[block] = np.where(same[block], util, 0.0)
    w = job_load[used]
    return {"maxlink": float(total[used].max()),
            "meanlink": float((w * total[used]).sum() / w.sum()),
            "meanline": float((w * line_util[used]).sum() / w.sum()),
            "maxline": float(line_util[used].max()),
            "switches": float(np.unique(job // shape.concentration).size)}


def _runs(shape, tasks, cache) -> list[tuple[str, int, int, dict[str, float]]]:
    """(policy, seed, completion cycles, features) of each cached, completed run."""
    out = []
    for t in tasks:
        found = cached(cache, t)
        if not found or found.get("completion_cycles") is None:
            continue
        job = np.asarray(t.partitions[0], dtype=np.int64)
        held = np.asarray(t.partitions[1] if len(t.partitions) > 1 else [], dtype=np.int64)
        out.append((t.label[-2], t.label[-1], found["completion_cycles"],
                    features(shape, job, held)))
    return out


def report_case(label: str, rows: list, live_runs: list) -> None:
    """Per feature: its rank correlation with the calibration's cycles at this size, and
    the live pick, regret and error of a log-linear fit on it."""
    from scipy.stats import spearmanr

    live: dict[str, float] = {}
    live_x: dict[str, dict[str, float]] = {}
    for policy, _, cycles, feats in live_runs:
        live.setdefault(policy, 0.0)
        live[policy] += cycles / sum(1 for r in live_runs if r[0] == policy)
        live_x[policy] = feats
    best = min(live, key=live.get)
    means: dict[str, list[int]] = {}
    for policy, _, cycles, _ in rows:
        means.setdefault(policy, []).append(cycles)
    by_policy = {p: float(np.mean(v)) for p, v in means.items() if p in live}
    pick = min(by_policy, key=by_policy.get)
    err = np.median([abs(by_policy[p] / live[p] - 1) for p in by_policy])
    print(f"{label}: {len(rows)} points; live best {best}")
    print(f"   {'by policy':9s}           pick {pick:22s} regret "
          f"{live[pick] / live[best] - 1:6.2%}  median |err| {err:6.1%}")
    cyc = np.array([r[2] for r in rows], dtype=float)
    for name in FEATURES:
        x = np.array([r[3][name] for r in rows])
        if np.ptp(x) == 0:
            continue
        fit = np.polyfit(x, np.log(cyc), 1)
        pred = {p: float(np.exp(np.polyval(fit, f[name]))) for p, f in live_x.items()}
        pick = min(pred, key=pred.get)
        err = np.median([abs(pred[p] / live[p] - 1) for p in live])
        seen = [f[name] for f in live_x.values()]
        print(f"   {name:9s} rho {spearmanr(x, cyc).statistic:+.2f}  pick {pick:22s} regret "
              f"{live[pick] / live[best] - 1:6.2%}  median |err| {err:6.1%}  "
              f"live x {min(seen):.2f}..{max(seen):.2f}  "
              f"calibration x {x.min():.2f}..{x.max():.2f}")


FEATURES = ("maxlink", "meanlink", "meanline", "maxline", "switches")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only8", action="store_true")
    parser.add_argument("--only16", action="store_true")
    parser.add_argument("--cases16", default="1024@0.5,512@0.5,64@0.5,64@0.75,128@0.5,256@0.5")
    parser.add_argument("--seeds16", default="0,1")
    parser.add_argument("--pattern", default="all2all")
    args = parser.parse_args()
    setup_django()
    import calibration_agreement as ca

    cache = default_cache_dir()
    seeds16 = tuple(int(s) for s in args.seeds16.split(","))
    cases, _ = ca.plan(args.pattern, args.cases16, args.only8, seeds16=seeds16,
                       only16=args.only16)
    for shape, n, u, points, live in cases:
        rows = _runs(shape, [t for t in points if t.label[2] == n], cache)
        live_runs = _runs(shape, live, cache)
        label = f"{ca.shape_label(shape)} {n}@{u:.0%}"
        if len(rows) < 4 or not live_runs:
            print(f"{label}: {len(rows)} calibration points at this size, "
                  f"{len(live_runs)} live runs: skipped")
            continue
        report_case(label, rows, live_runs)


if __name__ == "__main__":
    main()
