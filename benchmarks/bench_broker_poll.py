"""How long a run waits for an idle worker on the zero-setup filesystem broker.

Usage: .venv/bin/python benchmarks/bench_broker_poll.py [--polls 1000,100]
       [--runs 12] [--rounds 2] [--idle-seconds 10]

kombu's virtual transports (the filesystem broker of ``make run``) sleep
``polling_interval`` whenever every queue is empty; its default is 1 s, and
``HX_BROKER_POLL_MS`` sets it (100 ms by default). On a scratch SQLite database
and broker folder this starts a real worker (``celery -A hxportal worker``,
concurrency 1, the main worker's queues) once per poll setting and round, in
turn, and submits ``--runs`` tiny simulations one after another, each when the
last has finished, as a recommendation's chain of tasks does. Printed per
setting: the median and 90th percentile of the pickup (the run's ``started_at``
minus its ``created_at``) and of submit-to-finished, their ratios to the first
setting's in the same run, and the worker's CPU time while idle
(``--idle-seconds``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUEUES = "celery,hx-interactive,hx-maintenance"
#: A run of a few milliseconds: what is timed is the broker, not the engine.
TINY = {"sides": [2, 2], "concentration": 2, "ranks": 8, "pattern": "all2all",
        "message_packets": 1, "max_cycles": 5_000}


def start_worker(env: dict[str, str], log: Path, name: str) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "hxportal", "worker", "--loglevel=INFO",
         "--concurrency=1", "-n", f"{name}@%h", "-Q", QUEUES],
        cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while "ready." not in log.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"worker did not start:\n{log.read_text()[-2000:]}")
        time.sleep(0.2)
    return process


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (the pool), from /proc."""
    pids = [pid, *map(int, subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                          text=True).stdout.split())]
    ticks = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def time_runs(n: int, seed0: int) -> tuple[list[float], list[float]]:
    from hxportal.models import TERMINAL_RUN_STATUSES, RunStatus
    from simulation import services as simulations
    from simulation.models import SimulationRun

    pickups, totals = [], []
    for i in range(n):
        t0 = time.perf_counter()
        run = simulations.start_run({**TINY, "seed": seed0 + i})
        while True:
            run = SimulationRun.objects.get(pk=run.pk)
            if run.status in TERMINAL_RUN_STATUSES:
                break
            time.sleep(0.005)
        totals.append(time.perf_counter() - t0)
        if run.status != RunStatus.SUCCEEDED:
            raise RuntimeError(f"run {run.pk} ended {run.status}: {run.error}")
        pickups.append((run.started_at - run.created_at).total_seconds())
    return pickups, totals


def p90(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.9 * len(values)) - 1)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polls", default="1000,100", help="HX_BROKER_POLL_MS values")
    parser.add_argument("--runs", type=int, default=12, help="runs per setting and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--idle-seconds", type=float, default=10.0,
                        help="how long the idle worker's CPU time is measured")
    args = parser.parse_args()
    polls = [int(p) for p in args.polls.split(",")]

    scratch = Path(tempfile.mkdtemp(prefix="hx-broker-poll-"))
    for name in ("DATABASE_URL", "CELERY_BROKER_URL"):
        os.environ.pop(name, None)
    os.environ.update(HX_DATA_DIR=str(scratch),
                      DJANGO_SETTINGS_MODULE="hxportal.settings.local")
    sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)

    pickups: dict[int, list[float]] = {p: [] for p in polls}
    totals: dict[int, list[float]] = {p: [] for p in polls}
    idle: dict[int, list[float]] = {p: [] for p in polls}
    seed = 1
    for round_no in range(args.rounds):
        for poll in polls:
            env = {**os.environ, "HX_BROKER_POLL_MS": str(poll), "PYTHONUNBUFFERED": "1"}
            worker = start_worker(env, scratch / f"worker-{poll}-{round_no}.log", f"p{poll}")
            try:
                time.sleep(2)  # the pool's warm-up and first polls
                before = cpu_seconds(worker.pid)
                time.sleep(args.idle_seconds)
                idle[poll].append(cpu_seconds(worker.pid) - before)
                got_pickups, got_totals = time_runs(args.runs, seed)
                seed += args.runs
                pickups[poll] += got_pickups
                totals[poll] += got_totals
            finally:
                worker.send_signal(3)  # SIGQUIT: cold shutdown, as scripts/run.sh stops it
                worker.wait(timeout=30)

    base = polls[0]
    print(f"{args.rounds} rounds x {args.runs} runs per setting, one worker (concurrency 1), "
          f"settings in turn; load average after: {os.getloadavg()[0]:.2f}")
    print("| HX_BROKER_POLL_MS | pickup median | pickup p90 | submit to finished median | "
          f"p90 | median vs first | idle CPU per {args.idle_seconds:g} s |")
    print("|---|---|---|---|---|---|---|")
    for poll in polls:
        med = statistics.median(totals[poll])
        print(f"| {poll} | {statistics.median(pickups[poll]) * 1000:.0f} ms | "
              f"{p90(pickups[poll]) * 1000:.0f} ms | {med * 1000:.0f} ms | "
              f"{p90(totals[poll]) * 1000:.0f} ms | "
              f"{statistics.median(totals[base]) / med:.2f}x faster | "
              f"{statistics.median(idle[poll]):.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
