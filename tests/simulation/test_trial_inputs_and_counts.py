"""The simulation pages read input as typed and count what runs (issue 22, defects 4, 5
and the sweep/seed counts of 7)."""

from __future__ import annotations

import json

import pytest

from hxportal.models import RunStatus
from simulation import reproduction_preset, reproduction_report, services
from simulation.models import SimulationRun, Sweep
from tests.simulation.test_reproduction_pages import cycles_for, fill

pytestmark = pytest.mark.django_db

FORM = {"sides": "4,4", "concentration": 4, "policy": "row", "scenario": "single",
        "pattern": "all2all", "ranks": 16, "replicas": 1, "routing": "min",
        "vc_sets": "shared", "rate": 1.0, "message_packets": 1, "seed": 0,
        "max_cycles": 20000, "extra": ""}


# --------------------------------------------------------------------------
# Defect 4: sides "8,x" started a one-dimensional run without a word


@pytest.mark.parametrize("sides", ["8,x", "8,,8", "8;8", "x", "8,8.5", "8, -8", ","])
def test_sides_that_are_not_whole_numbers_are_refused_on_the_form(client_for, sides):
    response = client_for("operator").post("/simulation/runs/new/", {**FORM, "sides": sides})
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert "is not a list of whole numbers" in " ".join(errors["sides"])
    assert not SimulationRun.objects.exists()


@pytest.mark.parametrize(("sides", "parsed"), [("4,4", [4, 4]), ("4x4", [4, 4]),
                                               (" 4 , 4 ", [4, 4]), ("16", [16])])
def test_sides_typed_as_numbers_are_read_as_typed(client_for, sides, parsed):
    response = client_for("operator").post("/simulation/runs/new/", {**FORM, "sides": sides})
    assert response.status_code == 302, response.context and response.context["form"].errors
    assert SimulationRun.objects.get().config["sides"] == parsed


# --------------------------------------------------------------------------
# Defect 5: the reproduction page's counts agree with what runs


def test_the_start_form_states_the_runs_each_choice_of_seeds_starts(client_for, users):
    html = client_for("operator").get("/simulation/reproduction/").content.decode()
    form = html[html.index('data-testid="reproduction-form"'):]
    table4 = int(form.split('data-table4-runs="', 1)[1].split('"', 1)[0])
    ordering = int(form.split('data-ordering-runs="', 1)[1].split('"', 1)[0])
    for seeds, ordering_seeds in ((1, None), (2, None), (3, None), (8, None), (1, 32), (8, 2)):
        sweep = services.start_reproduction(users["operator"], seeds=seeds,
                                            ordering_seeds=ordering_seeds)
        expected = seeds * table4 + (ordering_seeds or seeds) * ordering
        assert expected == sweep.runs.count() == sweep.run_count
    assert "A seed adds 70 Table 4 runs (at most 8 seeds)" in form
    assert "an ordering seed adds 70 runs of the two ordering parts (at most 32;" in form
    assert "Start the reproduction sweep</button>" in form  # no number that may not hold


def test_a_running_sweep_does_not_replace_the_latest_finished_report(client_for, users):
    finished = services.start_reproduction(users["operator"], seeds=2)
    fill(finished)
    running = services.start_reproduction(users["operator"], seeds=1)
    fill(running, only=lambda p: p["part"] == "table4" and p["ranks"] == 64)
    html = client_for("viewer").get("/simulation/reproduction/").content.decode()
    assert "The model agrees with 17 of 17 published figures" in html
    assert f"Sweep <a href=\"/simulation/sweeps/{finished.pk}/\"" in html
    notice = html[html.index('data-testid="running-notice"'):]
    assert f"{running.pk}: " in notice and "35 of 140 runs done" in notice
    assert f'href="?sweep={running.pk}"' in notice
    partial = client_for("viewer").get(f"/simulation/reproduction/?sweep={running.pk}")
    sentence = partial.context["report"]["agreement"]["sentence"]
    assert sentence.startswith("So far the model agrees with")
    assert "agrees with 6 of the 6 published figures that can be checked" in sentence
    assert "the other 11 of 17 wait for runs" in sentence


@pytest.fixture
def reference(tmp_path, monkeypatch):
    """A stored reference report with the published figures' times."""
    records = [{"run": i, "point": point, "status": "succeeded", "error": "",
                "completion_cycles": cycles_for(point), "makespan_cycles": cycles_for(point)}
               for i, (point, _) in enumerate(reproduction_preset.reproduction_configs(2))]
    path = tmp_path / "reference.json"
    path.write_text(json.dumps({"engine_version": "9.9", "seeds": 2,
                                "computed_at": "2026-12-01T00:00:00+00:00",
                                "run_count": len(records), "records": records}))
    monkeypatch.setattr(reproduction_report, "REFERENCE_PATH", path)
    reproduction_report._reference.cache_clear()
    yield path
    reproduction_report._reference.cache_clear()


def test_before_any_sweep_finishes_the_stored_reference_is_shown_with_its_engine(
        client_for, users, reference):
    running = services.start_reproduction(users["operator"], seeds=3)
    html = client_for("viewer").get("/simulation/reproduction/").content.decode()
    assert 'data-testid="reference"' in html and "engine <strong" in html
    assert '<strong data-testid="reference-engine">9.9</strong>' in html
    assert "The model agrees with 17 of 17 published figures" in html
    assert f"Reproduction sweep <a href=\"/simulation/sweeps/{running.pk}/\"" in html
    assert "0 of 420 runs done" in html


def test_the_shipped_reference_names_its_engine_and_placement_versions():
    stored = json.loads(reproduction_report.REFERENCE_PATH.read_text())
    assert stored["engine_version"] == services.ENGINE_VERSION
    assert stored["placement_version"] == services.PLACEMENT_VERSION
    assert stored["run_count"] == len(stored["records"])
    assert stored["run_count"] == reproduction_preset.reproduction_size(
        stored["seeds"], stored["ordering_seeds"])


def test_the_shipped_reference_says_how_many_seeds_each_part_ran(client_for):
    stored = json.loads(reproduction_report.REFERENCE_PATH.read_text())
    assert stored["ordering_seeds"] > stored["seeds"]  # the cheap parts on more seeds
    reproduction_report._reference.cache_clear()
    html = client_for("viewer").get("/simulation/reproduction/").content.decode()
    assert (f'<span data-testid="reproduction-seeds-used">{stored["seeds"]} seeds, the '
            f'orderings on {stored["ordering_seeds"]}</span>') in html


# --------------------------------------------------------------------------
# Defect 7: counts and grammar


def test_one_seed_reads_one_seed(users):
    sweep = services.start_reproduction(users["operator"], seeds=1)
    assert sweep.name.endswith("(1 seed)")


def test_the_sweep_progress_line_adds_up(client_for, users):
    sweep = services.create_sweep(name="s", base={"sides": [2, 2], "concentration": 2,
                                                  "ranks": 4, "max_cycles": 1000},
                                  parameters={"seed": list(range(9))}, user=users["operator"])
    SimulationRun.objects.filter(pk__in=list(sweep.runs.values_list("pk", flat=True)[:8])
                                 ).update(status=RunStatus.SUCCEEDED)
    html = client_for("viewer").get(f"/simulation/sweeps/{sweep.pk}/").content.decode()
    assert "8 of 9 runs done" in html
    assert "(8 succeeded, 0 failed, 0 running, 1 pending)" in html
    assert Sweep.objects.count() == 1
