"""The portal in step with a real Slurm 22.05 (the session's 64-node local cluster).

Plain ``sbatch`` jobs appear in the portal on exactly their Slurm nodes after one
sync and shape the occupancy that recommendations read; portal drains reach
``sinfo -R``; a job shrunk in Slurm gives its nodes back; finished jobs are
released with their real run time; a dead slurmctld fails the sync in one line
while the API keeps serving, and the sync after the restart catches up with no
duplicate. Each test uses nodes of its own (hx041..hx064) and leaves them idle.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from allocation.choices import JobSource, JobStatus, NodeEventSource
from allocation.models import Allocation, Job, NodeEvent, SlurmLink
from allocation.services import jobs, machines, slurm_sync
from allocation.slurm import SlurmClient
from tests.allocation.slurm.conftest import wait_for, wait_state_saved

pytestmark = [pytest.mark.slurm, pytest.mark.django_db]

SLEEP = ["sleep", "600"]


@pytest.fixture
def portal(slurm_cluster, settings):
    """The portal machine that the session's cluster runs (same 64 hostnames), linked."""
    settings.HX_SLURM_CONF = slurm_cluster.conf
    settings.HX_SLURM_TIMEOUT = 20
    machine = machines.create_machine(name="hxtest", sides=[4, 4], concentration=4,
                                      hostname_pattern="hx{n:03d}")
    slurm_sync.configure(machine, enabled=True)
    return machine


def running(client: SlurmClient, job_id: int):
    job = client.job(job_id)
    return job if job is not None and job.state == "RUNNING" else None


def held(job: Job) -> list[str]:
    return sorted(job.allocations.filter(released_at__isnull=True)
                  .values_list("node__hostname", flat=True))


def test_plain_sbatch_jobs_appear_on_exactly_their_nodes_after_one_sync(portal, slurm):
    pinned = slurm.submit(SLEEP, nodes=["hx041", "hx042", "hx045"], name="pinned run")
    free = slurm.submit(SLEEP, num_nodes=4, name="anywhere")
    try:
        wait_for(lambda: running(slurm, pinned), what="the pinned job to run")
        placed = wait_for(lambda: running(slurm, free), what="the unpinned job to run")
        report = slurm_sync.sync_machine(portal)
        assert report.status == "ok" and report.nodes == 64
        first = Job.objects.get(machine=portal, slurm_job_id=pinned)
        second = Job.objects.get(machine=portal, slurm_job_id=free)
        assert held(first) == ["hx041", "hx042", "hx045"]
        assert held(second) == sorted(placed.nodes)
        assert (first.source, first.status, first.slurm_state) == (
            JobSource.SLURM, JobStatus.RUNNING, "RUNNING")
        assert first.name == "pinned run" and first.slurm_user == "root"
        assert first.owner.username == "hx-slurm" and not first.owner.is_active
        assert first.external_id == str(pinned) and first.node_count == 3
        assert first.created_at <= first.allocated_at and first.finished_at is None
        # The occupancy every recommendation reads holds exactly these nodes.
        available, _ = jobs.occupancy(portal)
        index = dict(portal.nodes.values_list("hostname", "index"))
        for host in [*held(first), *held(second)]:
            assert not available[index[host]]
        proposal = jobs.propose(portal, "diagonal", 16)
        assert not set(proposal.hostnames) & {*held(first), *held(second)}
        # A second sync of the same state changes nothing and duplicates nothing.
        again = slurm_sync.sync_machine(portal)
        assert (again.jobs_created, again.jobs_updated, again.allocations_added,
                again.allocations_released, again.node_changes) == (0, 0, 0, 0, 0)
        assert Job.objects.filter(machine=portal, slurm_job_id=pinned).count() == 1
    finally:
        slurm.cancel(pinned)
        slurm.cancel(free)


