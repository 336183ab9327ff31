"""Machines and nodes API: every endpoint for every role, bad input, limits."""

from __future__ import annotations

import json

import pytest

from allocation.models import Machine, Node

pytestmark = pytest.mark.django_db

ROLES = [None, "viewer", "operator", "admin"]
RANK = {None: 0, "viewer": 1, "operator": 2, "admin": 3}

# (method, url, body, minimum role, success status)
ENDPOINTS = [
    ("get", "/api/v1/machines/", None, "viewer", 200),
    ("get", "/api/v1/machines/m4/", None, "viewer", 200),
    ("post", "/api/v1/machines/", {"name": "new", "sides": [2, 2], "concentration": 2},
     "admin", 201),
    ("patch", "/api/v1/machines/m4/", {"description": "edited"}, "admin", 200),
    ("delete", "/api/v1/machines/m4/", None, "admin", 204),
    ("get", "/api/v1/nodes/", None, "viewer", 200),
    ("get", "/api/v1/nodes/?machine=m4&hostlist=n[01-04]", None, "viewer", 200),
    ("post", "/api/v1/nodes/state/",
     {"machine": "m4", "hostlist": "n[01-02]", "state": "drained", "reason": "ecc"},
     "operator", 200),
]


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize(("method", "url", "body", "minimum", "ok"), ENDPOINTS)
def test_role_matrix(api, machine, role, method, url, body, minimum, ok):
    client = api(role)
    response = getattr(client, method)(url, body, format="json") if body is not None else \
        getattr(client, method)(url)
    if role is None:
        assert response.status_code == 401
    elif RANK[role] < RANK[minimum]:
        assert response.status_code == 403
    else:
        assert response.status_code == ok, response.content


@pytest.mark.parametrize("role", ROLES)
def test_node_detail_and_rename_roles(api, machine, role):
    node = Node.objects.get(machine=machine, hostname="n05")
    client = api(role)
    read = client.get(f"/api/v1/nodes/{node.pk}/")
    write = client.patch(f"/api/v1/nodes/{node.pk}/", {"hostname": "renamed05"}, format="json")
    expected_read = 401 if role is None else 200
    expected_write = {None: 401, "viewer": 403, "operator": 403, "admin": 200}[role]
    assert (read.status_code, write.status_code) == (expected_read, expected_write)


def test_create_machine_materialises_nodes(api):
    response = api("admin").post("/api/v1/machines/",
                                 {"name": "hx", "sides": [8, 8], "concentration": 8},
                                 format="json")
    assert response.status_code == 201, response.content
    machine = Machine.objects.get(name="hx")
    assert machine.nodes.count() == 512
    first, last = machine.nodes.order_by("index").first(), machine.nodes.order_by("index").last()
    assert (first.hostname, first.coords, first.local) == ("hx001", [0, 0], 0)
    assert (last.hostname, last.coords, last.local, last.switch) == ("hx512", [7, 7], 7, 63)
    detail = api("viewer").get("/api/v1/machines/hx/").json()
    assert detail["nodes_hostlist"] == "hx[001-512]"
    assert detail["node_states"]["up"] == 512


def test_create_machine_from_hostlist_maps_in_order(api):
    response = api("admin").post("/api/v1/machines/", {
        "name": "cl", "sides": [2, 2], "concentration": 2,
        "hostlist": "cn[10-15],gpu[1-2]"}, format="json")
    assert response.status_code == 201, response.content
    names = list(Node.objects.filter(machine__name="cl").order_by("index")
                 .values_list("hostname", flat=True))
    assert names == ["cn10", "cn11", "cn12", "cn13", "cn14", "cn15", "gpu1", "gpu2"]


def test_three_dimensional_machine(api):
    response = api("admin").post("/api/v1/machines/", {
        "name": "h3", "sides": [3, 2, 2], "concentration": 2,
        "hostname_pattern": "h{d0}-{d1}-{d2}-{l}"}, format="json")
    assert response.status_code == 201, response.content
    node = Node.objects.get(machine__name="h3", index=13)
    assert node.coords == [1, 1, 0] and node.local == 1 and node.hostname == "h1-1-0-1"


