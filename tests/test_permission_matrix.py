"""Every route x every method x every role, generated from the URL registry.

RULES names the minimum role of every API action and page. A route that is not
in RULES fails ``test_every_route_has_a_rule``, so a new endpoint cannot ship
without a permission decision. The matrix then checks: anonymous callers get
401 (API) or the login redirect (pages); a role below the minimum gets 403;
a role at or above it is not refused (any other status: 2xx, 400, 404, 405...).
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from allocation.models import Node
from allocation.services import jobs
from health.models import Estimate, EstimationRun
from hxportal import services as accounts
from hxportal.roles import UNDECLARED, page_role
from recommendations import services as recommendations
from simulation import services as simulation

RANK = {None: 0, "viewer": 1, "operator": 2, "admin": 3}
V, OP, A = "viewer", "operator", "admin"
# API: "ViewClass.action" (viewsets) or "ViewClass.METHOD" (plain views) -> minimum role
RULES = {
    "MachineViewSet.list": V, "MachineViewSet.retrieve": V, "MachineViewSet.create": A,
    "MachineViewSet.update": A, "MachineViewSet.partial_update": A,
    "MachineViewSet.destroy": A, "MachineViewSet.compare": V, "MachineViewSet.preview": V,
    "MachineViewSet.topology": V, "MachineViewSet.slurm_sync": OP,
    "NodeViewSet.list": V, "NodeViewSet.retrieve": V, "NodeViewSet.state": OP,
    "NodeViewSet.update": A, "NodeViewSet.partial_update": A,
    "JobViewSet.list": V, "JobViewSet.retrieve": V, "JobViewSet.create": OP,
    "JobViewSet.allocate": OP, "JobViewSet.start": OP, "JobViewSet.release": OP,
    "JobViewSet.submitted": OP,
    "RecommendationViewSet.list": V, "RecommendationViewSet.retrieve": V,
    "RecommendationViewSet.create": OP, "RecommendationViewSet.accept": OP,
    "CalibrationViewSet.list": V, "CalibrationViewSet.retrieve": V,
    "CalibrationViewSet.create": OP, "CalibrationViewSet.cancel": OP,
    "BenchmarkResultViewSet.list": V, "BenchmarkResultViewSet.create": OP,
    "EstimateViewSet.list": V, "EstimateViewSet.retrieve": V,
    "EstimationRunViewSet.list": V, "EstimationRunViewSet.retrieve": V,
    "EstimationRunViewSet.create": OP,
    "PartitionPropertiesView.POST": V, "SparesView.POST": V, "SparesView.GET": V,
    "SelectFastestView.POST": V, "NodeHealthView.GET": V,
    "SimulationRunViewSet.list": V, "SimulationRunViewSet.retrieve": V,
    "SimulationRunViewSet.create": OP, "SimulationRunViewSet.validate": OP,
    "SimulationRunViewSet.destroy": OP, "SimulationRunViewSet.cancel": OP,
    "SweepViewSet.list": V, "SweepViewSet.retrieve": V, "SweepViewSet.create": OP,
    "SweepViewSet.study": OP, "SweepViewSet.destroy": OP, "SweepViewSet.cancel": OP,
    "SweepViewSet.results": V,
    "ReproductionStartView.POST": OP, "SweepReproductionView.GET": V,
    "SpectacularAPIView.GET": V, "SwaggerDocsView.GET": V,
    "WhatIfStudyViewSet.list": V, "WhatIfStudyViewSet.retrieve": V,
    "WhatIfStudyViewSet.create": OP, "WhatIfStudyViewSet.destroy": OP,
    "WhatIfStudyViewSet.demo": OP, "WhatIfStudyViewSet.progress": V,
    "WhatIfStudyViewSet.results": V, "WhatIfStudyViewSet.export_csv": V,
    "WhatIfStudyViewSet.cancel": OP,
    "MetricsView.GET": V,
}
# Under /api/ but a page for people: signed out, it sends them to the login page.
API_PAGES_FOR_PEOPLE = {"SwaggerDocsView"}
# Outside /api/ but for programs (Prometheus): tokens, and 401 when signed out.
API_OUTSIDE_API = {"MetricsView"}
SAFE = {"GET", "HEAD", "OPTIONS"}


def routes():
    """(path regex, view class, {method: action or None}, is_api) for every route."""
    def walk(resolver, prefix=""):
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.callback

    for path, callback in walk(get_resolver()):
        if path.startswith(("admin/", "static/")):
            continue
        cls = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
        actions = getattr(callback, "actions", None)
        if actions is None:
            methods = [m.upper() for m in getattr(cls, "http_method_names", [])
                       if m not in ("options", "head", "trace") and hasattr(cls, m)]
            actions = {m: None for m in methods}
        else:
            actions = {m.upper(): a for m, a in actions.items()}
        outside = getattr(cls, "__name__", "") in API_OUTSIDE_API
        yield path, cls, actions, path.startswith("api/") or outside


def page_rules() -> dict:
    """Pages: view class name -> minimum role (None: open to anonymous), read from the
    one place a page declares it, its view (``required_role``; ``login_not_required``).
    A page that declares neither is left out, so ``test_every_route_has_a_rule`` fails."""
    rules = {}
    for _path, cls, _actions, is_api in routes():
        role = page_role(cls)
        if not is_api and role != UNDECLARED:
            rules[cls.__name__] = role
    return rules


PAGE_RULES = page_rules()


def rule_key(cls, method: str, action: str | None) -> str:
    return f"{cls.__name__}.{action or method}"


def test_every_route_has_a_rule():
    missing = []
    for path, cls, actions, is_api in routes():
        for method, action in actions.items():
            if is_api and rule_key(cls, method, action) not in RULES:
                missing.append(f"{path} {method} ({rule_key(cls, method, action)})")
            if not is_api and cls.__name__ not in PAGE_RULES:
                missing.append(f"{path} ({cls.__name__})")
    assert not missing, "routes without a permission rule:\n" + "\n".join(sorted(missing))


@pytest.fixture
def world(db, users, machine):
    """One object of every kind, so every route with an id resolves."""
    owner = users["operator"]
    job = jobs.submit_job(owner=owner, machine=machine, name="j", node_count=4,
                          pattern="uniform", policy="row")
    rec, _ = recommendations.request_recommendation(
        user=owner, machine=machine, node_count=4, pattern="uniform", t_cmpt=10, t_comm=1,
        p_abn=0.01, alpha_abn=2.0, t_bench=0.1, simulate=False)
    calibration, _ = recommendations.start_calibration(machine, axes={
        "patterns": ["uniform"], "sizes": [4], "loads": [0.0], "policies": ["row"],
        "seeds": [0]})
    run = EstimationRun.objects.create(machine=machine, user=owner)
    estimate = Estimate.objects.create(
        machine=machine, benchmark="stream", window_start=timezone.now(),
        window_end=timezone.now(), runs=10, abnormal_runs=1, jobs=1, t_bench=0.1,
        alpha_abn=2.0, p_abn=0.1, p_abn_low=0.01, p_abn_high=0.3, run=run)
    sim = simulation.start_run({"sides": [2, 2], "concentration": 2, "ranks": 8,
                                "pattern": "uniform", "packets_per_task": 2,
                                "max_cycles": 1000}, user=owner)
    sweep = simulation.create_sweep(name="s", base={"sides": [2, 2], "concentration": 2,
                                                    "ranks": 8, "max_cycles": 1000},
                                    parameters={"seed": [1]}, user=owner)
    # A reproduction sweep without runs (its runs would push the others off the lists' page 1).
    from simulation.models import Sweep

    reproduction = Sweep.objects.create(name="r", preset="reproduction", user=owner)
    from whatif import services as whatif
    from whatif.replay import Job

    study = whatif.create_study(machine=machine, jobs=[Job(1, 0, 0, 10, 4, 10)],
                                info={"jobs": 1, "left_out": 0}, source="swf",
                                policies=["row"], spares=["none"], user=owner)
    ids = {"jobs": job.pk, "recommendations": rec.pk, "estimation-runs": run.pk,
           "estimates": estimate.pk, "simulation-runs": sim.pk, "sweeps": sweep.pk,
           "simulation/runs": sim.pk, "simulation/sweeps": sweep.pk,
           "reproduction": reproduction.pk,  # sweeps/<pk>/reproduction/ needs one
           "whatif": study.pk, "calibrations": calibration.pk,
           "recommendations/calibrations": calibration.pk,
           "nodes": Node.objects.filter(machine=machine).first().pk}
    return ids


def concrete(path: str, ids: dict) -> str:
    path = path.replace("^", "").replace("$", "")
    for key in sorted(ids, key=len, reverse=True):
        if key in path:
            path = re.sub(r"\(\?P<pk>[^)]*\)|<int:pk>", str(ids[key]), path)
    path = re.sub(r"\(\?P<name>[^)]*\)|<str:name>", "m4", path)
    path = path.replace("<str:hostname>", "n01").replace("\\", "")
    return "/" + path


def cases():
    for path, cls, actions, is_api in routes():
        for method, action in actions.items():
            yield pytest.param(path, cls, method, action, is_api,
                               id=f"{method} /{path}")


@pytest.mark.parametrize(("path", "cls", "method", "action", "is_api"), list(cases()))
def test_matrix(world, users, path, cls, method, action, is_api):
    url = concrete(path, world)
    minimum = RULES.get(rule_key(cls, method, action)) if is_api else PAGE_RULES.get(
        cls.__name__, "missing")
    assert minimum != "missing"
    for role in (None, "viewer", "operator", "admin"):
        client = APIClient()
        if role is not None:
            if is_api:
                key = accounts.issue_token(users[role], "matrix")
                client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
            else:
                client.force_login(users[role])
        response = getattr(client, method.lower())(url, {}, format="json") \
            if method not in SAFE else getattr(client, method.lower())(url)
        code = response.status_code
        if minimum is None:
            assert code not in (401, 403), (role, url, code)
        elif role is None:
            page = not is_api or cls.__name__ in API_PAGES_FOR_PEOPLE
            expected = (302,) if page else (401,)
            assert code in expected, (role, method, url, code)
            if page:
                assert response["Location"].startswith(("/login/", "/admin/login/"))
        elif RANK[role] < RANK[minimum]:
            assert code == 403, (role, method, url, code)
        else:
            assert code not in (401, 403), (role, method, url, code, response.content[:300])


OWNED = ("jobs", "recommendations", "simulation-runs", "sweeps", "simulation/runs")


def owned_write_cases():
    for path, _cls, actions, is_api in routes():
        owned = any(f"{prefix}/" in path for prefix in OWNED) and (
            "<pk>" in path or "<int:pk>" in path) and "calibrations/" not in path
        # (a calibration belongs to a machine shape, not to a user: any operator acts on it)
        for method in actions:
            if owned and method not in SAFE:
                yield pytest.param(path, method, is_api, id=f"{method} /{path}")


@pytest.mark.parametrize(("path", "method", "is_api"), list(owned_write_cases()))
def test_second_operator_cannot_change_anothers_rows(world, users, path, method, is_api):
    """Rows owned by one operator are invisible to another's writes: 404, unchanged."""
    assert list(owned_write_cases()), "the registry has owned write routes"
    url = concrete(path, world)
    client = APIClient()
    if is_api:
        client.credentials(HTTP_AUTHORIZATION=f"Token {accounts.issue_token(users['operator2'])}")
    else:
        client.force_login(users["operator2"])
    before = snapshot_owned(world)
    response = getattr(client, method.lower())(url, {}, format="json")
    assert response.status_code == 404, (url, response.status_code)
    assert snapshot_owned(world) == before


