"""Jobs and allocation through the API: roles, ownership, bad input, properties."""

from __future__ import annotations

import pytest

from allocation.hyperx import static_partition
from allocation.models import Allocation, Job, Machine
from allocation.services import jobs, machines
from hxportal import hostlists

pytestmark = pytest.mark.django_db

RANK = {None: 0, "viewer": 1, "operator": 2, "admin": 3}


@pytest.fixture
def hx(db):
    return machines.create_machine(name="hx", sides=[8, 8], concentration=8)


def submit(api, role="operator", **body):
    payload = {"machine": "hx", "name": "job", "node_count": 64, "pattern": "all-to-all"}
    payload.update(body)
    return api(role).post("/api/v1/jobs/", payload, format="json")


@pytest.mark.parametrize("role", [None, "viewer", "operator", "admin"])
def test_job_endpoints_by_role(api, hx, users, role):
    own = jobs.submit_job(owner=users["operator"] if role != "admin" else users["admin"],
                          machine=hx, name="mine", node_count=8, pattern="uniform")
    client = api(role)
    expected_read = 401 if role is None else 200
    assert client.get("/api/v1/jobs/").status_code == expected_read
    assert client.get(f"/api/v1/jobs/{own.pk}/").status_code == expected_read
    created = submit(api, role, policy="row")
    assert created.status_code == {None: 401, "viewer": 403}.get(role, 201)
    allocate = client.post(f"/api/v1/jobs/{own.pk}/allocate/", {"policy": "diagonal"},
                           format="json")
    assert allocate.status_code == {None: 401, "viewer": 403}.get(role, 200), allocate.content
    preview = client.post("/api/v1/machines/hx/preview/", {"policy": "row", "size": 8},
                          format="json")
    assert preview.status_code == expected_read
    props = client.post("/api/v1/partitions/properties/",
                        {"machine": "hx", "hostlist": "hx[001-064]"}, format="json")
    assert props.status_code == expected_read


def test_operator_cannot_touch_another_operators_job(api, hx, users):
    other = jobs.submit_job(owner=users["operator2"], machine=hx, name="theirs",
                            node_count=8, pattern="uniform", policy="row")
    response = api("operator").post(f"/api/v1/jobs/{other.pk}/release/", {}, format="json")
    assert response.status_code == 404
    other.refresh_from_db()
    assert other.status == "allocated"
    assert api("admin").post(f"/api/v1/jobs/{other.pk}/release/", {},
                             format="json").status_code == 200


def test_submit_with_policy_allocates_whole_and_release_frees(api, hx):
    response = submit(api, policy="diagonal", external_id="slurm-77")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "allocated" and body["policy"] == "diagonal"
    assert body["properties"]["pb_exact"] == pytest.approx(2.0)
    assert body["properties"]["switch_locality"] is True
    assert body["hostlist"].startswith("hx[")
    assert Allocation.objects.filter(job_id=body["id"], released_at__isnull=True).count() == 64
    listed = api("viewer").get("/api/v1/jobs/?external_id=slurm-77").json()
    assert [j["id"] for j in listed["results"]] == [body["id"]]
    released = api("operator").post(f"/api/v1/jobs/{body['id']}/release/",
                                    {"status": "completed", "actual_runtime": 12.5},
                                    format="json")
    assert released.status_code == 200 and released.json()["status"] == "completed"
    assert not Allocation.objects.filter(released_at__isnull=True).exists()
    again = api("operator").post(f"/api/v1/jobs/{body['id']}/release/", {}, format="json")
    assert again.status_code == 409


def test_spares_are_allocated_with_their_role(api, hx):
    body = submit(api, node_count=16, policy="row", spares=2).json()
    assert body["spares_hostlist"] and len(body["hostlist"]) > 0
    roles = Allocation.objects.filter(job_id=body["id"]).values_list("role", flat=True)
    assert sorted(set(roles)) == ["primary", "spare"] and len(roles) == 18


