"""The layout rules that import-linter cannot see.

import-linter (``pyproject.toml``) checks the app layers and the forbidden
imports, but an import written inside a function is invisible until the
function runs, which is how cycles used to hide here. So no module of the
project imports inside a function, except an ``AppConfig.ready`` (Django's
documented place to connect signal handlers) and the heavy third-party solvers
named in ``LOADED_ON_FIRST_USE``: they cannot close a cycle, and loading them at
start cost every process importing the models 4 % of a whole ``hx_simulate``
(tests/allocation/hyperx/test_start_cost.py).
"""

from __future__ import annotations

import ast
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

from allocation.hyperx import ONLINE_POLICIES
from allocation.hyperx.patterns import PATTERNS

ROOT = Path(__file__).resolve().parents[1]
APPS = ("hxportal", "allocation", "health", "simulation", "recommendations", "dashboard",
        "metrics")
#: Third-party modules a function may import where it uses them (see above).
LOADED_ON_FIRST_USE = frozenset({"scipy.optimize", "scipy.sparse"})
MODULES = sorted(p for app in APPS for p in (ROOT / app).rglob("*.py")
                 if "migrations" not in p.parts)


def _function_level_imports(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if path.name == "apps.py" and func.name == "ready":
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.ImportFrom) and node.module in LOADED_ON_FIRST_USE:
                continue
            if isinstance(node, ast.Import) and {a.name for a in node.names} <= LOADED_ON_FIRST_USE:
                continue
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = ", ".join(a.name for a in node.names)
                found.append(f"{path.relative_to(root)}:{node.lineno} {func.name}: {names}")
    return found


def test_the_scan_sees_every_app():
    assert {p.relative_to(ROOT).parts[0] for p in MODULES} == set(APPS)


@pytest.mark.parametrize("app", APPS)
def test_no_import_inside_a_function(app):
    found = [hit for p in MODULES if p.relative_to(ROOT).parts[0] == app
             for hit in _function_level_imports(p)]
    assert not found, "import at module level (a cycle? move the code, not the import):\n" + \
        "\n".join(found)


def test_only_the_hostlist_module_uses_clustershell():
    """ClusterShell resolves ``@group`` names by running a shell command; only
    ``hxportal/hostlists.py`` may touch it, where the grammar and the no-group
    resolver are."""
    users = [str(p.relative_to(ROOT)) for p in MODULES
             if "ClusterShell" in p.read_text(encoding="utf-8")]
    assert users == ["hxportal/hostlists.py"]


def test_the_scan_finds_a_function_level_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import os\n\n\ndef f():\n    from os import path\n    return path\n")
    assert _function_level_imports(module, tmp_path) == ["m.py:5 f: path"]


def test_the_scan_lets_only_the_named_solvers_load_on_first_use(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    import scipy.sparse as sp\n"
                      "    from scipy.optimize import linprog\n"
                      "    from scipy.stats import beta\n    return sp, linprog, beta\n")
    assert _function_level_imports(module, tmp_path) == ["m.py:4 f: beta"]


def _pre_commit_hooks() -> dict[str, dict]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    return {hook["id"]: {**hook, "repo": repo["repo"], "rev": repo.get("rev")}
            for repo in config["repos"] for hook in repo["hooks"]}


def test_pre_commit_runs_ruff_and_import_linter():
    """The hooks run what ``make lint`` runs, so a commit never surprises CI; ruff at the
    venv's version, or the hook and ``make lint`` would disagree on the rules."""
    hooks = _pre_commit_hooks()
    assert hooks["ruff-check"]["repo"] == "https://github.com/astral-sh/ruff-pre-commit"
    assert hooks["ruff-check"]["rev"] == f"v{version('ruff')}"
    linter = hooks["import-linter"]
    assert (linter["repo"], linter["entry"], linter["language"], linter["pass_filenames"]) == (
        "local", "lint-imports", "system", False)


def _literal_modules(names: set[str]) -> dict[str, set[str]]:
    """For each name, the app modules (outside migrations) spelling it as a string literal."""
    where: dict[str, set[str]] = {name: set() for name in names}
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in where:
                where[node.value].add(path.relative_to(ROOT).as_posix())
    return where


def test_policy_and_kernel_names_are_spelled_in_at_most_two_modules():
    """Each policy and pattern name has one home (the policy registry, the pattern
    vocabulary) and at most one more place that must spell it (a setting's default,
    the engine's default configuration); every other module reads the registries."""
    where = _literal_modules(set(ONLINE_POLICIES) | set(PATTERNS))
    assert where["least_loaded_diagonal"] == {"allocation/hyperx/policies.py"}
    assert where["allreduce"] == {"allocation/hyperx/patterns.py"}
    spread = {name: sorted(modules) for name, modules in where.items() if len(modules) > 2}
    assert not spread, spread