def snapshot_owned(ids: dict) -> tuple:
    from allocation.models import Job
    from recommendations.models import Recommendation
    from simulation.models import SimulationRun, Sweep

    return (Job.objects.filter(pk=ids["jobs"]).values_list("status", flat=True)[0],
            Recommendation.objects.filter(pk=ids["recommendations"]).values_list(
                "status", flat=True)[0],
            SimulationRun.objects.filter(pk=ids["simulation-runs"]).values_list(
                "status", flat=True)[0],
            Sweep.objects.filter(pk=ids["sweeps"]).count())


# Foreign keys: a write naming an object the caller may not use is a 400 naming
# the field, and nothing is written. (Machines and nodes are shared; jobs are
# owned, and benchmark uploads and recorded selections write into a job.)
def _fk_upload_json(job):
    return "post", "/api/v1/benchmarks/", {
        "job": job.pk, "benchmark": "stream",
        "results": [{"node": "n01", "seconds": 0.02}, {"node": "n02", "seconds": 0.021}]}, \
        "json", "job"


def _fk_upload_csv(job):
    return "generic", "/api/v1/benchmarks/", (
        f"job,benchmark,node,seconds\n{job.pk},stream,n01,0.02\n{job.pk},stream,n02,0.021\n"
    ), "text/csv", "row 2, job"


