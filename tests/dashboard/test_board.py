"""The operations board on the overview: the demo machine's synthetic week (recorded by
hx_demo through the allocation app's write path, labelled wherever it shows), the
range picker's permalinks, drains by reason, the estimate's trend, the Slurm sync age,
the live fragment, and a query count that holds on a 512-node machine with a week of
about a thousand jobs."""

from __future__ import annotations

import io
import re
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from allocation.choices import JobSource
from allocation.models import Allocation, Job, Machine, SlurmLink
from allocation.services import history, jobs, machines
from health.models import Estimate

pytestmark = pytest.mark.django_db


@pytest.fixture
def viewer(users) -> Client:
    client = Client()
    client.force_login(users["viewer"])
    return client


@pytest.fixture
def demo(settings):
    settings.HX_DEMO_DEFAULT_ADMIN = True
    call_command("hx_demo", stdout=io.StringIO())
    return Machine.objects.get(name="hx")


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_hx_demo_records_a_labelled_synthetic_week_once(demo):
    made = Job.objects.filter(machine=demo, source=JobSource.SYNTHETIC)
    count = made.count()
    assert 600 < count < 1400
    week_ago = timezone.now() - timedelta(days=7)
    assert made.filter(finished_at__lt=week_ago).count() == 0, "every job touches the week"
    assert not made.filter(finished_at__isnull=True).exists(), "all finished"
    assert not Allocation.objects.filter(node__machine=demo).exists(), \
        "synthetic jobs hold no nodes: the machine's present state is the portal's own"
    assert {j.owner.username for j in made[:50]} == {history.SYNTHETIC_OWNER}
    assert not made.first().owner.is_active
    call_command("hx_demo", stdout=io.StringIO())
    assert made.count() == count, "a second run adds nothing"


def test_hx_demo_leaves_a_slurm_fed_machine_alone(settings):
    settings.HX_DEMO_DEFAULT_ADMIN = True
    hx = machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    SlurmLink.objects.create(machine=hx, enabled=True)
    call_command("hx_demo", stdout=io.StringIO())
    assert not Job.objects.filter(source=JobSource.SYNTHETIC).exists()
    call_command("hx_demo", "--name", "other", "--history-days", "0",
                 stdout=io.StringIO())
    assert not Job.objects.filter(source=JobSource.SYNTHETIC).exists()


def test_board_shows_the_synthetic_week_labelled(demo, viewer):
    html = viewer.get("/").content.decode()
    assert 'data-testid="badge-synthetic"' in html
    note = re.search(r'data-testid="synthetic-note">(.*?)</strong>', html, re.S).group(1)
    assert "Synthetic history" in text(note) and "hx_demo" in note
    assert 'data-testid="usage-hx"' in html and "(synthetic history)" in html
    assert 'data-testid="thumb-hx"' in html and html.count('class="switch summary') == 64
    summary = text(re.search(r'data-testid="usage-summary">(.*?)</p>', html, re.S).group(1))
    assert re.search(r"\d+ jobs in the last week: on average \d+ % of the nodes busy", summary)


def test_range_picker_is_a_permalink_and_falls_back_to_the_week(demo, viewer):
    for name, words in (("day", "last day"), ("week", "last week"), ("month", "last month")):
        html = viewer.get(f"/?range={name}").content.decode()
        assert re.search(rf'href="\?range={name}" aria-current="true"', html), name
        assert f"nodes busy and waiting, {words}" in html
    html = viewer.get("/?range=forever").content.decode()
    assert 'href="?range=week" aria-current="true"' in html


def test_day_range_counts_fewer_jobs_than_the_week(demo, viewer):
    def jobs_in(range_name):
        html = viewer.get(f"/?range={range_name}").content.decode()
        return int(re.search(r'data-testid="usage-summary">\s*([\d,]+) job',
                             html).group(1).replace(",", ""))
    assert 0 < jobs_in("day") < jobs_in("week") <= jobs_in("month")


def test_drains_are_grouped_by_reason_with_their_hostlists(machine, viewer):
    machines.set_node_state(machine, "n[01-04]", "drained", "fan failure")
    machines.set_node_state(machine, "n09", "drained", "ECC errors")
    machines.set_node_state(machine, "n10", "down", "no heartbeat")
    html = viewer.get("/").content.decode()
    drains = text(re.search(r'data-testid="drains">(.*?)</ul>', html, re.S).group(1))
    assert drains.startswith("drained n[01-04] (4) fan failure")
    assert "drained n09 (1) ECC errors" in drains and "down n10 (1) no heartbeat" in drains