def test_the_api_shows_slurm_provenance(portal, slurm, api):
    job_id = slurm.submit(SLEEP, nodes=["hx046"], name="api view")
    try:
        wait_for(lambda: running(slurm, job_id), what="the job to run")
        slurm_sync.sync_machine(portal)
        row = Job.objects.get(slurm_job_id=job_id)
        body = api("viewer").get(f"/api/v1/jobs/{row.pk}/").json()
        assert body["slurm_job_id"] == job_id and body["source"] == "slurm"
        assert body["slurm_user"] == "root" and body["hostlist"] == "hx046"
        assert body["status"] == "running" and body["slurm_partition"] == "batch"
        machine = api("viewer").get("/api/v1/machines/hxtest/").json()
        assert machine["slurm"]["healthy"] and machine["slurm"]["age_seconds"] < 60
    finally:
        slurm.cancel(job_id)


def test_finished_jobs_are_released_with_their_real_run_time(portal, slurm):
    job_id = slurm.submit(["sh", "-c", "sleep 2; exit 5"], nodes=["hx047", "hx048"],
                          name="ends")
    wait_for(lambda: running(slurm, job_id), what="the job to run")
    slurm_sync.sync_machine(portal)
    assert held(Job.objects.get(slurm_job_id=job_id)) == ["hx047", "hx048"]
    ended = wait_for(lambda: (j := slurm.job(job_id)) is not None and j.finished and j,
                     what="the job to end")
    report = slurm_sync.sync_machine(portal)
    job = Job.objects.get(slurm_job_id=job_id)
    assert report.jobs_finished >= 1
    assert (job.status, job.slurm_state, job.exit_code) == (JobStatus.FAILED, "FAILED", 5)
    assert job.finished_at == ended.end_time and job.allocated_at == ended.start_time
    assert job.actual_runtime == (ended.end_time - ended.start_time).total_seconds() >= 2
    assert held(job) == []
    released = set(Allocation.objects.filter(job=job).values_list("released_at", flat=True))
    assert released == {ended.end_time}


def test_a_portal_drain_reaches_slurm_with_its_reason_and_is_audited(portal, slurm, api,
                                                                      users):
    slurm_sync.sync_machine(portal)
    response = api("operator").post("/api/v1/nodes/state/", {
        "machine": "hxtest", "hostlist": "hx[049-050]", "state": "drained",
        "reason": "ECC errors seen by the portal"}, format="json")
    assert response.status_code == 200, response.content
    try:
        listed = slurm.run("sinfo", "-R", "--noheader", "--format=%E|%N").strip()
        assert "ECC errors seen by the portal|hx[049-050]" in listed.splitlines()
        events = NodeEvent.objects.filter(node__hostname__in=["hx049", "hx050"])
        assert events.count() == 2
        assert {(e.state, e.source, e.in_slurm, e.user.username) for e in events} == {
            ("drained", NodeEventSource.PORTAL, True, "operator")}
        # Slurm keeps new jobs off them, and the next sync agrees (no change).
        assert slurm_sync.sync_machine(portal).node_changes == 0
    finally:
        resumed = api("operator").post("/api/v1/nodes/state/", {
            "machine": "hxtest", "hostlist": "hx[049-050]", "state": "up"}, format="json")
    assert resumed.status_code == 200
    assert "hx049" not in slurm.run("sinfo", "-R", "--noheader", "--format=%N")
    wait_for(lambda: all(n.idle for n in slurm.nodes() if n.name in ("hx049", "hx050")),
             what="the resumed nodes to be idle")


def test_a_drain_set_in_slurm_shows_in_the_portal(portal, slurm):
    slurm.drain(["hx051"], "fan failure (set in Slurm)")
    try:
        report = slurm_sync.sync_machine(portal)
        node = portal.nodes.get(hostname="hx051")
        assert report.node_changes >= 1
        assert (node.state, node.state_reason) == ("drained", "fan failure (set in Slurm)")
        event = NodeEvent.objects.get(node=node)
        assert (event.source, event.in_slurm, event.user) == (NodeEventSource.SLURM, True, None)
    finally:
        slurm.resume(["hx051"])
    slurm_sync.sync_machine(portal)
    assert portal.nodes.get(hostname="hx051").state == "up"