def _fk_select_fastest(job):
    return "post", "/api/v1/select-fastest/", {
        "job": job.pk, "benchmark": "stream", "n_node": 1, "record_roles": True,
        "allow_fewer": True}, \
        "json", "job"


FK_CASES = {"benchmark upload (JSON)": _fk_upload_json,
            "benchmark upload (CSV)": _fk_upload_csv,
            "select-fastest recording roles": _fk_select_fastest}


def _fk_send(client, case, job):
    how, url, body, media, field = case(job)
    if how == "generic":
        response = client.generic("POST", url, body, content_type=media)
    else:
        response = client.post(url, body, format=media)
    return response, field


def _fk_state(job) -> tuple:
    from allocation.models import Allocation
    from health.models import BenchmarkResult

    return (sorted(BenchmarkResult.objects.filter(job=job).values_list("node_id", "seconds")),
            sorted(Allocation.objects.filter(job=job).values_list("node_id", "role")))


@pytest.mark.parametrize("case", list(FK_CASES), ids=list(FK_CASES))
def test_foreign_key_to_anothers_job_is_400(db, users, machine, case):
    from health import services as health

    owner_job = jobs.submit_job(owner=users["operator"], machine=machine, name="mine",
                                node_count=2, pattern="uniform", policy="row")
    health.ingest_payload({"job": owner_job.pk, "benchmark": "stream", "results": [
        {"node": host, "seconds": 0.03} for host in
        owner_job.allocations.values_list("node__hostname", flat=True)]})
    before = _fk_state(owner_job)
    for user in ("operator2",):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {accounts.issue_token(users[user])}")
        response, field = _fk_send(client, FK_CASES[case], owner_job)
        assert response.status_code == 400, response.content
        assert field in response.json()["errors"], response.json()
        assert "only its owner" in str(response.json()["errors"][field])
        assert _fk_state(owner_job) == before
    # The same request by the owner and by an admin is accepted (the 400 is about
    # ownership, not the request).
    for user in ("operator", "admin"):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {accounts.issue_token(users[user])}")
        response, _ = _fk_send(client, FK_CASES[case], owner_job)
        assert response.status_code in (200, 201), (user, response.content)


