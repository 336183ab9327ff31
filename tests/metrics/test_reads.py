"""What a scrape reads from the database, and beat's health snapshot."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from allocation.models import SlurmLink
from allocation.services import machines
from metrics import services
from metrics.models import HealthSnapshot
from metrics.readings import QueueReading
from tests.metrics.conftest import SLOW, upload_rounds


def read(portal):
    return services.read_all(QueueReading(True, {}), now=portal["now"])


@pytest.mark.django_db
def test_occupancy_counts_states_holds_and_whole_free_switches(portal):
    (m4,) = read(portal).machines
    assert m4.nodes_by_state == {"up": 63, "drained": 1}
    assert m4.allocated == 4 and m4.free == 59 and m4.switches == 16
    # row policy: 4 nodes on one switch; n64's switch has a drained node.
    assert m4.whole_free_switches == 14


@pytest.mark.django_db
def test_newest_estimate_per_benchmark_with_its_interval(portal):
    (est,) = read(portal).estimates
    assert (est.benchmark, est.p_abn, est.p_abn_low, est.p_abn_high) == (
        "stream", 0.026, 0.0085, 0.0597)
    assert (est.alpha_abn, est.alpha_abn_low, est.alpha_abn_high) == (3.53, 3.1, 4.0)
    assert est.confidence == 0.95
    assert est.age_seconds == pytest.approx(3600)


@pytest.mark.django_db
def test_recommendations_by_status_and_their_latency(portal):
    readings = read(portal)
    assert readings.recommendations == {("m4", "ready"): 1, ("m4", "accepted"): 1}
    (lat,) = readings.latency
    assert (lat.machine, lat.method, lat.count) == ("m4", "analytic", 2)
    assert lat.total_seconds == pytest.approx(3.5)
    buckets = dict(lat.buckets)
    assert buckets[0.25] == 0 and buckets[0.5] == 1 and buckets[2.5] == 1 and buckets[5.0] == 2


@pytest.mark.django_db
def test_slurm_link_age_and_failures(portal):
    (link,) = read(portal).slurm
    assert link.age_seconds == pytest.approx(90)
    assert link.failing and link.consecutive_failures == 2
    assert (link.failures_total, link.syncs_total) == (5, 12)


@pytest.mark.django_db
def test_a_scrape_costs_the_same_queries_whatever_the_fleet(portal, users):
    with CaptureQueriesContext(connection) as one:
        read(portal)
    machines.create_machine(name="m8", sides=[8, 8], concentration=2,
                            hostname_pattern="b{n:03d}")
    services.refresh_health_snapshots()
    with CaptureQueriesContext(connection) as two:
        read(portal)
    assert len(two) <= len(one) + 1  # + the live check of candidates, once there are any


@pytest.mark.django_db
def test_snapshot_finds_the_drain_candidates_and_a_drain_shows_at_once(portal, users):
    machine = portal["machine"]
    upload_rounds(machine, users["operator"])
    assert services.refresh_health_snapshots() == 1
    snapshot = HealthSnapshot.objects.get(machine=machine)
    assert snapshot.candidates == sorted(SLOW) and snapshot.node_runs == 3 * 64
    (h,) = read(portal).health
    assert (h.benchmark, h.candidates, h.candidates_up) == ("stream", 2, 2)
    SlurmLink.objects.filter(machine=machine).delete()  # drained here, not in Slurm
    machines.set_node_state(machine, SLOW[0], "drained", "suspect")
    (h,) = read(portal).health
    assert (h.candidates, h.candidates_up) == (2, 1)  # no new snapshot needed


@pytest.mark.django_db
def test_snapshot_age_grows_until_the_next_refresh(portal):
    services.refresh_health_snapshots()
    later = HealthSnapshot.objects.get().computed_at + timedelta(minutes=5)
    (h,) = services.read_all(QueueReading(True, {}), now=later).health
    assert h.age_seconds == 300 and h.candidates == 0 and h.benchmark == ""


@pytest.mark.django_db
def test_simulation_runs_by_status_and_those_continuing(portal):
    from hxportal.models import RunStatus
    from simulation.models import SimulationRun
    from simulation.services.configs import validate_config
    from simulation.services.runs import new_run
    from tests.simulation.conftest import TINY

    for seed, status, continued in ((1, RunStatus.PENDING, 2), (2, RunStatus.RUNNING, 0),
                                    (3, RunStatus.SUCCEEDED, 4), (4, RunStatus.PENDING, 0)):
        run = new_run(validate_config({**TINY, "seed": seed}))
        run.status, run.continued = status, continued
        run.save()
    readings = read(portal)
    assert readings.simulation_runs == {"pending": 2, "running": 1, "succeeded": 1}
    assert readings.simulation_runs_continuing == 1  # the finished one no longer counts
    assert "cancelled" in readings.simulation_statuses
    assert SimulationRun.objects.count() == 4