BAD_MACHINES = [
    ({"name": "b", "sides": [0, 8], "concentration": 8}, "sides"),
    ({"name": "b", "sides": [-1, 8], "concentration": 8}, "sides"),
    ({"name": "b", "sides": [2.5, 8], "concentration": 8}, "sides"),
    ({"name": "b", "sides": "8x8", "concentration": 8}, "sides"),
    ({"name": "b", "sides": [], "concentration": 8}, "sides"),
    ({"name": "b", "sides": [128, 128, 128], "concentration": 1}, "sides"),
    ({"name": "b", "sides": [8, 8], "concentration": 0}, "concentration"),
    ({"name": "b", "sides": [2, 2], "concentration": 2, "hostlist": "n[1-"}, "hostlist"),
    ({"name": "b", "sides": [2, 2], "concentration": 2, "hostlist": "n[1-7]"}, "hostlist"),
    ({"name": "b", "sides": [2, 2], "concentration": 2, "hostlist": "switch{x}"}, "hostlist"),
    ({"name": "b", "sides": [2, 2], "concentration": 2, "hostlist": "n[0-99999999]"},
     "hostlist"),
    ({"name": "b", "sides": [2, 2], "concentration": 2,
      "hostname_pattern": "{n.__class__}"}, "hostname_pattern"),
    ({"name": "b", "sides": [2, 2], "concentration": 2, "hostname_pattern": "fixed"},
     "hostname_pattern"),
    ({"name": "1bad name", "sides": [2, 2], "concentration": 2}, "name"),
    ({"name": "b\x00", "sides": [2, 2], "concentration": 2}, "name"),
]


