"""Counts that do not contradict themselves (issue 22, defect 7): grid legends count each
node once, a recommendation says nothing about switch locality that its job (spares
included) does not have, and counts agree with their nouns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from allocation.grid import candidate_grid, job_grid, machine_grid
from allocation.models import Job, NodeState
from allocation.services import jobs, machines
from hxportal import hostlists
from recommendations import services as recommendations

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def hx(db):
    return machines.create_machine(name="hx", sides=[8, 8], concentration=8)


def fill_total(grid) -> int:
    """Every node of the plane once: the fill entries, the partition's roles, the jobs."""
    fills = sum(e.count or 0 for e in grid.legend["fills"])
    roles = sum(e.count or 0 for e in grid.legend["roles"]
                if e.testid in ("legend-spare", "legend-excluded")
                and grid.testid != "job-grid")
    jobs_here = sum(int(e.count_text.split(" here")[0].replace(",", ""))
                    for e in grid.legend["jobs"])
    return fills + roles + jobs_here


def test_a_released_jobs_grid_counts_each_node_once(hx, users):
    other = jobs.submit_job(owner=users["operator"], machine=hx, name="b", node_count=64,
                            pattern="all2all", policy="row")
    job = jobs.submit_job(owner=users["operator"], machine=hx, name="a", node_count=40,
                          pattern="all2all", policy="row")
    jobs.finish_job(job)  # its 40 nodes are free again
    grid = job_grid(Job.objects.get(pk=job.pk))
    assert fill_total(grid) == 512  # not 552: the released nodes are not also "free"
    counts = {e.testid: e.count for e in grid.legend["fills"]}
    assert counts["legend-this-job"] == 40 and counts["legend-held"] == 64
    assert counts["legend-free"] == 512 - 64 - 40
    assert other.allocations.filter(released_at__isnull=True).count() == 64


def test_a_selection_grid_does_not_count_the_jobs_own_nodes_as_held(hx, users):
    job = jobs.submit_job(owner=users["operator"], machine=hx, name="a", node_count=62,
                          pattern="all2all", policy="row", spares=2)
    jobs.submit_job(owner=users["operator"], machine=hx, name="b", node_count=64,
                    pattern="all2all", policy="row")
    names = list(job.allocations.order_by("rank").values_list("node__hostname", flat=True))
    grid = candidate_grid(hx, names[:62], excluded=names[62:], own_job=job.pk)
    counts = {e.testid: e.count for e in grid.legend["fills"] + grid.legend["roles"]}
    assert counts["legend-held"] == 64 and counts["legend-candidate"] == 62
    assert counts["legend-excluded"] == 2 and fill_total(grid) == 512


def test_an_accepted_recommendations_grid_counts_each_node_once(hx, users):
    jobs.submit_job(owner=users["operator"], machine=hx, name="bg", node_count=64,
                    pattern="all2all", policy="row")
    rec, _ = recommendations.request_recommendation(
        user=users["operator"], machine=hx, node_count=64, pattern="all2all", t_cmpt=100.0,
        t_comm=50.0, p_abn=0.026, alpha_abn=3.53, t_bench=0.0167, simulate=False)
    job = recommendations.accept(rec, users["operator"])
    rec.refresh_from_db()
    grid = candidate_grid(hx, hostlists.expand(rec.recommended["hostlist"]),
                          hostlists.expand(rec.recommended["spares_hostlist"]),
                          own_job=job.pk)
    held = {e.testid: e.count for e in grid.legend["fills"]}["legend-held"]
    assert held == 64 and fill_total(grid) == 512


def test_the_recommendation_says_what_the_job_with_its_spares_has(hx, users):
    """The 64 recommended nodes fill whole switches; with the spares they cannot."""
    jobs.submit_job(owner=users["operator"], machine=hx, name="bg", node_count=64,
                    pattern="all2all", policy="row")
    rec, _ = recommendations.request_recommendation(
        user=users["operator"], machine=hx, node_count=64, pattern="all2all", t_cmpt=100.0,
        t_comm=50.0, p_abn=0.026, alpha_abn=3.53, t_bench=0.0167, simulate=False)
    assert rec.recommended["n_spare"] % 8  # 64 + spares cannot fill whole switches
    job = recommendations.accept(rec, users["operator"])
    assert job.properties["switch_locality"] is False
    reason = rec.recommended["reason"]
    assert "keeps switch locality" not in reason
    assert "no longer fill whole switches" in reason
    assert rec.recommended["properties"]["switch_locality"] == job.properties["switch_locality"]


def test_the_machine_grid_caption_agrees_with_its_count(hx, users):
    job = jobs.submit_job(owner=users["operator"], machine=hx, name="a", node_count=8,
                          pattern="all2all", policy="row")
    first = job.allocations.order_by("rank").first().node.hostname
    machines.set_node_state(hx, first, NodeState.DRAINED, "ECC")
    assert machine_grid(hx).caption == "1 node inside jobs is drained or down."
    second = job.allocations.order_by("rank")[1].node.hostname
    machines.set_node_state(hx, second, NodeState.DRAINED, "ECC")
    assert machine_grid(hx).caption == "2 nodes inside jobs are drained or down."


def test_a_one_node_job_reads_one_node(hx, users):
    job = jobs.create_job(owner=users["operator"], machine=hx, name="solo", node_count=1,
                          pattern="all2all")
    assert str(job) == "solo (1 node)"


# A count printed before a plural noun must go through count_of or pluralize.
COUNT_BEFORE_PLURAL = re.compile(
    r"\{\{\s*([^}|]+?)\s*\}\}\s+(nodes|runs|seeds|jobs|switches|spares|days|problems|points|"
    r"simulations|estimates|rounds|rows|node-runs)\b")
NOT_COUNTS = {"machine.name", "state.benchmark", "s.health.benchmark", "row.state",
              "e.policy", "p.policy"}


def test_no_template_prints_a_count_before_a_fixed_plural():
    bad = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            for match in COUNT_BEFORE_PLURAL.finditer(line):
                if match.group(1) not in NOT_COUNTS:
                    bad.append(f"{path.relative_to(ROOT)}:{number}: {match.group(0)}")
    assert not bad, "use |count_of or |pluralize:\n" + "\n".join(bad)
