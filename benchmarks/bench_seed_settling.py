"""A split live answer settled by more seeds, end to end on a real worker.

Why: when a live answer's first seeds split on the fastest policy, the portal runs
more seeds for the fastest and its rivals while the deadline leaves time
(``HX_PREDICTION_MAX_SEEDS``). This measures what that costs an operator on this
host (the time to the answer, the extra runs) and what it changes (the pick), each
question asked twice: with settling off (``HX_PREDICTION_MAX_SEEDS`` = 2) and on.

How: PostgreSQL and Redis (a scratch database), a real 2-process worker started per
round with the setting in its environment; an 8x8, c = 8 machine with 64-node jobs
holding ``--load`` of it (Row and Diagonal in turn); each question is an all-to-all
of ``--node-counts`` nodes. No stored result is reused between rounds (the runs are
deleted), so both rounds simulate the first seeds anew: the same engine seeds give
the same cycles, and the rounds differ only by the extra seeds.

Usage: python benchmarks/bench_seed_settling.py [--node-counts 64,128,192]
       [--loads 0.5,0.75] [--max-seeds 2,6]
       [--database-url postgres://postgres@127.0.0.1:5432/postgres]
       [--broker redis://127.0.0.1:6379/13]
"""

from __future__ import annotations

import argparse
import os
import time

from _workers import add_service_arguments, portal_environment, start_worker, stop_worker

SIDES, CONCENTRATION, JOB_NODES = [8, 8], 8, 64


def _machine(name: str, load: float):
    """The machine with ``load`` of it held by 64-node jobs (Row and Diagonal in turn)."""
    from allocation.services import jobs, machines
    from hxportal.models import User
    from hxportal.roles import Role

    admin, _ = User.objects.get_or_create(username="bench", defaults={"role": Role.ADMIN})
    machine = machines.create_machine(name=name, sides=SIDES, concentration=CONCENTRATION)
    for i in range(round(load * machine.node_count / JOB_NODES)):
        jobs.submit_job(owner=admin, machine=machine, name=f"bg{i}", node_count=JOB_NODES,
                        pattern="all2all", policy="row" if i % 2 else "diagonal")
    return admin, machine


def _ask(admin, machine, node_count: int, timeout: float = 120) -> dict:
    """Ask the question (a worker is running) and follow it to its answer."""
    from recommendations import constants
    from recommendations import services as recommendations
    from recommendations.models import PolicyPrediction, Recommendation

    start = time.monotonic()
    rec, _ = recommendations.request_recommendation(
        user=admin, machine=machine, name=f"q{node_count}", node_count=node_count,
        pattern="all2all", t_cmpt=100.0, t_comm=50.0, p_abn=0.02, alpha_abn=3.0,
        t_bench=0.5)
    predictions = PolicyPrediction.objects.filter(recommendation=rec)
    while True:
        rec = recommendations.refresh(Recommendation.objects.get(pk=rec.pk))
        if rec.status != "computing":
            break
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"no answer after {timeout} s: {rec.note}")
        time.sleep(0.2)
    answered = time.monotonic() - start
    first = set(constants.prediction_seeds())
    return {"answered": answered, "method": rec.method, "pick": rec.recommended["policy"],
            "runs": predictions.filter(seed__in=first).count(),
            "extra": predictions.exclude(seed__in=first).count(),
            "extra_seeds": rec.inputs.get("extra_seeds", []), "note": rec.note}


def _drain(timeout: float) -> None:
    """Wait until no prediction is running or queued (those left at a deadline)."""
    from hxportal.models import TERMINAL_RUN_STATUSES
    from recommendations.models import PolicyPrediction

    end = time.monotonic() + timeout
    while PolicyPrediction.objects.exclude(status__in=TERMINAL_RUN_STATUSES).exists() \
            and time.monotonic() < end:
        time.sleep(0.5)


def _verdict(note: str) -> str:
    """What the note says of the seeds, in one word."""
    if "settled it" in note:
        return "settled"
    if "did not settle it" in note:
        return "unsettled"
    if "seeds do not agree" in note:
        return "split"
    return "agreed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--node-counts", default="64,128,192")
    ap.add_argument("--loads", default="0.5,0.75")
    ap.add_argument("--max-seeds", default="2,6")
    add_service_arguments(ap)
    args = ap.parse_args()

    env, data_dir = portal_environment(args, "hxbench_settling", {
        "HX_CALIBRATE_AUTOMATICALLY": "0", "HX_PREDICTION_PROCESSES": "2"})
    from django.conf import settings

    from hxportal.celery import app
    from recommendations.models import Recommendation
    from simulation.models import SimulationRun

    machines = {load: _machine(f"bench{round(load * 100)}", load)
                for load in (float(u) for u in args.loads.split(","))}
    counts = [int(n) for n in args.node_counts.split(",")]
    print(f"8x8 c=8 machines, 64-node jobs holding {', '.join(f'{u:.0%}' for u in machines)}; "
          f"all2all questions of {', '.join(map(str, counts))} nodes; 2 worker processes; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'case':>10} {'max seeds':>9} {'to answer s':>11} {'runs':>5} {'extra':>5} "
          f"{'seeds added':>12} {'pick':>22} {'method':>11} {'seeds say':>10}", flush=True)
    for max_seeds in (int(m) for m in args.max_seeds.split(",")):
        settings.HX_PREDICTION_MAX_SEEDS = max_seeds
        worker_env = {**env, "HX_PREDICTION_MAX_SEEDS": str(max_seeds)}
        Recommendation.objects.all().delete()
        SimulationRun.objects.all().delete()  # no stored result to reuse between rounds
        app.control.purge()
        proc = start_worker(2, worker_env, data_dir / f"worker-{max_seeds}.log")
        try:
            for load, (admin, machine) in machines.items():
                for n in counts:
                    if n > machine.node_count * (1 - load):
                        continue
                    row = _ask(admin, machine, n)
                    added = ",".join(map(str, row["extra_seeds"])) or "-"
                    print(f"{f'{n}@{load:.0%}':>10} {max_seeds:>9} {row['answered']:>11.1f} "
                          f"{row['runs']:>5} {row['extra']:>5} {added:>12} {row['pick']:>22} "
                          f"{row['method']:>11} {_verdict(row['note']):>10}", flush=True)
                    if row["extra"]:
                        print(f"{'':>10} note: {row['note'][-240:]}", flush=True)
                    _drain(timeout=120)  # runs left at the deadline end first
        finally:
            stop_worker(proc)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
