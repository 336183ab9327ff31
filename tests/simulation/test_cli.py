"""``manage.py hx_simulate``: one simulation in-process, no database."""

from __future__ import annotations

import gc
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.simulation.conftest import TINY


def run_command(tmp_path, config, *args) -> str:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(config))
    out = io.StringIO()
    call_command("hx_simulate", "--config", str(path), *args, stdout=out)
    return out.getvalue()


def test_json_result_has_the_documented_keys(tmp_path):
    config = {**TINY, "scenario": "escalation", "replicas": 2}
    result = json.loads(run_command(tmp_path, config, "--json"))
    assert result["makespan_cycles"] > 0 and result["completed"] is True
    assert len(result["apps"]) == 2
    for app in result["apps"]:
        assert app["policy"] == "diagonal" and len(app["partition"]) == 16
        assert app["completion_cycles"] <= result["makespan_cycles"]
    for key in ("throughput", "latency_mean", "latency_p99", "cycles"):
        assert isinstance(result[key], int | float), key
    assert result["wall_seconds"] > 0 and result["config"]["replicas"] == 2


def test_text_output(tmp_path):
    text = run_command(tmp_path, TINY)
    assert "makespan:" in text and "wall time:" in text and "app 0" in text


@pytest.mark.parametrize(("config", "message"), [
    ({"colour": 1}, "unknown configuration keys: colour"),
    ({**TINY, "ranks": 9999}, "ranks: 9999 ranks exceed the 64 endpoints"),
    ({**TINY, "scenario": "escalation", "replicas": 8}, "replicas:"),
    ([1, 2], "config: must be a JSON object"),
])
def test_bad_config_is_a_command_error_with_the_engine_message(tmp_path, config, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        run_command(tmp_path, config, "--json")


def test_unreadable_or_bad_json(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        call_command("hx_simulate", "--config", str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(CommandError, match="not JSON"):
        call_command("hx_simulate", "--config", str(tmp_path / "bad.json"))


def test_the_whole_process_prints_its_result_and_exits_cleanly(tmp_path):
    """``manage.py`` freezes the heap once the command has run (a faster exit): the
    result must still reach stdout whole and the exit status stay 0."""
    path = tmp_path / "run.json"
    path.write_text(json.dumps(TINY))
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="hxportal.settings.local")
    done = subprocess.run([sys.executable, str(root / "manage.py"), "hx_simulate", "--config",
                           str(path), "--json"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["makespan_cycles"] > 0


def test_manage_freezes_the_heap_after_the_command(monkeypatch, capsys):
    import manage

    monkeypatch.setattr(sys, "argv", ["manage.py", "version"])
    try:
        manage.main()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert capsys.readouterr().out.strip()
