"""Long runs in slices: a run saves its state, continues in a new task from it, and ends
with the result of one uninterrupted simulation; checkpoints of other runs, damaged
ones and missing ones start it over; ended runs leave no file behind."""

from __future__ import annotations

import numpy as np
import pytest

from hxportal import handover
from hxportal.models import RunStatus
from simulation import services
from simulation.engine import SimConfig, simulate
from simulation.models import SimulationRun
from simulation.services import checkpoints
from simulation.services.runs import stored_partitions

pytestmark = pytest.mark.django_db

#: About ten chunks of the loop on a 4 x 4 machine beside full-rate background.
SLICED = {"sides": [4, 4], "concentration": 4, "ranks": 16, "pattern": "all2all",
          "policy": "diagonal", "scenario": "interference", "routing": "omniwar",
          "message_packets": 48, "max_cycles": 200_000}
TIMING = ("wall_seconds", "cpu_seconds")


@pytest.fixture
def checkpointing(settings, tmp_path):
    """Checkpoints under ``tmp_path``; every chunk's end saves and ends the task."""
    settings.HX_CHECKPOINT_DIR = tmp_path / "checkpoints"
    settings.HX_SIM_CHECKPOINT_SECONDS = 3600
    settings.HX_SIM_SLICE_SECONDS = 1e-9
    return settings


def _uninterrupted(run: SimulationRun) -> dict:
    cfg = SimConfig.from_dict(run.config)
    return simulate(cfg, stored_partitions(run.parameters)).as_dict()


def _without_timing(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in TIMING}


def _run_to_the_end(run: SimulationRun, tasks: int = 200) -> list[str | None]:
    statuses = []
    for _ in range(tasks):
        statuses.append(services.execute_run(run.pk))
        if statuses[-1] != RunStatus.PENDING:
            return statuses
    raise AssertionError(f"still running after {tasks} tasks")