def test_benchmark_scoped_token_uploads_for_any_job(db, users, machine):
    """The cluster's prolog uploads for every job with one admin-issued scoped token."""
    job = jobs.submit_job(owner=users["operator"], machine=machine, name="theirs",
                          node_count=2, pattern="uniform", policy="row")
    client = APIClient()
    key = accounts.issue_token(users["operator2"], "prolog", scope="benchmarks")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response, _ = _fk_send(client, _fk_upload_json, job)
    assert response.status_code == 201, response.content


# Private data: with HX_PRIVATE_DATA on, a second operator cannot read the
# owner's rows either: every owned detail route (API and page) is a 404, every
# list leaves them out, and the grid shows the nodes as held without a name.
def owned_read_cases():
    for path, _cls, actions, is_api in routes():
        owned = any(f"{prefix}/" in path for prefix in OWNED) and (
            "<pk>" in path or "<int:pk>" in path) and "calibrations/" not in path
        # (a calibration belongs to a machine shape, not to a user: any operator acts on it)
        if owned and "GET" in actions:
            yield pytest.param(path, is_api, id=f"GET /{path}")


def _client(users, user: str, is_api: bool) -> APIClient:
    client = APIClient()
    if is_api:
        client.credentials(HTTP_AUTHORIZATION=f"Token {accounts.issue_token(users[user])}")
    else:
        client.force_login(users[user])
    return client


@pytest.mark.parametrize(("path", "is_api"), list(owned_read_cases()))
def test_private_data_hides_anothers_rows(world, users, settings, path, is_api):
    assert len(list(owned_read_cases())) >= 8, "the registry has owned read routes"
    url = concrete(path, world)
    settings.HX_PRIVATE_DATA = False
    assert _client(users, "operator2", is_api).get(url).status_code == 200, url
    settings.HX_PRIVATE_DATA = True
    assert _client(users, "operator2", is_api).get(url).status_code == 404, url
    assert _client(users, "viewer", is_api).get(url).status_code == 404, url
    for reader in ("operator", "admin"):
        assert _client(users, reader, is_api).get(url).status_code == 200, (reader, url)


LISTS = {"/api/v1/jobs/": "jobs", "/api/v1/recommendations/": "recommendations",
         "/api/v1/simulation-runs/": "simulation-runs", "/api/v1/sweeps/": "sweeps"}


@pytest.mark.parametrize("url", list(LISTS))
def test_private_data_lists_only_own_rows(world, users, settings, url):
    settings.HX_PRIVATE_DATA = True
    ids = {row["id"] for row in _client(users, "operator2", True).get(url).json()["results"]}
    assert world[LISTS[url]] not in ids
    for reader in ("operator", "admin"):
        ids = {row["id"] for row in _client(users, reader, True).get(url).json()["results"]}
        assert world[LISTS[url]] in ids, (reader, url)


