"""The reproduction report's service, API and page. Sweeps are created through the
service; their runs' results are written straight into the rows, so nothing is
simulated."""

from __future__ import annotations

import jsonschema
import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from hxportal.models import RunStatus
from simulation import reproduction_report, services
from simulation.models import SimulationRun, Sweep

pytestmark = pytest.mark.django_db

PUBLISHED = reproduction_report.published()
RELATIVE = {"diagonal": 1.0, "random_endpoint": 1.02, "full_spread": 1.03, "row": 1.10,
            "l_shape": 1.12, "random_switch": 1.15, "rectangular": 1.40}
INTERFERENCE = {**RELATIVE, "rectangular": 1.1, "random_endpoint": 1.5, "full_spread": 1.6}


def cycles_for(point: dict) -> float:
    """Times that reproduce the published figures and orderings exactly."""
    if point["part"] == "table4":
        return 1000.0 / PUBLISHED["table4"]["values"][str(point["ranks"])][point["policy"]]
    if point["part"] == "escalation_min":
        return 1000.0 * RELATIVE[point["policy"]] * point["replicas"]
    return 1000.0 * INTERFERENCE[point["policy"]]


def fill(sweep: Sweep, status=RunStatus.SUCCEEDED, only=None) -> int:
    """Write results into the sweep's runs (those matching ``only(point)``)."""
    runs = []
    for run in sweep.runs.all():
        point = run.parameters["point"]
        if only is not None and not only(point):
            continue
        run.status = status
        if status == RunStatus.SUCCEEDED:
            t = cycles_for(point)
            run.summary = {"target_cycles": t, "makespan_cycles": t, "completed": True}
        else:
            run.error = "RuntimeError: boom"
        runs.append(run)
    SimulationRun.objects.bulk_update(runs, ["status", "summary", "error"])
    return len(runs)


@pytest.fixture(autouse=True)
def no_stored_reference(tmp_path, monkeypatch):
    """These pages as on a portal without the shipped reference report (its own tests
    are in test_trial_inputs_and_counts.py)."""
    monkeypatch.setattr(reproduction_report, "REFERENCE_PATH", tmp_path / "absent.json")
    reproduction_report._reference.cache_clear()
    yield
    reproduction_report._reference.cache_clear()


@pytest.fixture
def sweep(users):
    return services.start_reproduction(users["operator"], seeds=2)


@pytest.fixture
def other_sweep(users):
    return services.create_sweep(name="plain", base={"sides": [2, 2], "concentration": 2,
                                                     "ranks": 8, "max_cycles": 1000},
                                 parameters={"seed": [1]}, user=users["operator"])


# --------------------------------------------------------------------------
# Service


def test_service_creates_one_run_per_point_with_the_engine_defaults(sweep):
    assert sweep.preset == "reproduction" and sweep.run_count == 280
    assert sweep.parameters == {"preset": "reproduction", "seeds": 2, "ordering_seeds": 2}
    assert sweep.runs.count() == 280
    run = sweep.runs.filter(parameters__point__part="table4").order_by("id").first()
    assert run.parameters["point"] == {
        "part": "table4", "scenario": "interference", "policy": "row", "pattern": "all2all",
        "ranks": 64, "replicas": 1, "routing": "omniwar", "seed": 0}
    for key in ("message_packets", "background_rate", "max_cycles"):
        assert run.config[key] == services.DEFAULTS[key]
    assert run.config["vc_sets"] == "shared" and run.config["vcs"] == 4
    static = sweep.runs.filter(parameters__point__part="escalation_min").first()
    assert static.config["packets_per_task"] == 64 and static.config["routing"] == "min"


@pytest.mark.parametrize("seeds", [0, 9, "two"])
def test_service_names_the_seeds_field(users, seeds):
    with pytest.raises(ValidationError) as info:
        services.start_reproduction(users["operator"], seeds=seeds)
    assert list(info.value.message_dict) == ["seeds"]
    assert not Sweep.objects.exists()


def test_the_ordering_parts_take_their_own_seeds(users):
    sweep = services.start_reproduction(users["operator"], seeds=2, ordering_seeds=32)
    assert sweep.run_count == sweep.runs.count() == 2 * 70 + 32 * 70
    assert sweep.parameters == {"preset": "reproduction", "seeds": 2, "ordering_seeds": 32}
    assert sweep.name == "Reproduction of Cano et al. 2026 (2 seeds, orderings on 32)"
    seeds = {part: set(sweep.runs.filter(parameters__point__part=part)
                       .values_list("parameters__point__seed", flat=True))
             for part in ("table4", "escalation_min", "interference_static")}
    assert seeds == {"table4": {0, 1}, "escalation_min": set(range(32)),
                     "interference_static": set(range(32))}


