"""Health and spare-calculator pages: roles, content, drain and estimate buttons."""

from __future__ import annotations

import pytest

from allocation.models import Node
from health import services as health
from health import tasks
from health.models import EstimationRun
from tests.health.test_health_spares import seed_history

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(machine, users):
    seed_history(machine, users["operator"])
    run = health.start_estimation(machine)
    tasks.run_estimation.apply(args=[run.pk])
    return run


def pages(run_id: int) -> list[str]:
    return ["/health/", "/machines/m4/health/", "/machines/m4/health/?benchmark=stream&window=7",
            "/machines/m4/health/nodes/n01/", "/machines/m4/health/nodes/n30/",
            f"/estimation-runs/{run_id}/", "/spares/",
            "/spares/?n_node=100&p_abn=0.026&alpha_abn=3.53&t_bench=0.0167&t_cmpt=100"]


@pytest.mark.parametrize("role", [None, "viewer", "operator"])
def test_pages_need_sign_in_and_render(client_for, history, role):
    for url in pages(history.pk):
        response = client_for(role).get(url)
        if role is None:
            assert response.status_code == 302 and "/login/" in response["Location"], url
        else:
            assert response.status_code == 200, (url, response.status_code)
            assert "<script>" not in response.content.decode()


def test_machine_health_page_content(client_for, history):
    response = client_for("viewer").get("/machines/m4/health/")
    html = response.content.decode()
    assert html.count('<a class="node susp-') == 64
    assert html.count('<a class="node susp-suspect') == 2
    assert 'data-testid="histogram"' in html and 'id="chart-data-histogram"' in html
    assert 'data-testid="p-abn-stream"' in html and 'data-testid="t-bench-stream"' in html
    histogram = response.context["histogram"]
    normal, abnormal = histogram["series"]
    assert histogram["kind"] == "bar" and histogram["stacked"] is True
    assert abnormal["role"] == "bad" and sum(abnormal["values"]) >= 1
    assert histogram["y"]["scale"] == "log", "abnormal nodes visible beside many normal ones"
    assert histogram["x"]["unit"] == "s" and histogram["y"]["unit"] == "count"
    assert len(histogram["categories"]) == len(normal["values"])
    assert any(line["label"].startswith("abnormal threshold") for line in histogram["vlines"])
    p_abn = response.context["estimate_charts"][0]["p_abn"]
    assert p_abn["x"]["scale"] == "time" and [s["style"] for s in p_abn["series"]] == [
        "band", "points"]
    assert 'data-hostname="n01"' in html
    assert "Drain</button>" not in html, "viewers get no drain button"
    operator_html = client_for("operator").get("/machines/m4/health/").content.decode()
    assert 'data-testid="drain-n01"' in operator_html and "Estimate now" in operator_html


def test_drain_and_estimate_buttons_need_an_operator(client_for, history, machine,
                                                     django_capture_on_commit_callbacks):
    body = {"hostname": "n01", "benchmark": "stream", "window": 30}
    assert client_for("viewer").post("/machines/m4/health/drain/", body).status_code == 403
    # the first post only shows what will happen: the reason to record, nothing drained
    response = client_for("operator").post("/machines/m4/health/drain/", body)
    page = response.content.decode()
    assert response.status_code == 200 and 'data-testid="drain-confirm"' in page
    assert 'data-testid="drain-reason"' in page and "suspicion: " in page
    assert Node.objects.get(machine=machine, hostname="n01").state == "up"
    response = client_for("operator").post("/machines/m4/health/drain/",
                                           {**body, "confirmed": "1"})
    assert response.status_code == 302
    node = Node.objects.get(machine=machine, hostname="n01")
    assert node.state == "drained" and node.state_reason.startswith("suspicion: ")
    response = client_for("operator").post("/machines/m4/health/drain/",
                                           {"hostname": "n30", "benchmark": "stream",
                                            "confirmed": "1"}, follow=True)
    assert "no abnormal" in response.content.decode() or \
        Node.objects.get(machine=machine, hostname="n30").state == "drained"
    assert client_for("viewer").post("/machines/m4/health/estimate/",
                                     {"window_days": 30}).status_code == 403
    with django_capture_on_commit_callbacks(execute=False):
        response = client_for("operator").post("/machines/m4/health/estimate/",
                                               {"window_days": 30, "benchmark": ""})
    run = EstimationRun.objects.order_by("-pk").first()
    assert response.status_code == 302 and response["Location"] == f"/estimation-runs/{run.pk}/"
    page = client_for("viewer").get(f"/estimation-runs/{run.pk}/").content.decode()
    assert 'data-refresh="2"' in page


def test_spares_page_shows_curves_and_saving(client_for):
    # The study's worked case, of its model where spares are held to the end.
    url = ("/spares/?n_node=100&p_abn=0.005&alpha_abn=10&t_bench=0.1&t_cmpt=10&t_comm=5"
           "&hold_spares=on")
    response = client_for("viewer").get(url)
    html = response.content.decode()
    assert 'data-testid="n-spare">3<' in html and "stay with the job" in html
    released = client_for("viewer").get(url.replace("&hold_spares=on", "")).content.decode()
    assert 'data-testid="n-spare">5<' in released and "cost only its time" in released
    assert 'data-testid="cost-curve"' in html and 'data-testid="time-curve"' in html
    assert "saving 68.1%" in html
    cost = response.context["charts"]["cost"]
    assert cost["x"]["title"] == "N_spare (nodes)" and cost["y"]["title"] == "E[C] (node-s)"
    assert [m["x"] for m in cost["marks"]] == [3]
    assert "optimum N_spare = 3" in cost["marks"][0]["label"]
    assert cost["hlines"][0]["label"].startswith("As-is")
    xs = [x for x, _ in cost["series"][0]["points"]]
    assert xs == sorted(xs) and xs[0] == 0 and 3 in xs
    time = response.context["charts"]["time"]
    assert time["y"]["unit"] == "s" and time["marks"][0]["x"] == 3
    bad = client_for("viewer").get("/spares/?n_node=100&t_cmpt=10").content.decode()
    assert "give it, or a machine" in bad and 'data-testid="spares-result"' not in bad


def test_empty_machine_health_page(client_for, machine):
    html = client_for("viewer").get("/machines/m4/health/").content.decode()
    assert "No benchmark results" in html and html.count("susp-nodata") >= 64
    assert client_for("viewer").get("/machines/nope/health/").status_code == 404
    assert client_for("viewer").get("/machines/m4/health/nodes/zz/").status_code == 404
    assert client_for("viewer").get("/machines/m4/health/?window=0").status_code == 200


def test_query_counts_do_not_grow_with_history(client_for, api, history,
                                               django_assert_max_num_queries):
    client = client_for("viewer")
    with django_assert_max_num_queries(20):
        assert client.get("/machines/m4/health/").status_code == 200
    with django_assert_max_num_queries(8):
        assert api("viewer").get("/api/v1/benchmarks/?limit=200").status_code == 200
    with django_assert_max_num_queries(8):
        assert api("viewer").get("/api/v1/estimates/").status_code == 200


def test_spares_page_per_node_names_the_nodes(client_for, history):
    html = client_for("viewer").get(
        "/spares/?n_node=40&t_cmpt=100&machine=m4&per_node=on").content.decode()
    assert 'data-testid="chosen"' in html and "from estimate #" in html