def test_a_job_shrunk_in_slurm_gives_its_nodes_back(portal, slurm):
    job_id = slurm.submit(SLEEP, nodes=["hx052", "hx053", "hx054"], name="shrinks")
    try:
        wait_for(lambda: running(slurm, job_id), what="the job to run")
        slurm_sync.sync_machine(portal)
        slurm.shrink(job_id, ["hx052"])
        report = slurm_sync.sync_machine(portal)
        job = Job.objects.get(slurm_job_id=job_id)
        assert report.allocations_released == 2
        assert held(job) == ["hx052"] and job.status == JobStatus.RUNNING
    finally:
        slurm.cancel(job_id)


def test_a_node_the_machine_lacks_is_a_clear_error(slurm_cluster, settings):
    settings.HX_SLURM_CONF = slurm_cluster.conf
    small = machines.create_machine(name="small", sides=[2, 2], concentration=4,
                                    hostname_pattern="hx{n:03d}")
    with pytest.raises(slurm_sync.SyncFailed, match=r"^Slurm names nodes that machine small "
                                                    r"does not have: hx\[017-064\]; link"):
        slurm_sync.sync_machine(small)
    link = SlurmLink.objects.get(machine=small)
    assert link.last_error.startswith("Slurm names nodes") and link.consecutive_failures == 1
    assert not small.jobs.exists()


def test_one_sync_per_machine_at_a_time(portal):
    link = slurm_sync.slurm.link_for(portal)
    assert slurm_sync._claim(link)  # another worker holds the lease
    report = slurm_sync.sync_machine(portal)
    assert report.status == "skipped"


def test_with_slurmctld_down_the_sync_fails_cleanly_and_catches_up_after(
        portal, slurm_cluster, slurm, api):
    before_outage = slurm.submit(SLEEP, nodes=["hx060"], name="before the outage")
    wait_for(lambda: running(slurm, before_outage), what="the job to run")
    slurm_sync.sync_machine(portal)
    count = Job.objects.count()
    wait_state_saved(slurm_cluster, slurm)
    slurm_cluster.stop_slurmctld()
    try:
        with pytest.raises(CommandError) as caught:
            call_command("hx_slurm_sync", "hxtest")
        message = str(caught.value)
        assert message.startswith("sync of hxtest failed: slurmctld unreachable at localhost:")
        assert "\n" not in message
        link = SlurmLink.objects.get(machine=portal)
        assert link.consecutive_failures == 1 and link.last_error.startswith("slurmctld")
        # The API keeps serving what was synced before, and says how old it is.
        listing = api("viewer").get("/api/v1/jobs/", {"machine": "hxtest", "limit": 1000})
        assert listing.status_code == 200
        assert before_outage in [j["slurm_job_id"] for j in listing.json()["results"]]
        machine = api("viewer").get("/api/v1/machines/hxtest/").json()
        assert machine["slurm"]["last_error"].startswith("slurmctld unreachable")
        assert not machine["slurm"]["healthy"] and machine["slurm"]["age_seconds"] >= 0
        assert Job.objects.count() == count
        assert held(Job.objects.get(slurm_job_id=before_outage)) == ["hx060"]
    finally:
        slurm_cluster.start_slurmctld()
    slurm_cluster.wait_for_nodes(60)
    # While the portal could not look: one job ended and another started.
    slurm.cancel(before_outage)
    after = slurm.submit(SLEEP, nodes=["hx061", "hx062"], name="after the outage")
    try:
        wait_for(lambda: running(slurm, after), what="the new job to run")
        wait_for(lambda: (j := slurm.job(before_outage)) is not None and j.finished,
                 what="the cancel")
        report = slurm_sync.sync_machine(portal)
        old = Job.objects.get(slurm_job_id=before_outage)
        new = Job.objects.get(slurm_job_id=after)
        assert report.status == "ok" and old.status == JobStatus.CANCELLED and held(old) == []
        assert held(new) == ["hx061", "hx062"] and new.status == JobStatus.RUNNING
        assert Job.objects.filter(slurm_job_id=before_outage).count() == 1
        assert Job.objects.count() == count + report.jobs_created
        assert SlurmLink.objects.get(machine=portal).consecutive_failures == 0
    finally:
        slurm.cancel(after)
