"""The home page: one card per machine with occupancy, jobs, health, estimate and
failures, empty states that say what to do, and a query count that does not grow
with the number of machines."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from allocation.services import jobs, machines
from health import services as health
from health import tasks
from health.models import EstimationRun
from hxportal.models import RunStatus
from recommendations.models import PolicyPrediction, Recommendation
from simulation import services as simulations
from simulation.models import SimulationRun
from tests.health.test_health_spares import seed_history
from tests.simulation.conftest import TINY

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(users) -> Client:
    client = Client()
    client.force_login(users["viewer"])
    return client


def card(html: str, name: str) -> str:
    start = html.index(f'data-testid="machine-{name}"')
    end = html.find('data-testid="machine-', start + 10)
    return html[start:end if end > 0 else len(html)]


def field(html: str, testid: str) -> str:
    match = re.search(rf'data-testid="{testid}">(.*?)</dd>', html, re.S)
    assert match, testid
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", match.group(1))).strip()


def busy_machine(name: str, owner, *, history: bool = False):
    """A 4x4, c = 4 machine with an allocated, a running and a pending job, drained and
    down nodes and (optionally) a benchmark history with two bad nodes, estimated."""
    machine = machines.create_machine(name=name, sides=[4, 4], concentration=4,
                                      hostname_pattern="n{n:02d}")
    if history:
        seed_history(machine, owner)  # its jobs hold no nodes
        run = health.start_estimation(machine)
        tasks.run_estimation.apply(args=[run.pk])
        EstimationRun.objects.create(machine=machine, status=RunStatus.FAILED, error="x")
    jobs.submit_job(owner=owner, machine=machine, name="a", node_count=16,
                    pattern="uniform", policy="row")
    running = jobs.submit_job(owner=owner, machine=machine, name="b", node_count=6,
                              pattern="uniform", policy="row")
    jobs.start_job(running)
    jobs.create_job(owner=owner, machine=machine, name="c", node_count=4, pattern="uniform")
    machines.set_node_state(machine, "n[61-63]", "drained", "fan")
    machines.set_node_state(machine, "n64", "down", "dead")
    return machine


def test_card_shows_occupancy_jobs_and_empty_states(viewer, users):
    busy_machine("alpha", users["operator"])
    html = viewer.get("/").content.decode()
    alpha = card(html, "alpha")
    # 16 + 6 of 64 nodes held: 34 %; free: 64 - 22 - 4 not up = 38 nodes; switches 0..3 hold
    # the row job (16), switch 4..5 the 6-node job; whole free switches: 6..14 (15, 16
    # have drained/down nodes) = 9.
    assert "34 %" in alpha and 'value="22"' in alpha and 'max="64"' in alpha
    assert field(alpha, "free") == "38 nodes, 9 whole switches"
    assert field(alpha, "not-up") == "3 drained, 1 down"
    assert field(alpha, "jobs") == "1 running · 1 allocated · 1 pending"
    assert "/jobs/?machine=alpha&amp;status=running" in alpha
    assert "/machines/alpha/nodes/?state=drained&amp;state=down" in alpha
    assert field(alpha, "estimate").startswith("No estimate yet: upload benchmarks or run an "
                                               "estimation")
    assert "no benchmark results in the last 30 days" in field(alpha, "candidates")
    assert field(alpha, "failures") == "nothing in the last 7 days"
    assert "No simulation in progress." in html


def test_card_with_history_estimate_candidates_and_failures(viewer, users):
    owner = users["operator"]
    machine = machines.create_machine(name="m4", sides=[4, 4], concentration=4,
                                      hostname_pattern="n{n:02d}")
    seed_history(machine, owner)
    run = health.start_estimation(machine)
    tasks.run_estimation.apply(args=[run.pk])
    state = health.machine_health(machine)
    bad = sorted(c.node for c in state.candidates)
    assert len(bad) == 2
    machines.set_node_state(machine, bad[0], "drained", "suspicion")
    EstimationRun.objects.create(machine=machine, status=RunStatus.FAILED, error="boom",
                                 finished_at=timezone.now())
    EstimationRun.objects.create(machine=machine, status=RunStatus.FAILED, error="old",
                                 created_at=timezone.now() - timedelta(days=30))
    html = viewer.get("/").content.decode()
    m4 = card(html, "m4")
    estimate = field(m4, "estimate")
    latest = health.latest_estimate(machine)
    assert estimate.startswith("p_abn ") and "alpha_abn" in estimate and "t_bench" in estimate
    assert "(stream, just now)" in estimate
    assert f"{latest.t_bench:.3g}"[:5] in estimate
    # Only the candidate still up is offered; the drained one is not counted again.
    assert field(m4, "candidates").startswith(bad[1])
    assert 'data-testid="badge-candidates">1 drain candidate<' in m4
    failures = field(m4, "failures")
    assert "boom" in failures and "old" not in failures


def test_failed_predictions_and_simulations(viewer, users):
    owner = users["operator"]
    machine = machines.create_machine(name="m4", sides=[4, 4], concentration=4,
                                      hostname_pattern="n{n:02d}")
    rec = Recommendation.objects.create(machine=machine, user=owner, node_count=4,
                                        pattern="uniform", deadline=timezone.now())
    PolicyPrediction.objects.create(recommendation=rec, policy="row", user=owner, seed=1,
                                    status=RunStatus.FAILED, error="engine exploded")
    run = simulations.start_run(dict(TINY))
    SimulationRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, error="bad config",
                                                   finished_at=timezone.now())
    sweep = simulations.create_sweep(name="busy", base=TINY, parameters={"seed": [1, 2, 3]})
    first = sweep.runs.order_by("id").first()
    SimulationRun.objects.filter(pk=first.pk).update(status=RunStatus.SUCCEEDED)
    html = viewer.get("/").content.decode()
    assert "row prediction (seed 1) of recommendation" in field(card(html, "m4"), "failures")
    assert "engine exploded" in html
    assert 'data-testid="failed-runs"' in html and "bad config" in html
    assert re.search(r'data-testid="sweep-status">running \(1 of 3 done\)<', html)
    assert "3 waiting for a worker" in html or "2 waiting for a worker" in html


def test_no_machines_says_what_to_do(client, users):
    client.force_login(users["admin"])
    html = client.get("/").content.decode()
    assert 'data-testid="no-machines"' in html and "hx_demo" in html
    assert "/machines/new/" in html
    client.force_login(users["viewer"])
    assert "Ask an administrator" in client.get("/").content.decode()


def test_query_count_does_not_grow_with_machines(viewer, users,
                                                 django_assert_max_num_queries):
    owner = users["operator"]
    busy_machine("a1", owner, history=True)
    with CaptureQueriesContext(connection) as one:
        assert viewer.get("/").status_code == 200
    for name in ("a2", "a3", "a4", "a5"):
        busy_machine(name, owner, history=name != "a3")
    with CaptureQueriesContext(connection) as many:
        assert viewer.get("/").status_code == 200
    assert len(many) == len(one), [q["sql"][:120] for q in many.captured_queries]
    # 19 for the cards, 5 for the board (job spans, grid thumbnails, drains, estimates,
    # Slurm links): dashboard/board.py.
    with django_assert_max_num_queries(24):
        html = viewer.get("/").content.decode()
    assert html.count('class="card machine-card"') == 5


def test_private_data_counts_only_readable_jobs(client, users, settings):
    settings.HX_PRIVATE_DATA = True
    busy_machine("alpha", users["operator2"])
    client.force_login(users["operator"])
    html = client.get("/").content.decode()
    alpha = card(html, "alpha")
    assert field(alpha, "jobs").startswith("none active")
    assert "34 %" in alpha, "occupancy is everyone's business"