def test_estimate_trend_and_chart(machine, viewer):
    now = timezone.now()
    for days, p in ((5, 0.02), (1, 0.01)):
        Estimate.objects.create(
            machine=machine, benchmark="stream", window_start=now, window_end=now, runs=100,
            abnormal_runs=2, jobs=3, t_bench=0.1, alpha_abn=1.3, p_abn=p, p_abn_low=p / 2,
            p_abn_high=p * 2, created_at=now - timedelta(days=days))
    html = viewer.get("/").content.decode()
    trend = text(re.search(r'data-testid="estimate-trend">(.*?)</span>', html).group(1))
    assert trend == ("p_abn down from 0.02 to 0.01, alpha_abn unchanged (1.3) since the "
                     "previous estimate")
    assert 'data-testid="trend-m4"' in html and 'data-testid="alpha-m4"' in html
    assert 'data-testid="trend-m4"' not in viewer.get("/?range=day").content.decode()


def test_slurm_sync_age_and_unlinked(machine, viewer):
    html = viewer.get("/").content.decode()
    assert "not linked" in text(re.search(r'data-testid="slurm-sync">(.*?)</dd>', html,
                                          re.S).group(1))
    SlurmLink.objects.create(machine=machine, enabled=True, interval_seconds=60,
                             last_success_at=timezone.now() - timedelta(seconds=95))
    html = viewer.get("/").content.decode()
    age = text(re.search(r'data-testid="slurm-sync-age">(.*?)</span>', html).group(1))
    assert re.fullmatch(r"synced 9\d s ago", age), age
    SlurmLink.objects.filter(machine=machine).update(
        last_success_at=timezone.now() - timedelta(hours=2))
    html = viewer.get("/").content.decode()
    assert 'class="badge warn" data-testid="slurm-sync-age"' in html, "late: flagged"


def test_no_history_says_where_it_comes_from(machine, viewer):
    html = viewer.get("/").content.decode()
    assert 'data-testid="usage-empty"' in html and "Slurm" in html
    assert 'data-testid="badge-synthetic"' not in html


def test_live_fragment_is_the_board_alone(demo, viewer):
    full = viewer.get("/?range=day")
    live = viewer.get("/?range=day", HTTP_X_HX_LIVE="1")
    assert live.status_code == 200 and "X-HX-Live" in live["Vary"]
    body = live.content.decode()
    assert body.lstrip().startswith('<div id="board" data-live-region>')
    assert "<html" not in body and 'data-testid="machine-hx"' in body
    assert "last day" in body
    assert 'id="board" data-live-region' in full.content.decode()


def test_live_fragments_of_the_grid_and_job_pages(demo, users):
    client = Client()
    client.force_login(users["operator"])
    job = jobs.submit_job(owner=users["operator"], machine=demo, name="live", node_count=16,
                          pattern="uniform", policy="row")
    grid = client.get("/machines/hx/", HTTP_X_HX_LIVE="1").content.decode()
    assert grid.lstrip().startswith('<div id="machine-live" data-live-region>')
    assert 'data-testid="switch-grid"' in grid and "<form method=\"post\"" in grid  # sync
    page = client.get(f"/jobs/{job.pk}/", HTTP_X_HX_LIVE="1").content.decode()
    assert 'id="job-facts" data-live-region' in page and 'id="job-grid" data-live-region' in page
    assert "release-form" not in page, "the release form is not swapped under the user"
    listing = client.get("/jobs/?machine=hx", HTTP_X_HX_LIVE="1").content.decode()
    assert listing.lstrip().startswith('<div id="job-list" data-live-region>')
    assert f"/jobs/{job.pk}/" in listing and "<form" not in listing
    Client().get("/", HTTP_X_HX_LIVE="1")  # anonymous: the login redirect, no fragment
    assert Client().get("/", HTTP_X_HX_LIVE="1").status_code == 302


def test_query_count_on_a_512_node_machine_with_a_week_of_jobs(demo, viewer, users,
                                                                django_assert_max_num_queries):
    """~1,000 finished jobs, live jobs, drains: the overview stays at the fixed count of
    tests/dashboard/test_overview.py, and the live fragment likewise."""
    for i in range(3):
        jobs.submit_job(owner=users["operator"], machine=demo, name=f"j{i}", node_count=64,
                        pattern="uniform", policy="row")
    machines.set_node_state(demo, "hx[505-512]", "drained", "fan")
    assert Job.objects.filter(machine=demo).count() > 600
    with CaptureQueriesContext(connection) as page:
        assert viewer.get("/?range=month").status_code == 200
    assert len(page) <= 24, [q["sql"][:100] for q in page.captured_queries]
    with django_assert_max_num_queries(24):
        assert viewer.get("/", HTTP_X_HX_LIVE="1").status_code == 200


def test_private_data_keeps_occupancy_over_time_but_no_names(settings, demo, client, users):
    settings.HX_PRIVATE_DATA = True
    client.force_login(users["viewer"])
    html = client.get("/").content.decode()
    assert 'data-testid="usage-hx"' in html, "occupancy over time is everyone's business"
    assert "alice" not in html and "gromacs" not in html