def test_private_data_node_lists_hide_anothers_job_id(world, users, settings):
    settings.HX_PRIVATE_DATA = True
    url = "/api/v1/nodes/?machine=m4&allocated=true&limit=1000"
    hidden = _client(users, "operator2", True).get(url).json()["results"]
    shown = _client(users, "operator", True).get(url).json()["results"]
    assert len(hidden) == len(shown) == 4
    assert all(n["allocated"] and n["job"] is None for n in hidden)
    assert all(n["allocated"] and n["job"] == world["jobs"] for n in shown)
    page = _client(users, "operator2", False).get("/machines/m4/nodes/").content.decode()
    assert page.count("<td>held</td>") == 4
    page = _client(users, "operator", False).get("/machines/m4/nodes/").content.decode()
    assert page.count("<td>held</td>") == 0 and page.count(f"<td>{world['jobs']}</td></tr>") == 4


def test_private_data_grid_shows_anothers_job_as_held(world, users, settings):
    from allocation.models import Job

    job = Job.objects.get(pk=world["jobs"])
    settings.HX_PRIVATE_DATA = True
    page = _client(users, "operator2", False).get("/machines/m4/").content.decode()
    assert f'data-job="{job.pk}"' not in page and "held by another user" in page
    assert "1 job of other users (private)" in page
    page = _client(users, "operator", False).get("/machines/m4/").content.decode()
    assert f'data-job="{job.pk}"' in page and "held by another user" not in page
    pages = {"/jobs/": f"/jobs/{world['jobs']}/",
             "/recommendations/": f"/recommendations/{world['recommendations']}/",
             "/simulation/": f"/simulation/runs/{world['simulation-runs']}/",
             "/simulation/sweeps/": f"/simulation/sweeps/{world['sweeps']}/"}
    for listing, link in pages.items():
        assert link not in _client(users, "operator2", False).get(listing).content.decode()
        assert link in _client(users, "operator", False).get(listing).content.decode(), link


def test_private_data_benchmark_rows_and_node_history_do_not_name_anothers_job(
        world, users, settings):
    from allocation.models import Job
    from health import services as health

    job = Job.objects.get(pk=world["jobs"])
    job.external_id = "slurm-4242"
    job.save(update_fields=["external_id"])
    hosts = list(job.allocations.values_list("node__hostname", flat=True))
    health.ingest_payload({"job": job.pk, "benchmark": "stream",
                           "results": [{"node": h, "seconds": 0.02} for h in hosts]})
    settings.HX_PRIVATE_DATA = True
    rows = _client(users, "operator2", True).get("/api/v1/benchmarks/").json()["results"]
    assert len(rows) == 4 and all(r["job"] is None and r["job_external_id"] == "" for r in rows)
    assert _client(users, "operator2", True).get(
        f"/api/v1/benchmarks/?job={job.pk}").json()["count"] == 0
    assert _client(users, "operator", True).get(
        f"/api/v1/benchmarks/?job={job.pk}").json()["count"] == 4
    own = _client(users, "operator", True).get("/api/v1/benchmarks/").json()["results"]
    assert all(r["job"] == job.pk and r["job_external_id"] == "slurm-4242" for r in own)
    page = _client(users, "operator2", False).get(
        f"/machines/m4/health/nodes/{hosts[0]}/").content.decode()
    assert "another user&#x27;s job" in page and "slurm-4242" not in page
    page = _client(users, "operator", False).get(
        f"/machines/m4/health/nodes/{hosts[0]}/").content.decode()
    assert "slurm-4242" in page


def test_private_data_health_evidence_does_not_cite_anothers_job(world, users, settings):
    from allocation.models import Job
    from health import services as health

    job = Job.objects.get(pk=world["jobs"])
    hosts = list(job.allocations.values_list("node__hostname", flat=True))
    health.ingest_payload({"job": job.pk, "benchmark": "stream", "results": [
        {"node": h, "seconds": 0.02 * (5 if i == 0 else 1)} for i, h in enumerate(hosts)]})
    settings.HX_PRIVATE_DATA = True

    def evidence(user):
        nodes = _client(users, user, True).get("/api/v1/node-health/?machine=m4").json()["nodes"]
        return {key for node in nodes for key in node["evidence"]}

    assert evidence("operator") == {str(job.pk)}
    assert evidence("operator2") == {"private"}
    # The health pages call the same function with the signed-in user as reader.
    masked = health.machine_health(job.machine, reader=users["operator2"]).suspicion
    assert {key for item in masked for key in item.evidence} == {"private"}
