"""Races on PostgreSQL: concurrent allocations (with a negative control),
concurrent uploads for one job, concurrent accepts of one recommendation."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable

import pytest
from django.db import connection, connections
from django.utils import timezone

from allocation.models import Allocation, Job, JobStatus, Machine
from allocation.services import jobs, machines
from health import services as health
from health.models import BenchmarkResult
from recommendations import services as recommendations

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
THREADS = 8
ROUNDS = 30


def run_concurrently(calls: list[Callable[[], object]]) -> list[object]:
    """Start every call at once from its own thread (its own connection)."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def worker(i: int) -> None:
        try:
            barrier.wait()
            results[i] = calls[i]()
        except Exception as exc:  # noqa: BLE001 - the outcome is what we check
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def double_allocated(machine: Machine) -> int:
    active = Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
    counts = Counter(active.values_list("node_id", flat=True))
    return sum(1 for c in counts.values() if c > 1)


def allocation_rounds(machine: Machine, owner) -> tuple[int, int]:
    """ROUNDS rounds of THREADS concurrent 24-node jobs on 64 nodes (only two fit);
    returns (rounds with a node held twice, whole-or-nothing violations)."""
    bad_rounds = partial = 0
    for round_no in range(ROUNDS):
        pending = [jobs.create_job(owner=owner, machine=machine, name=f"r{round_no}-{i}",
                                   node_count=24, pattern="uniform") for i in range(THREADS)]
        results = run_concurrently([
            (lambda j=j, seed=round_no * 10 + i: jobs.allocate_job(j, "random_endpoint",
                                                                   seed=seed))
            for i, j in enumerate(pending)])
        if double_allocated(machine):
            bad_rounds += 1
        for job in Job.objects.filter(pk__in=[j.pk for j in pending]):
            held = job.allocations.filter(released_at__isnull=True).count()
            partial += held not in (0, job.node_count)
            if job.status == JobStatus.ALLOCATED:
                jobs.finish_job(job)
        assert all(isinstance(r, Job | Exception) for r in results)
    return bad_rounds, partial


def test_concurrent_allocation_rounds_never_double_allocate(on_postgres, make_user):
    machine = machines.create_machine(name="race", sides=[4, 4], concentration=4)
    bad, partial = allocation_rounds(machine, make_user("racer", "operator"))
    assert (bad, partial) == (0, 0)


def test_negative_control_sees_double_allocation_without_lock_and_constraint(
        on_postgres, make_user, monkeypatch):
    """Without the machine lock and the unique index the same harness must see the
    race, otherwise the test above proves nothing."""
    machine = machines.create_machine(name="race", sides=[4, 4], concentration=4)
    original_propose = jobs.propose

    def slow_propose(*args, **kwargs):
        candidate = original_propose(*args, **kwargs)
        time.sleep(0.05)  # widen the read-then-write window
        return candidate

    class NoLock:
        def __init__(self, manager):
            self.manager = manager

        def select_for_update(self):
            return self.manager

        def __getattr__(self, name):
            return getattr(self.manager, name)

    monkeypatch.setattr(jobs, "propose", slow_propose)
    monkeypatch.setattr(jobs.Machine, "objects", NoLock(Machine.objects))
    monkeypatch.setattr(jobs.Node, "objects", NoLock(jobs.Node.objects))
    with connection.cursor() as cursor:
        cursor.execute("DROP INDEX allocation_one_active_per_node")
    try:
        bad, _ = allocation_rounds(machine, make_user("racer", "operator"))
    finally:
        Allocation.objects.filter(released_at__isnull=True).update(released_at=timezone.now())
        with connection.cursor() as cursor:
            cursor.execute("CREATE UNIQUE INDEX allocation_one_active_per_node ON "
                           "allocation_allocation (node_id) WHERE released_at IS NULL")
    assert bad > 0, "the harness did not detect double allocation without the protections"


def test_concurrent_uploads_for_one_job_replace_each_other(on_postgres, make_user):
    machine = machines.create_machine(name="up", sides=[2, 2], concentration=4)
    job = jobs.submit_job(owner=make_user("ops", "operator"), machine=machine, name="j",
                          node_count=16, pattern="uniform", policy="row")
    names = list(machine.nodes.order_by("index").values_list("hostname", flat=True))

    def upload(k: int):
        return health.ingest_payload({"job": job.pk, "benchmark": "stream", "results": [
            {"node": n, "seconds": 0.01 * (k + 1)} for n in names]})

    results = run_concurrently([lambda k=k: upload(k) for k in range(THREADS)])
    assert not [r for r in results if isinstance(r, Exception)], results
    stored = BenchmarkResult.objects.filter(job=job, benchmark="stream")
    assert stored.count() == 16
    assert len(set(stored.values_list("seconds", flat=True))) == 1, "one upload won whole"


def test_concurrent_accepts_allocate_once(on_postgres, make_user):
    machine = machines.create_machine(name="acc", sides=[4, 4], concentration=4)
    owner = make_user("ops", "operator")
    rec, _ = recommendations.request_recommendation(
        user=owner, machine=machine, node_count=8, pattern="uniform", t_cmpt=10, t_comm=1,
        p_abn=0.01, alpha_abn=2.0, t_bench=0.1, simulate=False)
    results = run_concurrently([lambda: recommendations.accept(rec, owner)] * THREADS)
    jobs_made = [r for r in results if isinstance(r, Job)]
    assert len(jobs_made) == 1, results
    assert Job.objects.filter(machine=machine).count() == 1
    assert all("already accepted" in str(r) for r in results if not isinstance(r, Job))
