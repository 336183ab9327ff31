"""The one switch grid (allocation/grid.py, templates/inc/switch_grid.html): state, job,
role and selection on separate channels, legends with counts, coordinates, scale."""

from __future__ import annotations

import re
import time

import pytest

from allocation import grid
from allocation.models import Allocation, AllocationRole
from allocation.services import jobs, machines

pytestmark = pytest.mark.django_db


NODE = re.compile(r'<(?:a|span) class="(node [^"]*)"[^>]*data-hostname="([^"]+)" '
                  r'data-state="(\w*)" data-job="(\d*)" data-role="(\w*)" '
                  r'data-selected="(\d)" title="([^"]*)"')


def cells(html: str) -> dict[str, dict]:
    return {m[2]: {"classes": m[1].split(), "state": m[3], "job": m[4], "role": m[5],
                   "selected": m[6] == "1", "title": m[7]} for m in NODE.finditer(html)}


@pytest.fixture
def busy(users):
    """hx 4x4, c = 4: job A (8 nodes + 2 spares), job B; a drained and a down node in A."""
    machine = machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    a = jobs.submit_job(owner=users["operator"], machine=machine, name="alpha", node_count=8,
                        pattern="uniform", policy="row", spares=2)
    b = jobs.submit_job(owner=users["operator"], machine=machine, name="beta", node_count=8,
                        pattern="uniform", policy="row")
    names = list(a.allocations.filter(role="primary").order_by("rank")
                 .values_list("node__hostname", flat=True))
    machines.set_node_state(machine, names[0], "drained", "ECC errors")
    machines.set_node_state(machine, names[1], "down", "no heartbeat")
    return machine, a, b, names


def test_job_palette_has_32_distinct_looks_disjoint_from_states():
    looks = {grid.job_style(i) for i in range(32)}
    assert len(looks) == 32 and grid.job_style(32) == grid.job_style(0)
    css = open("static/hxportal/app.css").read()
    # light state colours, then the dark scheme's (prefers-color-scheme: dark)
    state_colours = {"#3ba55d", "#e0a526", "#d64545", "#4cc07a", "#f0b93a", "#ff6b6b"}
    found = re.findall(r"\.job-c(\d) \{ background-color: (#[0-9a-f]{6})", css)
    light = {colour for _, colour in found[:grid.JOB_COLOURS]}
    assert len(light) == grid.JOB_COLOURS and not {c for _, c in found} & state_colours
    dark = dict(found[:grid.JOB_COLOURS]) | dict(found[grid.JOB_COLOURS:])
    assert len(set(dark.values())) == grid.JOB_COLOURS, "dark overrides stay distinct"


def test_machine_page_draws_state_job_and_role_separately(client_for, busy):
    _machine, a, b, names = busy
    html = client_for("viewer").get("/machines/hx/").content.decode()
    nodes = cells(html)
    assert len(nodes) == 64
    drained, down = nodes[names[0]], nodes[names[1]]
    # A drained node inside a job keeps the job's fill and shows its state on the border.
    assert drained["state"] == "drained" and drained["job"] == str(a.pk)
    assert "st-drained" in drained["classes"] and "job-c0" in drained["classes"]
    assert down["state"] == "down" and "st-down" in down["classes"]
    assert "drained: ECC errors" in drained["title"] and f"job {a.pk} alpha" in drained["title"]
    assert re.search(r"switch \(\d,\d\)", drained["title"]) and names[0] in drained["title"]
    spares = [h for h, n in nodes.items() if n["role"] == "spare"]
    assert len(spares) == 2 and all("role-spare" in nodes[h]["classes"] for h in spares)
    b_nodes = [n for n in nodes.values() if n["job"] == str(b.pk)]
    assert len(b_nodes) == 8 and all("job-c1" in n["classes"] for n in b_nodes)
    free = [n for n in nodes.values() if n["role"] == "free"]
    assert len(free) == 64 - 18 and all("free" in n["classes"] for n in free)
    # Axes and the legend with counts.
    assert html.count('class="axis col"') == 4 and html.count('class="axis row"') == 4
    assert 'data-testid="legend-state-drained"' in html and 'data-testid="grid-caption"' in html
    assert "2 nodes inside jobs are drained or down." in html
    assert f'data-legend-job="{a.pk}"' in html and "10 here of 10" in html


def test_job_page_tells_held_by_another_job_from_free(client_for, busy):
    _machine, a, _b, names = busy
    html = client_for("viewer").get(f"/jobs/{a.pk}/").content.decode()
    nodes = cells(html)
    mine = [n for n in nodes.values() if n["job"] == str(a.pk)]
    assert len(mine) == 10 and all(n["selected"] and "sel" in n["classes"] for n in mine)
    others = [n for n in nodes.values() if n["role"] == "held"]
    assert len(others) == 8 and all("held" in n["classes"] and not n["selected"] for n in others)
    free = [n for n in nodes.values() if n["role"] == "free"]
    assert len(free) == 64 - 18 and all("held" not in n["classes"] for n in free)
    assert nodes[names[0]]["state"] == "drained"
    assert 'data-testid="job-grid"' in html and 'data-testid="legend-held"' in html


