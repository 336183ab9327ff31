"""Celery tasks carry explicit, stable names.

Beat schedules, tracked-run rows (``task_name``) and messages already queued
name a task by its string; an explicit ``name=`` keeps that string when a
module moves. Parsed from source: an implicit name would equal the module path
today and pass any runtime check.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASK_MODULES = sorted(p for p in ROOT.glob("*/tasks.py") if ".venv" not in p.parts)


def _task_decorators(path: Path) -> list[tuple[str, ast.Call]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and getattr(deco.func, "id", "") == "shared_task":
                    found.append((node.name, deco))
    return found


# Where each task lives now -> the name it has always had (tasks moved out of
# allocation when health and recommendations became apps; the names did not).
STABLE_NAMES = {
    "health.tasks.run_estimation": "allocation.tasks.run_estimation",
    "health.tasks.estimate_all_machines": "allocation.tasks.estimate_all_machines",
    "recommendations.tasks.predict_policy": "allocation.tasks.predict_policy",
    "recommendations.tasks.expire_recommendations": "allocation.tasks.expire_recommendations",
    "simulation.tasks.run_simulation": "simulation.tasks.run_simulation",
    "hxportal.tasks.resend_unsent_runs": "hxportal.tasks.resend_unsent_runs",
    "allocation.tasks.sync_machine": "hx.slurm.sync_machine",
    "allocation.tasks.sync_due": "hx.slurm.sync_due",
    "hxportal.tasks.recover_stale_runs": "hxportal.tasks.recover_stale_runs",
    "whatif.tasks.run_scenario": "whatif.tasks.run_scenario",
    "metrics.tasks.refresh_health_snapshots": "hx.metrics.refresh_health_snapshots",
    "recommendations.tasks.calibrate_machines": "hx.recommendations.calibrate_machines",
    "recommendations.tasks.refresh_calibrations": "hx.recommendations.refresh_calibrations",
    "recommendations.tasks.prepare_calibration": "hx.recommendations.prepare_calibration",
}


def test_task_modules_exist():
    assert {p.parent.name for p in TASK_MODULES} >= {"health", "recommendations", "simulation"}


@pytest.mark.parametrize("path", TASK_MODULES, ids=lambda p: p.parent.name)
def test_every_task_has_an_explicit_name(path):
    tasks = _task_decorators(path)
    assert tasks, f"{path} defines no task"
    module = importlib.import_module(f"{path.parent.name}.tasks")
    for func, deco in tasks:
        where = f"{path.parent.name}.tasks.{func}"
        assert any(k.arg == "name" for k in deco.keywords), f"{where} has no explicit name="
        assert where in STABLE_NAMES, f"{where} is new: pin its name in STABLE_NAMES"
        assert getattr(module, func).name == STABLE_NAMES[where], (
            "keep the name operators' beat rows and queued messages use")


def test_tracked_runs_name_registered_tasks():
    from health.models import EstimationRun
    from hxportal.celery import app
    from recommendations.models import PolicyPrediction
    from simulation.models import SimulationRun

    app.loader.import_default_modules()
    for model in (EstimationRun, PolicyPrediction, SimulationRun):
        assert model.task_name in app.tasks, model.task_name


def test_tracked_run_tasks_hand_back_their_run_when_their_process_dies():
    """Each tracked run's task uses the request class that releases the lease of a
    run whose pool process died (else the redelivery waits a whole lease)."""
    from health.models import EstimationRun
    from hxportal.celery import app
    from hxportal.runs import RUN_TASK_REQUEST
    from recommendations.models import PolicyPrediction
    from simulation.models import SimulationRun

    app.loader.import_default_modules()
    for model in (EstimationRun, PolicyPrediction, SimulationRun):
        assert app.tasks[model.task_name].Request == RUN_TASK_REQUEST, model.task_name
