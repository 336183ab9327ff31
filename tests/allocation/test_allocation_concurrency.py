"""No double allocation under concurrency, on PostgreSQL with real row locks.

Requests come through the API from separate threads, each with its own database
connection, at a nearly full machine. Every node must end up held by at most
one job, and every request must have succeeded whole or failed cleanly.
"""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection, connections
from rest_framework.test import APIClient

from allocation.models import Allocation, Job
from allocation.services import jobs, machines
from hxportal import services as accounts

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

REQUESTS = 24
JOB_SIZE = 3


def fire(requests: list[dict], key: str) -> list[tuple[int, dict]]:
    barrier = threading.Barrier(len(requests))
    results: list[tuple[int, dict]] = [None] * len(requests)  # type: ignore[list-item]

    def worker(i: int, body: dict) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        try:
            barrier.wait()
            response = client.post("/api/v1/jobs/", body, format="json")
            results[i] = (response.status_code, response.json())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, b)) for i, b in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return results


def test_concurrent_allocations_never_share_a_node(on_postgres, make_user):
    assert connection.vendor == "postgresql"
    machine = machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    admin = make_user("boss", "admin")
    jobs.submit_job(owner=admin, machine=machine, name="filler", node_count=40,
                    pattern="uniform", policy="row")
    key = accounts.issue_token(make_user("ops", "operator"))
    policies = ["row", "diagonal", "full_spread", "random_endpoint", "random_switch",
                "rectangular"]
    bodies = [{"machine": "hx", "name": f"j{i}", "node_count": JOB_SIZE,
               "policy": policies[i % len(policies)], "seed": i} for i in range(REQUESTS)]
    results = fire(bodies, key)

    statuses = Counter(code for code, _ in results)
    assert set(statuses) <= {201, 400, 409}, results
    succeeded = [body for code, body in results if code == 201]
    assert statuses[201] == len(succeeded) == 8, statuses  # 24 free nodes / 3 per job

    active = Allocation.objects.filter(released_at__isnull=True)
    per_node = Counter(active.values_list("node_id", flat=True))
    assert max(per_node.values()) == 1
    assert len(per_node) == 64
    for body in succeeded:
        assert active.filter(job_id=body["id"]).count() == JOB_SIZE
    assert Job.objects.count() == 1 + len(succeeded), "failed requests leave no job behind"
    for code, body in results:
        if code != 201:
            assert body["detail"], body
