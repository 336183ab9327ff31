"""A 512-node all-to-all recommendation on a half-full 16x16, c = 16 machine.

The issue's case: 4,096 nodes, eight 256-node jobs holding half of it. Live, each
policy's simulation at the study's volume takes about a minute on one core, so the
eight policies x two seeds cannot finish within the 30 s deadline on 2 worker
processes. This script shows the three answers in turn, through the services and a
real Celery worker with 2 processes, against PostgreSQL and Redis:

1. before any calibration: the answer (analytic) and the calibration it starts
   (that default-grid calibration is cancelled here, to keep the run short);
2. a calibration of the all-to-all at 50 % load, sizes 256 and 1,024 (512 is
   interpolated between them), two seeds, every policy, run by the worker: its
   wall time and simulation time;
3. the same question again: its answer time and method (calibrated), the ranking;
4. (``--live``) the live simulations of that question on its real occupancy, run
   here on 2 processes, and how the calibrated ranking compares with them.

Usage: python benchmarks/bench_calibrated_recommendation.py [--live]
       [--database-url postgres://postgres@127.0.0.1:5432/postgres]
       [--broker redis://127.0.0.1:6379/13] [--sizes 256,1024] [--seeds 0,1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_study_workers import _stop, _worker  # noqa: E402  (same folder)

QUESTION = {"node_count": 512, "pattern": "all2all", "t_cmpt": 3600.0, "t_comm": 1800.0,
            "p_abn": 0.01, "alpha_abn": 2.0, "t_bench": 30.0}


def _machine():
    from allocation.services import jobs, machines
    from hxportal.models import User
    from hxportal.roles import Role

    admin = User.objects.create_user("bench", password="bench-only-password-1")  # noqa: S106
    admin.role = Role.ADMIN
    admin.save()
    machine = machines.create_machine(name="big", sides=[16, 16], concentration=16)
    for i in range(8):
        jobs.submit_job(owner=admin, machine=machine, name=f"bg{i}", node_count=256,
                        pattern="all2all", policy="row")
    return admin, machine


def _ask(admin, machine, name: str):
    from recommendations import services as recommendations

    started = time.perf_counter()
    rec, _ = recommendations.request_recommendation(user=admin, machine=machine, name=name,
                                                    **QUESTION)
    return rec, time.perf_counter() - started


def _ranking(rec) -> str:
    rows = [e for e in rec.ranking if "error" not in e]
    return ", ".join(f"{e['policy']} {e['relative_comm']:.3f}" for e in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/postgres")
    ap.add_argument("--broker", default="redis://127.0.0.1:6379/13")
    ap.add_argument("--sizes", default="256,1024")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--live", action="store_true", help="also simulate the question live")
    args = ap.parse_args()
    url = fresh_postgres(args.database_url, "hxbench_calibrated")
    data_dir = tempfile.mkdtemp(prefix="hxbench-")
    env = {**os.environ, "DATABASE_URL": url, "CELERY_BROKER_URL": args.broker,
           "DJANGO_SETTINGS_MODULE": "hxportal.settings.local", "HX_DATA_DIR": data_dir,
           "HX_CALIBRATE_AUTOMATICALLY": "1", "PYTHONUNBUFFERED": "1"}
    os.environ.update(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env,
                   check=True)
    import django

    django.setup()
    from hxportal.celery import app
    from recommendations import services as recommendations
    from recommendations.models import Calibration

    app.control.purge()
    admin, machine = _machine()
    print(f"machine {machine.shape}: {machine.node_count} nodes, 8 jobs of 256 hold half")
    rec, seconds = _ask(admin, machine, "before")
    print(f"1. no calibration: answered in {seconds:.2f} s, method {rec.method}, "
          f"status {rec.status}; expected live time {rec.inputs['expected_live_seconds']} s "
          f"on 2 processes; note: {rec.note}")
    for started in Calibration.objects.all():
        recommendations.cancel_calibration(started)
    app.control.purge()
    axes = {"patterns": ["all2all"], "sizes": [int(s) for s in args.sizes.split(",")],
            "loads": [0.5], "seeds": [int(s) for s in args.seeds.split(",")]}
    calibration, _ = recommendations.start_calibration(machine, user=admin, axes=axes)
    print(f"2. calibration {calibration.pk}: {calibration.run_count} runs {axes}", flush=True)
    proc = _worker(2, env, Path(data_dir) / "worker.log")
    started = time.monotonic()
    try:
        while (calibration := recommendations.refresh_calibration(calibration)).status \
                == "running":
            progress = recommendations.calibration_progress(calibration)
            print(f"   {progress['done']}/{progress['total']} runs, "
                  f"{time.monotonic() - started:.0f} s", flush=True)
            time.sleep(30)
    finally:
        _stop(proc)
    wall = time.monotonic() - started
    print(f"   {calibration.status} in {wall:.0f} s wall on 2 processes, "
          f"{calibration.run_seconds:.0f} s of simulation "
          f"({calibration.run_seconds / max(calibration.points_done, 1):.1f} s a run)")
    rec, seconds = _ask(admin, machine, "after")
    print(f"3. calibrated: answered in {seconds:.2f} s, method {rec.method}, status "
          f"{rec.status}, recommended {rec.recommended['policy']}; note: {rec.note}")
    print(f"   ranking (time relative to the default policy): {_ranking(rec)}")
    if args.live:
        _live(rec)


def _live(rec) -> None:
    """The question's own live simulations (both seeds, every policy), on 2 processes."""
    from concurrent.futures import ProcessPoolExecutor

    from recommendations import constants
    from recommendations.models import PolicyPrediction
    from recommendations.services.predictions import policy_cycles, prediction_config

    rec.predictions.all().delete()
    started = time.monotonic()
    ids = []
    for candidate in rec.inputs["candidates"]:
        if candidate.get("error"):
            continue
        for seed in constants.prediction_seeds():  # one task per policy and seed, as the portal
            ids.append(PolicyPrediction.objects.create(
                recommendation=rec, policy=candidate["policy"], user=rec.user, seed=seed,
                parameters=prediction_config(rec.machine, rec, candidate["policy"], seed)).pk)
    from django import db

    db.connections.close_all()
    with ProcessPoolExecutor(max_workers=2) as pool:
        list(pool.map(_predict, ids))
    live = policy_cycles(list(PolicyPrediction.objects.filter(pk__in=ids)))
    calibrated = rec.inputs["calibrated_cycles"]
    best_live = min(live, key=live.get)
    best_cal = min(calibrated, key=calibrated.get)
    print(f"4. live: {time.monotonic() - started:.0f} s wall on 2 processes; best live "
          f"{best_live}, best calibrated {best_cal}; live cycles of the calibrated choice / "
          f"best live = {live[best_cal] / live[best_live]:.3f}")
    for policy in sorted(live, key=live.get):
        print(f"   {policy:22} live {live[policy]:>8} "
              f"calibrated {calibrated.get(policy, 0):>10.0f}")


def _predict(prediction_id: int) -> None:
    """One prediction run as a worker runs it (claimed, simulated, stored once)."""
    from django import db

    from recommendations import services as recommendations

    db.connections.close_all()
    recommendations.run_prediction(prediction_id)


if __name__ == "__main__":
    main()
