"""Celery tasks carry explicit, stable names.

Beat schedules, tracked-run rows (``task_name``) and messages already queued
name a task by its string; an explicit ``name=`` keeps that string when a
module moves. Parsed from source: an implicit name would equal the module path
today and pass any runtime check.
"""

from __future__ import annotations

import ast
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


def test_task_modules_exist():
    assert {p.parent.name for p in TASK_MODULES} >= {"allocation", "simulation"}


@pytest.mark.parametrize("path", TASK_MODULES, ids=lambda p: p.parent.name)
def test_every_task_has_an_explicit_name(path):
    tasks = _task_decorators(path)
    assert tasks, f"{path} defines no task"
    for func, deco in tasks:
        names = [k.value.value for k in deco.keywords
                 if k.arg == "name" and isinstance(k.value, ast.Constant)]
        assert names, f"{path.parent.name}.tasks.{func} has no explicit name="
        assert names[0] == f"{path.parent.name}.tasks.{func}", (
            "keep the name operators' beat rows and queued messages use")


def test_tracked_runs_name_registered_tasks():
    from allocation.models import EstimationRun, PolicyPrediction
    from hxportal.celery import app
    from simulation.models import SimulationRun

    app.loader.import_default_modules()
    for model in (EstimationRun, PolicyPrediction, SimulationRun):
        assert model.task_name in app.tasks, model.task_name