@pytest.mark.parametrize(("body", "field"), BAD_MACHINES)
def test_bad_machine_input_is_400_naming_the_field(api, body, field):
    response = api("admin").post("/api/v1/machines/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert not Machine.objects.exists() and not Node.objects.exists()


def test_duplicate_machine_name_is_409(api, machine):
    response = api("admin").post("/api/v1/machines/",
                                 {"name": "m4", "sides": [2, 2], "concentration": 2},
                                 format="json")
    assert response.status_code in (400, 409)
    assert "name" in json.dumps(response.json())
    assert Machine.objects.count() == 1


def test_deeply_nested_json_is_400(api):
    body = "[" * 5000 + "]" * 5000
    response = api("admin").post("/api/v1/machines/", body, content_type="application/json")
    assert response.status_code == 400
    assert "nested" in response.json()["detail"]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e400"])
def test_non_finite_numbers_are_400(api, number):
    body = f'{{"name": "x", "sides": [2, 2], "concentration": {number}}}'
    response = api("admin").post("/api/v1/machines/", body, content_type="application/json")
    assert response.status_code == 400


def test_body_over_limit_is_413(api, settings):
    big = json.dumps({"name": "x", "sides": [2, 2], "concentration": 2,
                      "description": "y" * (settings.HX_MAX_BODY_BYTES + 10)})
    response = api("admin").post("/api/v1/machines/", big, content_type="application/json")
    assert response.status_code == 413


def test_limit_is_capped_and_offset_bounded(api, machine):
    response = api("viewer").get("/api/v1/nodes/?limit=100000000")
    body = response.json()
    assert response.status_code == 200
    assert body["count"] == 64 and len(body["results"]) == 64
    assert api("viewer").get("/api/v1/nodes/?limit=-5").status_code == 200
    assert api("viewer").get("/api/v1/nodes/?offset=99999999999999999999").status_code == 200
    default = api("viewer").get("/api/v1/nodes/")
    assert default.json()["next"] is not None and len(default.json()["results"]) == 50


def test_unknown_filter_is_400(api, machine):
    response = api("viewer").get("/api/v1/nodes/?stat=up")
    assert response.status_code == 400 and "stat" in response.json()["errors"]


def test_node_filters(api, machine):
    client = api("viewer")
    by_hostlist = client.get("/api/v1/nodes/?hostlist=n[01-03,10]").json()
    assert [n["hostname"] for n in by_hostlist["results"]] == ["n01", "n02", "n03", "n10"]
    by_coords = client.get("/api/v1/nodes/?coords=1,2").json()
    assert by_coords["count"] == 4
    assert {n["switch"] for n in by_coords["results"]} == {6}
    assert client.get("/api/v1/nodes/?hostlist=n[1-").status_code == 400
    assert client.get("/api/v1/nodes/?coords=a,b").status_code == 400


def test_bulk_state_change_and_filter_by_state(api, machine):
    response = api("operator").post("/api/v1/nodes/state/", {
        "machine": "m4", "hostlist": "n[01-04,09]", "state": "drained",
        "reason": "ECC errors"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {"machine": "m4", "hostlist": "n[01-04,09]",
                               "state": "drained", "changed": 5}
    drained = api("viewer").get("/api/v1/nodes/?machine=m4&state=drained").json()
    assert drained["count"] == 5
    assert {n["state_reason"] for n in drained["results"]} == {"ECC errors"}


@pytest.mark.parametrize(("body", "field"), [
    ({"machine": "m4", "hostlist": "n[01-02],zz9", "state": "down", "reason": "x"}, "hostlist"),
    ({"machine": "m4", "hostlist": "n[01-", "state": "down", "reason": "x"}, "hostlist"),
    ({"machine": "nope", "hostlist": "n01", "state": "down", "reason": "x"}, "machine"),
    ({"machine": "m4", "hostlist": "n01", "state": "melted", "reason": "x"}, "state"),
    ({"machine": "m4", "hostlist": "n01", "state": "down", "reason": ""}, "reason"),
])
def test_bad_state_change_is_400_and_changes_nothing(api, machine, body, field):
    response = api("operator").post("/api/v1/nodes/state/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"]
    assert not Node.objects.exclude(state="up").exists()


def test_rename_onto_existing_hostname_is_409(api, machine):
    node = Node.objects.get(machine=machine, hostname="n05")
    response = api("admin").patch(f"/api/v1/nodes/{node.pk}/", {"hostname": "n06"},
                                  format="json")
    assert response.status_code == 409
    assert "hostname" in response.json()["detail"]
    node.refresh_from_db()
    assert node.hostname == "n05"


def test_allocated_filter_counts_never_allocated_nodes_as_free(api, machine, users):
    from allocation.services import jobs

    assert api("viewer").get("/api/v1/nodes/?machine=m4&allocated=false").json()["count"] == 64
    jobs.submit_job(owner=users["operator"], machine=machine, name="j", node_count=8,
                    pattern="uniform", policy="row")
    held = api("viewer").get("/api/v1/nodes/?machine=m4&allocated=true").json()
    free = api("viewer").get("/api/v1/nodes/?machine=m4&allocated=false").json()
    assert (held["count"], free["count"]) == (8, 56)


@pytest.mark.parametrize("request_kind", ["query", "form", "json"])
def test_nul_characters_are_400_never_500(api, machine, request_kind):
    client = api("admin")
    if request_kind == "query":
        response = client.get("/api/v1/nodes/?machine=m%004")
    elif request_kind == "form":
        response = client.post("/api/v1/partitions/properties/", "machine=m%004&hostlist=n01",
                               content_type="application/x-www-form-urlencoded")
    else:
        response = client.post("/api/v1/partitions/properties/",
                               '{"machine": "m\\u00004", "hostlist": "n01"}',
                               content_type="application/json")
    assert response.status_code == 400
    body = response.json()
    assert "NUL" in body["detail"] or "machine" in body["errors"]