def test_candidate_grid_marks_primary_spare_and_held(busy):
    machine, _a, _b, _ = busy
    held = Allocation.objects.filter(released_at__isnull=True).values("node_id")
    free = list(machine.nodes.exclude(pk__in=held).order_by("index")
                .values_list("hostname", flat=True))
    g = grid.candidate_grid(machine, free[:4], free[4:6])
    html = "".join(str(c) for row in g.rows for c in row["cells"])
    nodes = cells(html)
    assert sum(n["role"] == "candidate" for n in nodes.values()) == 4
    assert sum(n["role"] == "spare" and n["selected"] for n in nodes.values()) == 2
    assert sum(n["role"] == "held" for n in nodes.values()) == 18
    counts = {e.testid: e.count for e in g.legend["fills"] + g.legend["roles"]}
    assert counts == {"legend-candidate": 4, "legend-held": 18, "legend-free": 64 - 18 - 6,
                      "legend-spare": 2}


def test_three_dimensional_machine_is_drawn_per_plane(client_for):
    machines.create_machine(name="h3", sides=[3, 4, 4], concentration=2)
    html = client_for("viewer").get("/machines/h3/?plane=2").content.decode()
    assert 'data-testid="plane-select"' in html and html.count("<option") >= 3
    assert 'title="switch (2,0,0):' in html and "Plane d0=2" in html
    assert "rows d1 × columns d2" in html
    assert len(cells(html)) == 32


def test_large_planes_are_summarised_per_switch_with_drill_down(client_for, users,
                                                                 monkeypatch):
    monkeypatch.setattr(grid, "MAX_NODE_CELLS", 16)
    machine = machines.create_machine(name="hx", sides=[4, 4], concentration=4)
    job = jobs.submit_job(owner=users["operator"], machine=machine, name="j", node_count=8,
                          pattern="uniform", policy="row")
    machines.set_node_state(machine, "hx01", "drained", "fan")
    html = client_for("viewer").get("/machines/hx/").content.decode()
    assert 'data-mode="switches"' in html and html.count('<a class="switch summary') == 16
    first = re.search(r'<a class="switch summary ([^"]*)" href="([^"]+)" data-switch="0"'
                      r'[^>]*data-drained="(\d+)"[^>]*data-held="(\d+)" data-jobs="([^"]*)"',
                      html)
    assert first and "st-drained" in first[1] and first[3] == "1" and first[4] == "4"
    assert first[5] == str(job.pk)
    drill = client_for("viewer").get("/machines/hx/" + first[2].replace("&amp;", "&")
                                     .split("#")[0]).content.decode()
    assert 'data-testid="switch-drill"' in drill and len(cells(drill)) == 4
    assert cells(drill)["hx01"]["state"] == "drained"


def test_private_jobs_show_as_held_without_name(client_for, users, settings, busy):
    _machine, _a, _b, _ = busy
    settings.HX_PRIVATE_DATA = True
    html = client_for("operator2").get("/machines/hx/").content.decode()
    nodes = cells(html)
    assert not any(n["job"] for n in nodes.values())
    assert sum("held" in n["classes"] for n in nodes.values()) == 18
    assert {n["role"] for n in nodes.values()} == {"held", "free"}, "no roles of private jobs"
    assert "2 jobs of other users (private)" in html and "alpha" not in html


def test_a_65536_node_machine_page(client_for, users, capsys):
    """16x16x16, c = 16: one plane of 4,096 nodes per page. Prints the server time."""
    start = time.perf_counter()
    machine = machines.create_machine(name="big", sides=[16, 16, 16], concentration=16)
    built = time.perf_counter() - start
    job = jobs.submit_job(owner=users["operator"], machine=machine, name="wide",
                          node_count=2048, pattern="uniform", policy="row", spares=64)
    held = list(Allocation.objects.filter(job=job, role=AllocationRole.PRIMARY)
                .order_by("rank").values_list("node__hostname", flat=True)[:3])
    machines.set_node_state(machine, ",".join(held), "drained", "burn-in")
    client = client_for("viewer")
    client.get("/machines/big/")  # warm the template and URL caches
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        response = client.get("/machines/big/?plane=0")
        timings.append(time.perf_counter() - start)
    html = response.content.decode()
    nodes = cells(html)
    assert response.status_code == 200 and len(nodes) == 4096
    assert html.count('class="switch"') == 256
    assert all(nodes[h]["state"] == "drained" and nodes[h]["job"] == str(job.pk) for h in held)
    assert sum(n["role"] == "spare" for n in nodes.values()) == 64
    with capsys.disabled():
        print(f"\n65,536-node machine (16x16x16, c=16): created in {built:.1f} s; machine page "
              f"(plane 0, 4,096 node cells) server time {min(timings) * 1000:.0f} ms "
              f"(best of 3; {len(response.content) / 1e6:.2f} MB)")
