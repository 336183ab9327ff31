"""Pages as people read them: recommendation wording and empty states, errors next to
the fields they are about, glossary tooltips, the health page's drain rule, sweep and
replica labels, favicon, Swagger UI under the CSP, one machine preselected."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from allocation.forms import JobForm
from allocation.models import Job, Machine
from allocation.services import jobs, machines
from dashboard.glossary import TERMS
from health.forms import SparesForm
from recommendations import services as recommendations
from recommendations.forms import RecommendationForm
from recommendations.models import Recommendation, RecommendationStatus
from recommendations.views import accuracy_rows
from tests.health.test_health_pages import history  # noqa: F401 - fixture
from tests.simulation.conftest import TINY, run_pending

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_role(users):
    def make(role: str) -> Client:
        client = Client()
        client.force_login(users[role])
        return client
    return make


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def by_testid(html: str, name: str) -> str:
    match = re.search(rf'<(\w+)[^>]*data-testid="{name}"[^>]*>(.*?)</\1>', html, re.S)
    assert match, name
    return text(match.group(2))


def recommend(machine, user, **inputs) -> Recommendation:
    rec, _ = recommendations.request_recommendation(
        user=user, machine=machine, node_count=16, pattern="uniform",
        **{"t_cmpt": 100.0, "t_comm": 50.0, "simulate": False, **inputs})
    return rec


# ------------------------------------------------------------------ recommendation page
def test_recommendation_without_estimate_says_how_to_get_one(as_role, users, machine):
    rec = recommend(machine, users["operator"])
    html = as_role("viewer").get(f"/recommendations/{rec.pk}/").content.decode()
    spares = by_testid(html, "spares-empty")
    assert "No estimate yet for m4" in spares and "run an estimation" in spares
    assert "/machines/m4/health/#estimate" in html and "/recommend/?machine=m4" in html
    assert "(no spare-node advice)" in html
    ranking = html[html.index('data-testid="ranking"'):]
    assert "<td class=\"num\">—</td>" in ranking, "no N_spare without a spare model"


def test_recommendation_wording_and_node_seconds(as_role, users, machine):
    rec = recommend(machine, users["operator"], p_abn=0.02, alpha_abn=3.0, t_bench=1.0)
    html = as_role("viewer").get(f"/recommendations/{rec.pk}/").content.decode()
    best = rec.recommended
    expected = by_testid(html, "expected")
    assert f"{best['expected_cost']:,.0f} node-s" in expected
    assert " node-s ," not in html and "x less than" not in html and "× less than" not in html
    comparisons = by_testid(html, "comparisons")
    if best["policy"] == best["default_policy"]:
        assert "is the site's default policy" in comparisons
    else:
        assert re.search(r"(Same as|\d+(\.\d)? % (lower|higher) than) the default policy",
                         comparisons), comparisons
    assert re.search(r"(Same as|\d+(\.\d)? % (lower|higher) than) running as-is", comparisons)
    assert 'data-testid="recommendation-curve"' in html


def test_recommendation_same_as_default_within_half_a_percent(as_role, users, machine):
    rec = recommend(machine, users["operator"], p_abn=0.02, alpha_abn=3.0, t_bench=1.0)
    rec.recommended = {**rec.recommended, "policy": "row", "default_policy": "diagonal",
                       "saving_vs_default": 1.004, "saving_vs_as_is": 1.25}
    rec.save(update_fields=["recommended"])
    comparisons = by_testid(as_role("viewer").get(f"/recommendations/{rec.pk}/")
                         .content.decode(), "comparisons")
    assert "Same as the default policy (diagonal)" in comparisons
    assert "20 % lower than running as-is" in comparisons


def test_progress_text_and_bar_share_one_value(as_role, users, machine):
    rec = recommend(machine, users["operator"], p_abn=0.02, alpha_abn=3.0, t_bench=1.0)
    Recommendation.objects.filter(pk=rec.pk).update(
        status=RecommendationStatus.COMPUTING, deadline=timezone.now() + timezone.timedelta(
            minutes=5))
    html = as_role("viewer").get(f"/recommendations/{rec.pk}/").content.decode()
    assert "<span data-progress-done>0</span> of <span data-progress-total>0</span>" in html
    assert 'data-testid="progress"' in html and 'value="0"' in html
    js = open("static/hxportal/app.js").read()
    assert "done.textContent = String(finished)" in js and "bar.value = finished" in js


def test_accuracy_table_leaves_missing_predictions_out(as_role, users, machine):
    owner = users["operator"]
    for predicted, actual in [(100.0, 120.0), (None, 50.0), (200.0, 180.0)]:
        job = Job.objects.create(owner=owner, machine=machine, name="j", node_count=4,
                                 policy="row", actual_runtime=actual, status="completed")
        Recommendation.objects.create(
            machine=machine, user=owner, node_count=4, pattern="uniform",
            deadline=timezone.now(), status=RecommendationStatus.ACCEPTED, job=job,
            ranking=[{"policy": "row", "expected_time": predicted}])
    rows = accuracy_rows(Recommendation.objects.all())
    row = rows[0]
    assert row["jobs"] == 3 and row["predicted_jobs"] == 2
    assert row["predicted"] == pytest.approx(150.0), "the missing one is not a 0"
    assert row["actual"] == pytest.approx(350 / 3)
    assert row["ratio"] == pytest.approx(300 / 300)
    assert row["error"] == pytest.approx((0.2 + 0.1) / 2)
    Recommendation.objects.filter(job__actual_runtime=120.0).update(
        ranking=[{"policy": "row", "expected_time": None}])
    Recommendation.objects.filter(job__actual_runtime=180.0).update(
        ranking=[{"policy": "row"}])
    html = as_role("viewer").get("/recommendations/").content.decode()
    accuracy = html[html.index('data-testid="accuracy"'):html.index("</table>",
                                                                      html.index("accuracy"))]
    assert by_testid(accuracy, "predicted") == "—" and by_testid(accuracy, "ratio") == "—"
    assert "0.0" not in text(accuracy)


# ------------------------------------------------------------------ errors in place
def test_estimation_form_errors_stay_next_to_the_form(as_role, machine):
    response = as_role("operator").post("/machines/m4/health/estimate/?benchmark=&window=30",
                                        {"window_days": "0", "benchmark": "bad name!"})
    assert response.status_code == 200
    html = response.content.decode()
    form = html[html.index('data-testid="estimate-form"'):]
    form = form[:form.index("</form>")]
    assert 'data-field="window_days">Must be between 1 and 3650 days.' in form
    assert 'data-field="benchmark"' in form
    assert 'value="0"' in form and 'value="bad name!"' in form, "submitted values kept"
    assert 'action="/machines/m4/health/estimate/?benchmark=&amp;window=30#estimate"' in html
    assert 'class="messages"' not in html, "not a message at the top of the page"
    assert 'id="estimate"' in html


def test_machine_form_reports_a_bad_name_under_name(as_role):
    response = as_role("admin").post("/machines/new/", {
        "name": "1 bad", "sides": "2,2", "concentration": "2"})
    html = response.content.decode()
    assert response.status_code == 400
    assert re.search(r'data-field="name">Use a letter first', html)
    assert 'data-field="hostname_pattern"' not in html
    with pytest.raises(Exception) as info:
        machines.create_machine(name="x" * 63, sides=[2, 2], concentration=2)
    assert "name" in info.value.message_dict and "hostname_pattern" not in info.value.message_dict


def test_job_form_reports_too_many_nodes_under_node_count(as_role, users, machine):
    jobs.submit_job(owner=users["operator"], machine=machine, name="big", node_count=60,
                    pattern="uniform", policy="row")
    response = as_role("operator").post("/machines/m4/jobs/new/", {
        "name": "x", "node_count": 10, "pattern": "uniform", "policy": "diagonal", "seed": 0})
    html = response.content.decode()
    assert re.search(r'data-field="node_count">diagonal cannot place 10 nodes: need 10 nodes, '
                     r'4 available', html)
    assert 'data-field="policy"' not in html
    response = as_role("operator").post("/machines/m4/jobs/new/", {
        "name": "x", "node_count": 65, "pattern": "uniform", "policy": "row", "seed": 0})
    assert re.search(r'data-field="node_count">the machine has only 64 nodes',
                     response.content.decode())


def test_service_errors_land_on_the_field_they_are_about():
    from django.core.exceptions import ValidationError

    from hxportal.errors import ConflictError
    from hxportal.views import add_form_errors

    form = JobForm({"name": "x", "node_count": 4, "pattern": "uniform", "policy": "row",
                    "seed": 0})
    assert form.is_valid()
    add_form_errors(form, ValidationError({"node_count": ["the machine has only 64 nodes"],
                                           "mystery": ["something else"]}))
    assert form.errors["node_count"] == ["the machine has only 64 nodes"]
    assert form.non_field_errors() == ["something else"]
    add_form_errors(form, ConflictError("already taken", field="name"))
    assert form.errors["name"] == ["already taken"]
    add_form_errors(form, ValidationError("plain"))
    assert "plain" in form.non_field_errors()


@pytest.mark.parametrize(("form_class", "data", "field", "message"), [
    (JobForm, {"t_cmpt": "0"}, "t_cmpt", "Must be more than 0 s."),
    (JobForm, {"t_comm": "-1"}, "t_comm", "Must be at least 0 s."),
    (RecommendationForm, {"alpha_abn": "1"}, "alpha_abn",
     "Must be more than 1 (an abnormal node is slower than a normal one)."),
    (RecommendationForm, {"p_abn": "1.5"}, "p_abn", "Must be between 0 and 1 (a probability)."),
    (RecommendationForm, {"compute_fraction": "0"}, "compute_fraction",
     "Must be more than 0 and at most 1."),
    (SparesForm, {"t_bench": "0"}, "t_bench", "Must be more than 0 s."),
])
def test_bounds_read_naturally(machine, form_class, data, field, message):
    form = form_class(data)
    assert not form.is_valid()
    assert form.errors[field] == [message]
    assert "e-0" not in str(form[field]), "the browser's min is written plainly too"


def test_one_machine_is_preselected(as_role, machine):
    assert RecommendationForm().initial["machine"] == "m4"
    assert SparesForm().initial["machine"] == "m4"
    html = as_role("operator").get("/recommend/").content.decode()
    assert '<option value="m4" selected>' in html
    Machine.objects.create(name="other", sides=[1], concentration=1)
    assert "machine" not in RecommendationForm().initial
    assert RecommendationForm(initial={"machine": "other"}).initial["machine"] == "other"


# ------------------------------------------------------------------ words and numbers
def test_glossary_defines_every_term_and_is_linked(as_role, machine):
    html = as_role("viewer").get("/glossary/").content.decode()
    for key in ("pb_exact", "pb_bound", "hull_links", "t_cmpt", "t_comm", "t_bench",
                "n_spare", "p_abn", "alpha_abn", "posterior_p", "score", "switch_locality",
                "convexity", "makespan"):
        assert f'id="term-{key}"' in html, key
    assert len({t.key for t in TERMS}) == len(TERMS)
    home = as_role("viewer").get("/").content.decode()
    assert 'href="/glossary/">Glossary</a>' in home, "linked from the navigation"


def test_health_page_column_and_rule_agree(as_role, history):  # noqa: F811
    html = as_role("viewer").get("/machines/m4/health/").content.decode()
    rule = by_testid(html, "drain-rule")
    assert "score" in rule and "persistently abnormal" in rule
    assert "is at least 0.9, after at least 3 runs." in rule
    assert "Posterior p_i is the node's own rate of abnormal runs" in rule
    table = html[html.index('data-testid="drain-candidates"'):]
    head = text(table[:table.index("</thead>")])
    assert "Score (≥ 0.9)" in head and "Posterior p_i (95 % interval)" in head
    assert 'title="Score: Suspicion score: the posterior probability' in table
    assert 'href="/glossary/#term-score"' in table


def test_tables_scroll_in_their_own_container(as_role, history):  # noqa: F811
    for url in ["/machines/m4/health/", "/jobs/", "/machines/m4/nodes/", "/recommendations/",
                "/simulation/", "/simulation/sweeps/", "/health/"]:
        html = as_role("viewer").get(url).content.decode()
        tables = html.count('<table class="table')
        assert tables and html.count('<div class="table-wrap"><table class="table') + \
            html.count('<div class="table-wrap">\n<table class="table') == tables, url
        assert "style=" not in html and "<script>" not in html, url


def test_sweep_status_reads_running_k_of_n(as_role):
    from simulation import services as simulations

    sweep = simulations.create_sweep(name="s", base=TINY, parameters={"seed": [1, 2, 3]})
    run_pending(sweep.runs.filter(pk=sweep.runs.order_by("id").first().pk))
    detail = as_role("viewer").get(f"/simulation/sweeps/{sweep.pk}/").content.decode()
    assert by_testid(detail, "status") == "running (1 of 3 done)"
    listing = as_role("viewer").get("/simulation/sweeps/").content.decode()
    assert "running (1 of 3 done)" in listing
    js = open("static/simulation/simulation.js").read()
    assert "sweepStatusText" in js and "of ${p.total} done" in js
    run_pending(sweep.runs.all())
    detail = as_role("viewer").get(f"/simulation/sweeps/{sweep.pk}/").content.decode()
    assert by_testid(detail, "status") == "succeeded (3 runs)"


def test_simulation_results_name_replicas_and_background(as_role):
    from simulation import services as simulations

    run = simulations.start_run({**TINY, "ranks": 8, "scenario": "escalation", "replicas": 2,
                                 "policy": "row"})
    simulations.execute_run(run.pk)
    html = as_role("viewer").get(f"/simulation/runs/{run.pk}/").content.decode()
    apps = html[html.index('data-testid="apps"'):]
    apps = text(apps[:apps.index("</table>")])
    assert "replica 1" in apps and "replica 2" in apps and " app " not in f" {apps} "
    run = simulations.start_run({**TINY, "scenario": "interference"})
    simulations.execute_run(run.pk)
    html = as_role("viewer").get(f"/simulation/runs/{run.pk}/").content.decode()
    assert 'data-role="background"' in html and ">background</a>" in html


# ------------------------------------------------------------------ small things
def test_favicon_redirects_to_the_svg_without_sign_in(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"].endswith(
        "hxportal/favicon.svg")
    assert client.get(response["Location"]).status_code == 200
    assert 'rel="icon"' in client.get("/login/").content.decode()


def test_swagger_ui_has_no_inline_style_or_script(as_role):
    response = as_role("viewer").get("/api/docs/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<style" not in html and "<script>" not in html and "style=" not in html
    assert "hxportal/swagger.css" in html and "swagger-ui.css" in html
    assert "style-src 'self'" in response["Content-Security-Policy"]
    assert "unsafe-inline" not in response["Content-Security-Policy"]