@pytest.mark.parametrize("ordering_seeds", [0, 33, "x", True])
def test_service_names_the_ordering_seeds_field(users, ordering_seeds):
    with pytest.raises(ValidationError) as info:
        services.start_reproduction(users["operator"], seeds=2, ordering_seeds=ordering_seeds)
    assert info.value.message_dict == {
        "ordering_seeds": ["ordering_seeds must be an integer in 1..32"]}
    assert not Sweep.objects.exists()


# --------------------------------------------------------------------------
# API


def test_report_api_reads_a_finished_sweep(api, sweep):
    fill(sweep)
    response = api("viewer").get(f"/api/v1/sweeps/{sweep.pk}/reproduction/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["sweep"]["id"] == sweep.pk and body["sweep"]["seeds"] == 2
    assert body["progress"]["succeeded"] == 280 and body["progress"]["status"] == "succeeded"
    assert body["source"]["arxiv"] == "2605.28205"
    assert body["agreement"]["agree"] == body["agreement"]["total"] == 17
    assert [b["ranks"] for b in body["table4"]["ranks"]] == [64, 128]
    row = next(r for r in body["table4"]["ranks"][0]["rows"] if r["policy"] == "row")
    assert row["published"] == 0.70 and row["engine"] == pytest.approx(0.70)
    assert row["within"] is True and row["seeds"] == 2
    assert row["interval"]["half_width"] == pytest.approx(0.0, abs=1e-9)
    assert all(c["holds"] is True for c in body["orderings"])
    assert all(t["holds"] is True for t in body["targets"])
    assert body["missing"] == [] and body["counts"]["succeeded"] == 280


def test_report_api_lists_failed_and_pending_runs(api, sweep):
    fill(sweep)
    fill(sweep, status=RunStatus.FAILED,
         only=lambda p: p["part"] == "table4" and p["policy"] == "diagonal"
         and p["pattern"] == "stencil4" and p["ranks"] == 64 and p["seed"] == 1)
    pending = sweep.runs.filter(parameters__point__part="interference_static",
                                parameters__point__policy="row")
    pending.update(status=RunStatus.PENDING, summary={})
    body = api("viewer").get(f"/api/v1/sweeps/{sweep.pk}/reproduction/").json()
    reasons = sorted((m["point"]["part"], m["status"]) for m in body["missing"])
    assert reasons == [("interference_static", "pending")] * 4 + [("table4", "failed")]
    failed = next(m for m in body["missing"] if m["status"] == "failed")
    assert failed["reason"] == "failed: RuntimeError: boom" and failed["run"]
    row = next(r for r in body["table4"]["ranks"][0]["rows"] if r["policy"] == "row")
    assert row["missing_pairs"] == [{"pattern": "stencil4", "seed": 1}]
    assert row["seeds"] == 1 and row["interval"] is None  # seed 1 lacks a kernel
    assert row["engine"] == pytest.approx(0.70)
    holds = {c["id"]: c["holds"] for c in body["orderings"]}
    assert holds["b1"] is None and holds["b2"] is None
    assert "wait for runs that are missing, failed or unfinished" in body["agreement"]["sentence"]


def test_a_sweep_made_before_the_orderings_took_every_seed_is_read_with_its_own(
        api, users):
    """Until 2026-12-06 a sweep ran its orderings on at most two seeds and stored no
    ``ordering_seeds``: its seed-2 ordering points are not missing runs. A sweep of
    today that lost such runs still names them."""
    legacy = services.start_reproduction(users["operator"], seeds=3)
    today = services.start_reproduction(users["operator"], seeds=3)
    for sweep in (legacy, today):
        sweep.runs.filter(parameters__point__seed=2).exclude(
            parameters__point__part="table4").delete()
        fill(sweep)
    legacy.parameters = {"preset": "reproduction", "seeds": 3}
    legacy.save(update_fields=["parameters"])
    old = api("viewer").get(f"/api/v1/sweeps/{legacy.pk}/reproduction/").json()
    assert old["missing"] == [] and old["agreement"]["unknown"] == 0
    assert old["parts"]["escalation_min"]["seeds"] == [0, 1]
    new = api("viewer").get(f"/api/v1/sweeps/{today.pk}/reproduction/").json()
    assert len(new["missing"]) == 70
    assert {m["status"] for m in new["missing"]} == {"absent"}


def test_report_api_permissions_and_404s(api, users, sweep, other_sweep, settings):
    url = f"/api/v1/sweeps/{sweep.pk}/reproduction/"
    assert api(None).get(url).status_code == 401
    for role in ("viewer", "operator", "operator2", "admin"):
        assert api(role).get(url).status_code == 200, role
    assert api("viewer").get(f"/api/v1/sweeps/{other_sweep.pk}/reproduction/"
                             ).status_code == 404
    assert api("viewer").get("/api/v1/sweeps/999999/reproduction/").status_code == 404
    settings.HX_PRIVATE_DATA = True
    assert api("operator2").get(url).status_code == 404
    assert api("viewer").get(url).status_code == 404
    assert api("operator").get(url).status_code == 200
    assert api("admin").get(url).status_code == 200


def test_start_api(api, django_capture_on_commit_callbacks):
    assert api(None).post("/api/v1/sweeps/reproduction/", {}, format="json").status_code == 401
    assert api("viewer").post("/api/v1/sweeps/reproduction/", {"seeds": 1},
                              format="json").status_code == 403
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = api("operator").post("/api/v1/sweeps/reproduction/", {"seeds": 1},
                                        format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["preset"] == "reproduction" and body["run_count"] == 140 == len(callbacks)
    assert body["parameters"] == {"preset": "reproduction", "seeds": 1, "ordering_seeds": 1}
    with django_capture_on_commit_callbacks(execute=False):
        default = api("admin").post("/api/v1/sweeps/reproduction/", {}, format="json")
    assert default.status_code == 202 and default.json()["run_count"] == 420
    with django_capture_on_commit_callbacks(execute=False):
        more = api("operator").post("/api/v1/sweeps/reproduction/",
                                    {"seeds": 1, "ordering_seeds": 16}, format="json")
    assert more.status_code == 202 and more.json()["run_count"] == 70 + 16 * 70
    assert more.json()["parameters"]["ordering_seeds"] == 16


@pytest.mark.parametrize("seeds", [0, 9, "x", None, 2.5])
def test_start_api_refuses_bad_seeds_naming_the_field(api, seeds):
    response = api("operator").post("/api/v1/sweeps/reproduction/", {"seeds": seeds},
                                    format="json")
    assert response.status_code == 400, response.content
    assert "seeds" in response.json()["errors"]
    assert not Sweep.objects.exists()


@pytest.mark.parametrize("ordering_seeds", [0, 33, "x", 2.5])
def test_start_api_refuses_bad_ordering_seeds_naming_the_field(api, ordering_seeds):
    response = api("operator").post("/api/v1/sweeps/reproduction/",
                                    {"seeds": 1, "ordering_seeds": ordering_seeds},
                                    format="json")
    assert response.status_code == 400, response.content
    assert list(response.json()["errors"]) == ["ordering_seeds"]
    assert not Sweep.objects.exists()


def _json_schema(node):
    """OpenAPI 3.0 -> JSON Schema: ``nullable: true`` becomes "or null"."""
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k != "nullable"}
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out


def test_the_schema_documents_both_operations_and_the_report_matches_it(api, sweep):
    schema = api("viewer").get("/api/schema/?format=json").json()
    report = schema["paths"]["/api/v1/sweeps/{id}/reproduction/"]["get"]
    assert "ReproductionReport" in str(report["responses"]["200"])
    assert "404" in report["responses"]
    start = schema["paths"]["/api/v1/sweeps/reproduction/"]["post"]
    assert "202" in start["responses"] and "ReproductionStart" in str(start["requestBody"])
    document = _json_schema(schema)
    validator = jsonschema.Draft7Validator(
        {**document, "$ref": "#/components/schemas/ReproductionReport"})
    url = f"/api/v1/sweeps/{sweep.pk}/reproduction/"
    validator.validate(api("viewer").get(url).json())  # nothing finished: nulls everywhere
    fill(sweep, only=lambda p: p["seed"] == 0)  # one seed: no intervals
    validator.validate(api("viewer").get(url).json())
    fill(sweep)
    body = api("viewer").get(url).json()
    validator.validate(body)
    assert body["agreement"]["total"] == 17
    with pytest.raises(jsonschema.ValidationError):  # the check has teeth
        validator.validate({**body, "table4": {**body["table4"], "ranks": [{"ranks": "x"}]}})


# --------------------------------------------------------------------------
# Page


def test_page_needs_sign_in(client_for):
    response = Client().get("/simulation/reproduction/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_empty_state_explains_and_offers_the_start_button_to_operators(client_for):
    viewer = client_for("viewer").get("/simulation/reproduction/")
    assert viewer.status_code == 200
    text = viewer.content.decode()
    assert 'data-testid="reproduction-empty"' in text and "Table 4" in text
    assert "reproduction-form" not in text and "An operator can start it." in text
    operator = client_for("operator").get("/simulation/reproduction/").content.decode()
    assert 'data-testid="reproduction-form"' in operator
    assert ('for="reproduction-seeds reproduction-ordering-seeds">420 runs</output>'
            in operator)


def test_page_shows_the_table_orderings_and_targets(client_for, sweep):
    fill(sweep)
    response = client_for("viewer").get("/simulation/reproduction/")
    assert response.status_code == 200
    text = response.content.decode()
    assert "The model agrees with 17 of 17 published figures" in text
    assert 'data-testid="table4-64"' in text and 'data-testid="table4-128"' in text
    assert "arXiv 2605.28205" in text
    assert text.count('data-check="yes"') >= 12 + 5 + 3
    assert 'data-check="no"' not in text
    assert 'data-ordering="a1"' in text and 'data-target="diagonal_best"' in text
    verdicts = text[text.index('data-testid="by-pattern-b1"'):]
    assert 'data-pattern="switch_permutation"' in verdicts and "uniform alone:" in verdicts
    assert 'data-testid="kernels-64"' in text and "random_involution" in text
    assert "None: every run finished." in text
    assert "reproduction-form" not in text  # viewers cannot start one
    assert "<script>" not in text and ' style="' not in text
    assert f"/api/v1/sweeps/{sweep.pk}/reproduction/" in text
    assert "data-sim-poll" not in text  # finished: no polling
    # Every seed gives the same times: each verdict stands beyond the seeds' noise.
    assert 'data-testid="noise-a1" data-noise="holds"' in text
    assert "holds beyond the seeds&#x27; noise (2 seeds)" in text
    assert "within the seeds" not in text


def test_page_names_a_verdict_that_more_seeds_could_turn(client_for, sweep):
    """a3 holds on the mean (full_spread 1.07 and 1.03 of diagonal on the two seeds:
    spread 0.05) but its interval straddles the tolerance; so does a2's row against
    full_spread (0.03 and 0.07 apart)."""
    fill(sweep)
    for run in SimulationRun.objects.filter(sweep=sweep, parameters__point__seed=0,
                                            parameters__point__part="escalation_min",
                                            parameters__point__policy="full_spread"):
        t = 1000.0 * 1.07 * run.parameters["point"]["replicas"]
        run.summary = {"target_cycles": t, "makespan_cycles": t, "completed": True}
        run.save(update_fields=["summary"])
    text = client_for("viewer").get(f"/simulation/reproduction/?sweep={sweep.pk}"
                                    ).content.decode()
    assert "The model agrees with 17 of 17 published figures" in text
    assert ("The verdicts of a2 and a3 lie within the seeds&#x27; noise: more seeds could turn "
            "them." in text)
    cell = text[text.index('data-testid="noise-a3"'):]
    assert cell.startswith('data-testid="noise-a3" data-noise="open" class="warn"')
    assert "diagonal - full_spread -0.050 ± 0.254 (bound -0.050) straddles" in cell
    part = text[text.index('data-testid="part-escalation_min"'):]
    row = part[part.index("<td>full_spread</td>"):]
    # Its values per seed, 1.07 and 1.03, and their 95 % half-width over the two seeds.
    assert row.startswith('<td>full_spread</td><td class="num">1.050</td>'
                          '<td class="num">0.254 <small class="muted">(2)</small></td>')


def test_page_shows_disagreement_and_missing_runs(client_for, sweep):
    fill(sweep)
    SimulationRun.objects.filter(sweep=sweep, parameters__point__part="table4",
                                 parameters__point__policy="row",
                                 parameters__point__ranks=64).update(
        summary={"target_cycles": 1000.0, "makespan_cycles": 1000.0})  # 1.0, not 0.70
    fill(sweep, status=RunStatus.FAILED,
         only=lambda p: p["part"] == "escalation_min" and p["policy"] == "rectangular"
         and p["replicas"] == 8 and p["seed"] == 0 and p["pattern"] == "uniform")
    text = client_for("operator").get(f"/simulation/reproduction/?sweep={sweep.pk}"
                                      ).content.decode()
    assert "The model agrees with 16 of 17 published figures" in text
    assert 'data-check="no"' in text and "+0.300" in text
    assert "failed: RuntimeError: boom" in text and "1 point without a usable result" in text
    assert 'data-testid="reproduction-form"' in text  # operators may run it again


def test_page_polls_while_the_sweep_runs(client_for, sweep):
    default = client_for("viewer").get("/simulation/reproduction/").content.decode()
    assert 'data-testid="running-notice"' in default and "data-sim-poll" not in default
    text = client_for("viewer").get(f"/simulation/reproduction/?sweep={sweep.pk}"
                                    ).content.decode()
    assert "data-sim-poll" in text and "No published figure can be checked yet" in text
    assert "280 points without a usable result" in text


def test_page_picks_a_sweep_and_refuses_others(client_for, sweep, other_sweep, users):
    fill(sweep)
    newer = services.start_reproduction(users["admin"], seeds=1)
    viewer = client_for("viewer")
    default = viewer.get("/simulation/reproduction/").content.decode()
    assert f"Sweep <a href=\"/simulation/sweeps/{sweep.pk}/\"" in default  # latest finished
    assert f'href="?sweep={newer.pk}" data-testid="running-partial"' in default
    chosen = viewer.get(f"/simulation/reproduction/?sweep={sweep.pk}").content.decode()
    assert f"Sweep <a href=\"/simulation/sweeps/{sweep.pk}/\"" in chosen
    assert f'href="?sweep={newer.pk}"' in chosen  # the other reproduction sweeps
    for bad in (other_sweep.pk, 999999, "abc"):
        assert viewer.get(f"/simulation/reproduction/?sweep={bad}").status_code == 404


def test_page_respects_private_data(client_for, sweep, settings):
    settings.HX_PRIVATE_DATA = True
    assert client_for("operator2").get(
        f"/simulation/reproduction/?sweep={sweep.pk}").status_code == 404
    text = client_for("operator2").get("/simulation/reproduction/").content.decode()
    assert 'data-testid="reproduction-empty"' in text  # the latest they may read: none
    assert client_for("operator").get(
        f"/simulation/reproduction/?sweep={sweep.pk}").status_code == 200


def test_start_button(client_for):
    assert client_for("viewer").post("/simulation/reproduction/start/",
                                     {"seeds": 1}).status_code == 403
    operator = client_for("operator")
    response = operator.post("/simulation/reproduction/start/", {"seeds": 1})
    created = Sweep.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/simulation/reproduction/?sweep={created.pk}"
    assert created.preset == "reproduction" and created.run_count == 140
    page = operator.get(response["Location"]).content.decode()
    assert f"Started reproduction sweep {created.pk}: 140 runs." in page
    assert operator.get("/simulation/reproduction/start/").status_code == 302


def test_start_button_with_ordering_seeds(client_for):
    operator = client_for("operator")
    response = operator.post("/simulation/reproduction/start/",
                             {"seeds": "1", "ordering_seeds": "16"})
    created = Sweep.objects.get()
    assert response.status_code == 302 and created.run_count == 70 + 16 * 70
    page = operator.get(response["Location"]).content.decode()
    assert '<span data-testid="reproduction-seeds-used">1 seed, the orderings on 16</span>' in page


@pytest.mark.parametrize("ordering_seeds", ["0", "33", "x", "²", "-1"])
def test_start_button_refuses_bad_ordering_seeds(client_for, ordering_seeds):
    operator = client_for("operator")
    response = operator.post("/simulation/reproduction/start/",
                             {"seeds": "1", "ordering_seeds": ordering_seeds})
    assert response.status_code == 302 and response["Location"] == "/simulation/reproduction/"
    page = operator.get("/simulation/reproduction/").content.decode()
    assert "ordering_seeds: " in page
    assert not Sweep.objects.exists()


@pytest.mark.parametrize("seeds", ["0", "9", "x", "", "²", "-1"])
def test_start_button_refuses_bad_seeds(client_for, seeds):
    operator = client_for("operator")
    response = operator.post("/simulation/reproduction/start/", {"seeds": seeds})
    assert response.status_code == 302 and response["Location"] == "/simulation/reproduction/"
    page = operator.get("/simulation/reproduction/").content.decode()
    assert "seeds: " in page
    assert not Sweep.objects.exists()


def test_simulation_pages_link_to_the_report(client_for):
    text = client_for("viewer").get("/simulation/sweeps/").content.decode()
    assert 'href="/simulation/reproduction/"' in text


def test_a_reproduction_sweep_links_to_its_report(client_for, sweep, other_sweep):
    text = client_for("viewer").get(f"/simulation/sweeps/{sweep.pk}/").content.decode()
    assert f'href="/simulation/reproduction/?sweep={sweep.pk}"' in text
    text = client_for("viewer").get(f"/simulation/sweeps/{other_sweep.pk}/").content.decode()
    assert "reproduction-report" not in text


# --------------------------------------------------------------------------
# Model versions: a sweep finished before an upgrade keeps its figures


def _made_by(sweep: Sweep, *, placement: int | None = None, engine: str | None = None,
             only=None) -> int:
    """Rewrite the sweep's runs (those matching ``only(point)``) as if an older
    placement or engine had made them: the hash a run of that version was given."""
    runs = [r for r in sweep.runs.all() if only is None or only(r.parameters["point"])]
    for run in runs:
        run.engine_version = engine or run.engine_version
        run.config_hash = services.config_hash(
            run.config, None, run.engine_version,
            placement if placement is not None else services.PLACEMENT_VERSION)
    SimulationRun.objects.bulk_update(runs, ["engine_version", "config_hash"])
    return len(runs)


def test_a_current_sweep_names_its_versions_and_is_not_outdated(api, client_for, sweep):
    fill(sweep)
    info = api("viewer").get(f"/api/v1/sweeps/{sweep.pk}/reproduction/").json()["sweep"]
    assert info["engine_versions"] == [services.ENGINE_VERSION]
    assert info["placement_versions"] == [services.PLACEMENT_VERSION]
    assert info["outdated_runs"] == 0
    text = client_for("viewer").get("/simulation/reproduction/").content.decode()
    assert (f"engine {services.ENGINE_VERSION}, placement {services.PLACEMENT_VERSION}."
            in text)
    assert 'data-testid="outdated"' not in text


def test_runs_of_an_older_placement_or_engine_are_counted_and_named(api, client_for, sweep):
    fill(sweep)
    old = _made_by(sweep, placement=1, only=lambda p: p["ranks"] == 128)
    assert 0 < old < sweep.runs.count()
    info = api("viewer").get(f"/api/v1/sweeps/{sweep.pk}/reproduction/").json()["sweep"]
    assert info["placement_versions"] == [1, services.PLACEMENT_VERSION]
    assert info["outdated_runs"] == old
    text = client_for("operator").get("/simulation/reproduction/").content.decode()
    assert f"placement 1, {services.PLACEMENT_VERSION}." in text
    assert f"{old} runs of this sweep were made by an older engine or placement" in text
    assert "Start a new sweep below" in text
    _made_by(sweep, engine="2.0")
    info = api("viewer").get(f"/api/v1/sweeps/{sweep.pk}/reproduction/").json()["sweep"]
    assert info["engine_versions"] == ["2.0"] and info["outdated_runs"] == sweep.runs.count()
    viewer = client_for("viewer").get("/simulation/reproduction/").content.decode()
    assert 'data-testid="outdated"' in viewer and "Start a new sweep below" not in viewer


def test_a_placement_version_is_read_back_from_the_hash_only_for_placed_runs():
    cfg = services.canonical_config(services.validate_config({"policy": "row"}))
    for version in range(1, services.PLACEMENT_VERSION + 1):
        stored = services.config_hash(cfg, None, placement_version=version)
        assert services.placement_version_of(cfg, stored, placed=True) == version
    on_partitions = services.config_hash(cfg, [[0, 1, 2, 3]])
    assert services.placement_version_of(cfg, on_partitions, placed=False) is None
    assert services.placement_version_of(cfg, "0" * 64, placed=True) is None
