"""A recommendation's live simulations on 1 and on 2 Celery worker processes.

Why: issue 19 asks that simulations use more than one core or host when they are
there, benchmarked. The portal's parallelism is across independent runs: each
(policy, seed) of a recommendation's live simulations is a Celery task of its own
(8 policies x 2 seeds = 16), as each calibration point is; one run is never split
(no domain decomposition).

How: PostgreSQL and Redis (a scratch database); the question is a 64-node
all-to-all on the 8x8, c = 8 reference machine half held by four 64-node jobs (the
largest case that is simulated live within the deadline on 2 processes), or
``--sides/--concentration/--node-count`` for another. For each P a real worker
(``celery -A hxportal worker --concurrency=P``, started and warmed before the
question) runs the predictions: the wall time from the question to the last
prediction's end and to the answer, the answer's method, and the runs' own CPU
seconds. No stored result is reused between rounds (the runs are deleted).

On paper, for more processes: list scheduling of the measured run times (longest
first) as the tasks are now (one per policy and seed) and as they were before this
round (one per policy, its seeds in a row), so the gain of the split shows where it
matters (more processes than policies).

Usage: python benchmarks/bench_prediction_workers.py [--processes 1,2]
       [--database-url postgres://postgres@127.0.0.1:5432/postgres]
       [--broker redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import heapq
import os
import time
from pathlib import Path

from _workers import add_service_arguments, portal_environment, start_worker, stop_worker

PAPER_PROCESSES = (1, 2, 4, 8, 16, 64)


def _machine(sides: list[int], concentration: int, jobs_of: int, jobs_count: int):
    from allocation.services import jobs, machines
    from hxportal.models import User
    from hxportal.roles import Role

    admin = User.objects.create_user("bench", password="bench-only-password-1")  # noqa: S106
    admin.role = Role.ADMIN
    admin.save()
    machine = machines.create_machine(name="bench", sides=sides, concentration=concentration)
    for i in range(jobs_count):
        jobs.submit_job(owner=admin, machine=machine, name=f"bg{i}", node_count=jobs_of,
                        pattern="all2all", policy="row" if i % 2 else "diagonal")
    return admin, machine


def _round(processes: int, admin, machine, node_count: int, env: dict[str, str],
           log: Path) -> dict:
    """Ask the question with a warm P-process worker running; time its predictions."""
    from hxportal.celery import app
    from hxportal.models import TERMINAL_RUN_STATUSES
    from recommendations import services as recommendations
    from recommendations.models import PolicyPrediction, Recommendation
    from simulation.models import SimulationRun

    Recommendation.objects.all().delete()
    SimulationRun.objects.all().delete()  # no stored result to reuse between rounds
    app.control.purge()
    proc = start_worker(processes, env, log)
    try:
        start = time.monotonic()
        rec, _ = recommendations.request_recommendation(
            user=admin, machine=machine, name=f"p{processes}", node_count=node_count,
            pattern="all2all", t_cmpt=100.0, t_comm=50.0, p_abn=0.02, alpha_abn=3.0,
            t_bench=0.5)
        predictions = PolicyPrediction.objects.filter(recommendation=rec)
        answered = None
        while predictions.exclude(status__in=TERMINAL_RUN_STATUSES).exists() \
                or answered is None:
            if answered is None and Recommendation.objects.get(pk=rec.pk).status != "computing":
                answered = time.monotonic() - start
            time.sleep(0.2)
        wall = time.monotonic() - start
    finally:
        stop_worker(proc)
    rec.refresh_from_db()
    per_run = {(p.policy, p.seed): float((p.result or {}).get("cpu_seconds") or 0.0)
               for p in predictions}
    return {"processes": processes, "wall": wall, "answered": answered, "method": rec.method,
            "runs": len(per_run), "failed": predictions.exclude(status="succeeded").count(),
            "per_run": per_run}


def _makespan(durations: list[float], processes: int) -> float:
    """List scheduling, longest first: the wall time of ``durations`` on P processes."""
    loads = [0.0] * processes
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", default="1,2")
    ap.add_argument("--sides", default="8,8")
    ap.add_argument("--concentration", type=int, default=8)
    ap.add_argument("--node-count", type=int, default=64)
    add_service_arguments(ap)
    args = ap.parse_args()

    env, data_dir = portal_environment(args, "hxbench_predictions", {
        "HX_CALIBRATE_AUTOMATICALLY": "0", "HX_PREDICTION_PROCESSES": "2"})
    sides = [int(s) for s in args.sides.split(",")]
    nodes = args.concentration
    for s in sides:
        nodes *= s
    admin, machine = _machine(sides, args.concentration, args.node_count,
                              nodes // 2 // args.node_count)
    print(f"machine {machine.shape}: {nodes} nodes, half held; question: "
          f"{args.node_count}-node all2all; load average {os.getloadavg()[0]:.2f}")
    print(f"{'processes':>9} {'runs':>5} {'to answer s':>12} {'all runs s':>11} "
          f"{'speed-up':>9} {'run CPU s':>10} {'method':>11} {'failed':>6}", flush=True)
    rows = []
    for processes in (int(p) for p in args.processes.split(",")):
        row = _round(processes, admin, machine, args.node_count, env,
                     data_dir / f"worker-{processes}.log")
        rows.append(row)
        one = next((r["wall"] for r in rows if r["processes"] == 1), None)
        speedup = f"{one / row['wall']:>8.2f}x" if one else f"{'-':>9}"
        print(f"{processes:>9} {row['runs']:>5} {row['answered']:>12.1f} {row['wall']:>11.1f} "
              f"{speedup} {sum(row['per_run'].values()):>10.1f} {row['method']:>11} "
              f"{row['failed']:>6}", flush=True)
    per_run = rows[-1]["per_run"]
    by_policy: dict[str, float] = {}
    for (policy, _), seconds in per_run.items():
        by_policy[policy] = by_policy.get(policy, 0.0) + seconds
    print(f"\non paper, from the last round's run CPU times ({len(per_run)} runs, "
          f"{min(per_run.values()):.2f}-{max(per_run.values()):.2f} s each): wall time of "
          "the live simulations on P processes")
    print(f"{'processes':>9} {'a task per policy and seed':>27} {'a task per policy':>18}")
    for p in PAPER_PROCESSES:
        print(f"{p:>9} {_makespan(list(per_run.values()), p):>26.1f}s "
              f"{_makespan(list(by_policy.values()), p):>17.1f}s")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