@pytest.mark.parametrize(("body", "field"), [
    ({"policy": "zigzag"}, "policy"),
    ({"node_count": 0}, "node_count"),
    ({"node_count": 513, "policy": "row"}, "node_count"),
    ({"pattern": "gossip"}, "pattern"),
    ({"t_cmpt": -1}, "t_cmpt"),
    ({"t_cmpt": 0}, "t_cmpt"),
    ({"wall_time": 0}, "wall_time"),
    ({"machine": "nope"}, "machine"),
    ({"seed": -1}, "seed"),
])
def test_bad_job_input_is_400_and_nothing_is_allocated(api, hx, body, field):
    response = submit(api, **body)
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert not Job.objects.exists() and not Allocation.objects.exists()


def test_job_above_free_capacity_is_400_with_reason(api, hx, users):
    jobs.submit_job(owner=users["admin"], machine=hx, name="big", node_count=500,
                    pattern="uniform", policy="row")
    response = submit(api, node_count=20, policy="row")
    assert response.status_code == 400
    assert "need 20 nodes, 12 available" in response.json()["detail"]
    assert Job.objects.count() == 1


def test_drained_nodes_are_never_allocated(api, hx):
    machines.set_node_state(hx, "hx[001-008]", "drained", "bad switch")
    body = submit(api, node_count=8, policy="row").json()
    assert "hx[001-008]" not in body["hostlist"]
    assert not Allocation.objects.filter(node__hostname__in=[f"hx{i:03d}" for i in range(1, 9)])


def test_preview_and_compare_write_nothing(api, hx):
    preview = api("viewer").post("/api/v1/machines/hx/preview/",
                                 {"policy": "full_spread", "size": 64}, format="json").json()
    assert preview["properties"]["pb_exact"] == pytest.approx(8.0)
    assert preview["properties"]["switch_locality"] is False
    compare = api("viewer").post("/api/v1/machines/hx/compare/", {"size": 64},
                                 format="json").json()
    by_policy = {c["policy"]: c for c in compare["candidates"]}
    assert set(by_policy) == set(jobs.ONLINE_POLICIES)  # every policy of the registry
    assert by_policy["row"]["properties"]["pb_exact"] == pytest.approx(1.0)
    assert by_policy["diagonal"]["properties"]["pb_exact"] == pytest.approx(2.0)
    assert not Job.objects.exists() and not Allocation.objects.exists()
    too_big = api("viewer").post("/api/v1/machines/hx/preview/",
                                 {"policy": "row", "size": 600}, format="json")
    assert too_big.status_code == 400
    # The services say node_count; the preview and compare input is still named size.
    assert too_big.json()["errors"] == {"size": ["the machine has only 512 nodes"]}
    too_big = api("viewer").post("/api/v1/machines/hx/compare/", {"size": 600}, format="json")
    assert too_big.json()["errors"] == {"size": ["the machine has only 512 nodes"]}


def test_properties_of_a_hostlist(api, hx):
    other = Machine.objects.create(name="other", sides=[1], concentration=1)
    other.nodes.create(index=0, switch=0, coords=[0], local=0, hostname="zz1")
    body = api("viewer").post("/api/v1/partitions/properties/",
                              {"machine": "hx", "hostlist": "hx[001-008]"}, format="json").json()
    assert body["switches"] == 1 and body["switch_locality"] is True
    assert body["max_distance"] == 0
    foreign = api("viewer").post("/api/v1/partitions/properties/",
                                 {"machine": "hx", "hostlist": "zz1"}, format="json")
    assert foreign.status_code == 400 and "hostlist" in foreign.json()["errors"]