def test_a_run_in_slices_ends_as_one_uninterrupted_run(checkpointing, users, client_for, api,
                                                       django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as sent:
        run = services.start_run(SLICED, user=users["operator"])
        assert services.execute_run(run.pk) == RunStatus.PENDING
    run.refresh_from_db()
    first_start = run.started_at
    assert run.status == RunStatus.PENDING and run.continued == 1 and run.attempts == 0
    assert run.sent_at is None and len(sent) == 2  # the first message, and the next slice's
    assert checkpoints.path_for(run.pk).exists()
    assert 0 < run.progress < 1
    statuses = _run_to_the_end(run)
    run.refresh_from_db()
    assert statuses[-1] == RunStatus.SUCCEEDED and len(statuses) >= 3
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 1
    assert run.continued == len(statuses)  # one more than the tasks after the first
    assert run.started_at == first_start and run.progress == 1.0
    assert _without_timing(run.result) == _uninterrupted(run)
    assert run.result["wall_seconds"] > 0 and run.wall_seconds == run.result["wall_seconds"]
    log = "\n".join(run.log)
    assert log.count("continues in a new task from its checkpoint at cycle") == run.continued
    assert log.count("resuming from its checkpoint at cycle") == run.continued
    assert log.count("done in") == 1
    assert not checkpoints.path_for(run.pk).exists()
    page = client_for("viewer").get(f"/simulation/runs/{run.pk}/").content.decode()
    assert f"{run.continued} tasks continued from checkpoints" in page
    assert api("viewer").get(f"/api/v1/simulation-runs/{run.pk}/").json()["continued"] \
        == run.continued


def test_saves_between_slices_do_not_stop_the_task(checkpointing):
    checkpointing.HX_SIM_SLICE_SECONDS = 0
    checkpointing.HX_SIM_CHECKPOINT_SECONDS = 1e-9
    run = services.start_run(SLICED)
    assert services.execute_run(run.pk) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.continued == 0 and sum("checkpoint at cycle" in line for line in run.log) >= 3
    assert _without_timing(run.result) == _uninterrupted(run)
    assert not checkpoints.path_for(run.pk).exists()


def _finish_in_one_task(checkpointing, run: SimulationRun, log_says: str) -> None:
    """Slices off, the next task runs ``run`` to its end: it logs ``log_says`` and ends
    with one uninterrupted simulation's result."""
    checkpointing.HX_SIM_SLICE_SECONDS = 0
    assert services.execute_run(run.pk) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert any(log_says in line for line in run.log), run.log
    assert _without_timing(run.result) == _uninterrupted(run)


def test_another_runs_checkpoint_starts_the_run_over(checkpointing):
    other = services.start_run({**SLICED, "seed": 9})
    assert services.execute_run(other.pk) == RunStatus.PENDING
    run = services.start_run(SLICED)
    checkpoints.path_for(other.pk).rename(checkpoints.path_for(run.pk))
    _finish_in_one_task(checkpointing, run, "not usable (the checkpoint is of another run")


def test_a_damaged_checkpoint_is_ignored(checkpointing):
    run = services.start_run(SLICED)
    assert services.execute_run(run.pk) == RunStatus.PENDING
    path = checkpoints.path_for(run.pk)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert checkpoints.read(path) is None
    _finish_in_one_task(checkpointing, run, "cannot be read: starting over")


def test_a_continuation_without_its_checkpoint_runs_to_its_end_in_one_task(checkpointing):
    run = services.start_run(SLICED)
    assert services.execute_run(run.pk) == RunStatus.PENDING
    checkpoints.path_for(run.pk).unlink()  # another host's disk
    assert services.execute_run(run.pk) == RunStatus.SUCCEEDED  # slices are off for it
    run.refresh_from_db()
    assert run.continued == 1 and _without_timing(run.result) == _uninterrupted(run)
    assert any("must be shared by the workers): starting over, in one task" in line
               for line in run.log)


def test_a_failed_or_cancelled_run_leaves_no_checkpoint(checkpointing, monkeypatch):
    run = services.start_run(SLICED)
    assert services.execute_run(run.pk) == RunStatus.PENDING
    services.cancel_run(run)
    assert services.execute_run(run.pk) is None
    assert checkpoints.path_for(run.pk).exists()  # no task ran: the next run's start prunes it
    failing = services.start_run({**SLICED, "seed": 4})

    def broken(*args, **kwargs):
        raise RuntimeError("packet conservation violated")

    assert services.execute_run(failing.pk) == RunStatus.PENDING
    from simulation.services import runs as simulation_runs

    monkeypatch.setattr(simulation_runs, "simulate", broken)
    assert services.execute_run(failing.pk) == RunStatus.FAILED
    assert not checkpoints.path_for(run.pk).exists()
    assert not checkpoints.path_for(failing.pk).exists()


def test_prune_keeps_only_the_checkpoints_of_unfinished_runs(checkpointing):
    folder = checkpointing.HX_CHECKPOINT_DIR
    pending = services.start_run(SLICED)
    done = services.start_run({**SLICED, "seed": 2})
    SimulationRun.objects.filter(pk=done.pk).update(status=RunStatus.SUCCEEDED)
    folder.mkdir(parents=True)
    for pk in (pending.pk, done.pk, 999_999):
        checkpoints.path_for(pk).write_bytes(b"x")
    (folder / "notes.txt").write_text("not ours")
    assert checkpoints.prune() == 2
    assert sorted(p.name for p in folder.iterdir()) == [
        "notes.txt", f"simulationrun-{pending.pk}.ckpt"]
    assert checkpoints.prune() == 0


def test_a_checkpoint_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from simulation.engine import RunState

    path = tmp_path / "simulationrun-1.ckpt"
    arrays = {"pool.st": np.arange(5), "state.credits": np.ones((3, 2), np.int32),
              "ranks.act": np.zeros(0, np.int64), "pool.rng": np.array([7], np.uint64)}
    checkpoints.write(path, RunState(7, "f" * 64, arrays), 1.5, 1.25)
    saved = checkpoints.read(path)
    assert saved.state.cycle == 7 and saved.state.fingerprint == "f" * 64
    assert saved.wall_seconds == 1.5 and saved.cpu_seconds == 1.25
    assert sorted(saved.state.arrays) == sorted(arrays)
    for name, a in arrays.items():
        back = saved.state.arrays[name]
        assert back.dtype == a.dtype and back.shape == a.shape and np.array_equal(back, a)
    assert not saved.state.arrays["pool.st"].flags.writeable  # a map of the file

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoints.os, "fsync", full_disk)
    with pytest.raises(OSError):
        checkpoints.write(path, RunState(9, "f" * 64, arrays), 2.0, 2.0)
    assert checkpoints.read(path).state.cycle == 7  # the last whole save stays
    assert sorted(p.name for p in tmp_path.iterdir()) == ["simulationrun-1.ckpt"]


