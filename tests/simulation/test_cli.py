"""``manage.py hx_simulate``: one simulation in-process, no database."""

from __future__ import annotations

import gc
import io
import json
import os
import signal
import subprocess
import sys
import time
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


def test_a_checkpointed_run_resumes_from_its_file_and_removes_it(tmp_path):
    """A save as a stopped ``--checkpoint`` run leaves it; the same command resumes from
    it and prints the result of the run that never stopped."""
    from simulation import services
    from simulation.engine import Suspended, simulate
    from simulation.services import checkpoints

    config = {**TINY, "scenario": "interference", "message_packets": 48, "routing": "omniwar"}
    whole = json.loads(run_command(tmp_path, config, "--json"))
    save = tmp_path / "run.ckpt"

    def stop_after_the_first_chunk(cycle, capture):
        checkpoints.write(save, capture(), 1.0, 1.0)
        return True

    with pytest.raises(Suspended):
        simulate(services.parse_config(config), checkpoint=stop_after_the_first_chunk)
    saved_at = checkpoints.read(save).state.cycle
    err = io.StringIO()
    path = tmp_path / "run.json"
    out = io.StringIO()
    call_command("hx_simulate", "--config", str(path), "--json", "--checkpoint", str(save),
                 stdout=out, stderr=err)
    resumed = json.loads(out.getvalue())
    assert f"resuming from {save} at cycle {saved_at:,}" in err.getvalue()
    timing = ("wall_seconds", "cpu_seconds")
    assert {k: v for k, v in resumed.items() if k not in timing} == \
        {k: v for k, v in whole.items() if k not in timing}
    assert resumed["wall_seconds"] > 1.0 and not save.exists()


def test_a_checkpoint_of_another_run_or_no_checkpoint_is_refused(tmp_path):
    save = tmp_path / "run.ckpt"
    save.write_text("not a checkpoint")
    with pytest.raises(CommandError, match="not a checkpoint that can be read"):
        run_command(tmp_path, TINY, "--checkpoint", str(save))
    assert save.exists()  # never overwritten
    with pytest.raises(CommandError, match="must be above 0"):
        run_command(tmp_path, TINY, "--checkpoint", str(save), "--checkpoint-seconds", "0")
    from simulation import services
    from simulation.engine import Suspended, simulate
    from simulation.services import checkpoints

    other = tmp_path / "other.ckpt"

    def stop(cycle, capture):
        checkpoints.write(other, capture(), 0.0, 0.0)
        return True

    with pytest.raises(Suspended):
        simulate(services.parse_config({**TINY, "seed": 3, "message_packets": 48}),
                 checkpoint=stop)
    with pytest.raises(CommandError, match=r"other\.ckpt: the checkpoint is of another run"):
        run_command(tmp_path, {**TINY, "message_packets": 48}, "--checkpoint", str(other))
    assert other.exists()


def _hx_simulate(root: Path, env: dict, path: Path, save: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(root / "manage.py"), "hx_simulate", "--config",
                             str(path), "--json", "--checkpoint", str(save)], cwd=root, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_checkpointed_run_stopped_by_a_signal_saves_and_the_same_command_goes_on(
        tmp_path, stop):
    """Ctrl+C (or SIGTERM) to a ``--checkpoint`` run: it saves after its chunk, says where
    and exits with 128 + the signal; the same command resumes from the save and prints
    the result of the run that never stopped."""
    config = {"ranks": 512, "pattern": "uniform", "rate": 0.8, "max_cycles": 160_000}
    whole = json.loads(run_command(tmp_path, config, "--json"))
    path, save = tmp_path / "run.json", tmp_path / "run.ckpt"
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="hxportal.settings.local",
               HX_SIM_CHECKPOINT_SECONDS="3600")
    first = _hx_simulate(root, env, path, save)
    time.sleep(3)  # past the start-up (about 1 s), into the run (about 5 s)
    first.send_signal(stop)
    out, err = first.communicate(timeout=120)
    assert first.returncode == 128 + stop, (first.returncode, err[-2000:])
    assert f"{signal.Signals(stop).name}: saving at the end of this chunk" in err, err
    assert f"its state is in {save}: run the same command to go on" in err and not out
    saved_at = int(err.split("stopped at cycle ")[1].split(";")[0].replace(",", ""))
    assert 0 < saved_at < config["max_cycles"] and save.exists()
    second = _hx_simulate(root, env, path, save)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err[-2000:]
    assert f"resuming from {save} at cycle {saved_at:,}" in err
    timing = ("wall_seconds", "cpu_seconds")
    assert {k: v for k, v in json.loads(out).items() if k not in timing} == \
        {k: v for k, v in whole.items() if k not in timing}
    assert not save.exists()