def test_formula_mode_matches_the_cli_and_refuses_misfits(api, hx, make_user):
    body = api("viewer").post("/api/v1/machines/hx/preview/", {
        "policy": "l_shape", "size": 128, "mode": "formula", "index": 1}, format="json").json()
    assert body["properties"]["size"] == 128
    expected = static_partition("l_shape", 8, 1, 2)
    assert not Allocation.objects.exists(), "a preview allocates nothing"
    assert hostlists.compress(f"hx{i + 1:03d}" for i in expected) == body["hostlist"]
    misfit = api("viewer").post("/api/v1/machines/hx/preview/", {
        "policy": "row", "size": 100, "mode": "formula"}, format="json")
    assert misfit.status_code == 400 and "multiples of n^2" in misfit.json()["detail"]
    machines.create_machine(name="wide", sides=[4, 8], concentration=4)
    not_square = api("viewer").post("/api/v1/machines/wide/preview/", {
        "policy": "row", "size": 16, "mode": "formula"}, format="json")
    assert not_square.status_code == 400 and "mode" in not_square.json()["errors"]
    job = jobs.submit_job(owner=make_user("f", "operator"), machine=hx, name="f",
                          node_count=64, pattern="uniform")
    allocated = api("admin").post(f"/api/v1/jobs/{job.pk}/allocate/", {
        "policy": "diagonal", "mode": "formula", "index": 3}, format="json")
    assert allocated.status_code == 200, allocated.content
    assert allocated.json()["properties"]["pb_exact"] == pytest.approx(2.0)
    clash = api("viewer").post("/api/v1/machines/hx/preview/", {
        "policy": "diagonal", "size": 64, "mode": "formula", "index": 3}, format="json")
    assert clash.status_code == 400 and "held or not up" in clash.json()["detail"]


@pytest.mark.parametrize("name", ["line\nbreak", "bell\x07", "rtl\u202eoverride", "esc\x1b[31m"])
def test_control_characters_in_names_are_400(api, hx, name):
    response = submit(api, name=name)
    assert response.status_code == 400 and "name" in response.json()["errors"]
    unicode_ok = submit(api, name="Ünïcödé λ-job ✓")
    assert unicode_ok.status_code == 201


def _history(owner, machine, count: int) -> list[Job]:
    """``count`` finished jobs of 8 nodes each, with spares on every other one."""
    made = []
    for i in range(count):
        job = jobs.submit_job(owner=owner, machine=machine, name=f"h{i}", node_count=8,
                              pattern="uniform", policy="row", spares=i % 2)
        made.append(jobs.finish_job(job, "completed", 5.0))
    return made


#: Queries of a job list page, however many rows: the token with its user, the
#: count, the page (jobs with owner and machine) and every row's allocations at once.
JOB_LIST_QUERIES = 4


@pytest.mark.parametrize("rows", [2, 24])
def test_job_list_reads_hostlists_in_one_query_whatever_the_rows(
        api, hx, users, rows, django_assert_num_queries):
    made = _history(users["operator"], hx, rows)
    client = api("viewer")
    client.get("/api/v1/jobs/?limit=1")  # the token's first use writes last_used
    with django_assert_num_queries(JOB_LIST_QUERIES):
        body = client.get("/api/v1/jobs/?limit=100").json()
    by_id = {row["id"]: row for row in body["results"]}
    assert len(by_id) == rows
    for job in made:  # the bulk read gives each row exactly its own lists and URL
        assert by_id[job.pk]["url"] == f"http://testserver/api/v1/jobs/{job.pk}/"
        assert by_id[job.pk]["owner"] == "operator" and by_id[job.pk]["machine"] == "hx"
        assert {k: by_id[job.pk][k] for k in ("hostlist", "spares_hostlist",
                                               "excluded_hostlist")} == {
            "hostlist": jobs.job_hostlists(job)["primary"],
            "spares_hostlist": jobs.job_hostlists(job)["spare"],
            "excluded_hostlist": jobs.job_hostlists(job)["excluded"]}
    spared = next(job for job in made if job.allocations.filter(role="spare").exists())
    assert by_id[spared.pk]["spares_hostlist"].startswith("hx")