def test_a_file_that_is_not_a_whole_checkpoint_reads_as_none(tmp_path):
    from simulation.engine import RunState

    path = tmp_path / "simulationrun-1.ckpt"
    checkpoints.write(path, RunState(7, "f" * 64, {"pool.st": np.arange(100)}), 0.0, 0.0)
    whole = path.read_bytes()
    for damaged in (whole[:-8], whole + b"x", b"PK\x03\x04" + whole[4:], b"", whole[:12]):
        path.write_bytes(damaged)
        assert checkpoints.read(path) is None
    assert checkpoints.read(tmp_path / "missing.ckpt") is None


def test_a_folder_that_cannot_take_checkpoints_leaves_the_run_whole(checkpointing, tmp_path):
    """HX_CHECKPOINT_DIR is a file here: no save can be made, so the run never stops
    to continue and ends in its one task, saying why it saved nothing."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("x")
    checkpointing.HX_CHECKPOINT_DIR = blocked
    run = services.start_run(SLICED)
    assert services.execute_run(run.pk) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.continued == 0 and any("no checkpoint at cycle" in line for line in run.log)
    assert _without_timing(run.result) == _uninterrupted(run)
    assert checkpoints.prune() == 0


def test_a_stopping_worker_gets_the_run_saved_and_handed_over_at_the_next_chunk(
        checkpointing, monkeypatch):
    """hxportal.handover's request (the worker got a stop signal): the run saves after
    the chunk it is in and goes back to the queue, slices or not; the next task ends it
    as one uninterrupted run."""
    checkpointing.HX_SIM_SLICE_SECONDS = 0
    monkeypatch.setattr(handover, "_requested", True)
    run = services.start_run(SLICED)
    assert services.execute_run(run.pk) == RunStatus.PENDING
    run.refresh_from_db()
    assert run.continued == 1 and run.log[-1].split(" ", 1)[1].startswith(
        "the worker is stopping: continues in a new task from its checkpoint at cycle "), run.log
    monkeypatch.setattr(handover, "_requested", False)
    _finish_in_one_task(checkpointing, run, "resuming from its checkpoint")


def test_a_stopping_worker_whose_save_is_refused_leaves_the_run_to_the_shutdown(
        checkpointing, monkeypatch, tmp_path):
    """No save, no hand-over: the run goes on (once asked, it does not try at every chunk)."""
    checkpointing.HX_SIM_SLICE_SECONDS = 0
    checkpointing.HX_CHECKPOINT_DIR = tmp_path / "a-file"
    checkpointing.HX_CHECKPOINT_DIR.write_text("not a folder")
    monkeypatch.setattr(handover, "_requested", True)
    run = services.start_run(SLICED)
    assert services.execute_run(run.pk) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert sum("no checkpoint at cycle" in line for line in run.log) == 1, run.log
