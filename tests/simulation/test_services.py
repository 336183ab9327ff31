"""The write path: validation, hashing, runs, reuse, sweeps, exactly-once execution."""

from __future__ import annotations

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.exceptions import ValidationError

from hxportal.errors import ConflictError
from hxportal.models import RunStatus
from simulation import constants, presets, services, tasks
from simulation.models import SimulationRun, Sweep
from simulation.services import runs as simulation_runs
from simulation.services.runs import stored_partitions
from tests.simulation.conftest import run_pending

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("config", "field", "text"), [
    ({"colour": 1}, "colour", "unknown configuration key"),
    ({"ranks": 9999}, "ranks", "exceed the 512 endpoints"),
    ({"routing": "teleport"}, "routing", "must be one of"),
    ({"rate": 0}, "rate", "(0, 1]"),
    ({"sides": "eight"}, "sides", "not a sequence"),
    ({"max_cycles": constants.MAX_CYCLES + 1}, "max_cycles", "on the portal"),
    ({"sides": [64, 64], "concentration": 32, "ranks": 64}, "sides", "at most 65536"),
    ({"policy": "best"}, "policy", "unknown policy"),
])
def test_bad_configs_name_the_field(config, field, text):
    with pytest.raises(ValidationError) as info:
        services.validate_config(config)
    errors = info.value.message_dict
    assert field in errors, errors
    assert text in errors[field][0]


def test_oversized_and_non_object_configs():
    with pytest.raises(ValidationError, match="bytes of JSON"):
        services.validate_config({"seed": 1, "x": "y" * constants.MAX_CONFIG_BYTES})
    with pytest.raises(ValidationError, match="JSON object"):
        services.validate_config([1, 2])


def test_hash_is_canonical_and_versioned(tiny):
    a = services.canonical_config(services.validate_config(tiny))
    b = services.canonical_config(services.validate_config({**tiny, "rate": 1,
                                                            "routing": "min"}))
    assert a == b and isinstance(b["rate"], float)
    assert services.config_hash(a) == services.config_hash(b)
    assert services.config_hash(a) != services.config_hash({**a, "seed": 1})
    assert services.config_hash(a) != services.config_hash(a, engine_version="0.9")
    assert services.config_hash(a) != services.config_hash(a, partitions=[[0, 1]])


def test_a_placement_change_retires_runs_placed_by_the_allocation_core(tiny, monkeypatch):
    """Without explicit partitions the allocation core places the job: a new placement
    version must not reuse the old runs; runs on explicit partitions (a calibration's)
    do not depend on it."""
    from simulation.services import configs

    a = services.canonical_config(services.validate_config(tiny))
    placed, explicit = services.config_hash(a), services.config_hash(a, partitions=[[0, 1]])
    monkeypatch.setattr(configs, "PLACEMENT_VERSION", configs.PLACEMENT_VERSION + 1)
    assert services.config_hash(a) != placed
    assert services.config_hash(a, partitions=[[0, 1]]) == explicit


def test_run_executes_once_and_stores_a_summary(tiny, users, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = services.start_run(tiny, user=users["operator"])
    assert run.status == RunStatus.PENDING and len(callbacks) == 1
    assert run.task_id == f"simulation.simulationrun:{run.pk}"
    assert run.config["ranks"] == 16 and run.config["vcs"] == 4  # defaults spelled out
    assert tasks.run_simulation.apply(args=[run.pk]).get() == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.attempts == 1 and run.progress == 1.0
    assert run.result["makespan_cycles"] > 0 and run.result["completed"] is True
    assert run.result["engine_version"] == run.engine_version
    assert run.wall_seconds is not None and run.wall_seconds >= 0
    assert run.result["wall_seconds"] == run.wall_seconds
    assert run.summary["makespan_cycles"] == run.result["makespan_cycles"]
    assert run.summary["apps"][0]["policy"] == "diagonal"
    assert any("simulating all2all 16 ranks" in line for line in run.log)
    first = run.result
    # A redelivered message for a finished run does nothing.
    assert tasks.run_simulation.apply(args=[run.pk]).get() is None
    run.refresh_from_db()
    assert run.attempts == 1 and run.result == first


def test_identical_run_reuses_the_stored_result(tiny, users):
    first = services.start_run(tiny, user=users["operator"])
    services.execute_run(first.pk)
    second = services.start_run({**tiny, "rate": 1.0}, user=users["admin"])
    assert second.status == RunStatus.SUCCEEDED and second.attempts == 0
    assert second.result["reused_from"] == first.pk
    assert second.summary["reused_from"] == first.pk
    first.refresh_from_db()
    assert {k: v for k, v in second.result.items() if k not in ("reused_from", "reused")} \
        == first.result
    third = services.start_run({**tiny, "seed": 5})
    assert third.status == RunStatus.PENDING


def test_sweep_runs_reuse_at_execution(tiny):
    sweep = services.create_sweep(name="dup", base=tiny, parameters={"seed": [0, 1]})
    assert run_pending(sweep.runs.all()) == 2
    again = services.create_sweep(name="again", base=tiny, parameters={"seed": [1, 2]})
    run_pending(again.runs.all())
    rows = {r["seed"]: r for r in services.sweep_rows(again)}
    original = sweep.runs.get(config__seed=1)
    assert rows[1]["reused_from"] == original.pk and rows[2]["reused_from"] is None
    assert rows[1]["wall_seconds"] == 0.0 and rows[2]["wall_seconds"] > 0
    assert any("reused" in line for line in again.runs.get(config__seed=1).log)


def test_soft_time_limit_fails_the_run_with_timeout(tiny, monkeypatch):
    def slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(simulation_runs, "simulate", slow)
    run = services.start_run(tiny)
    assert services.execute_run(run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and run.error == "timeout"


def test_engine_failure_is_stored(tiny, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("packet conservation violated")

    monkeypatch.setattr(simulation_runs, "simulate", broken)
    run = services.start_run(tiny)
    services.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED and "conservation" in run.error


def test_cancel_and_delete(tiny):
    run = services.start_run(tiny)
    with pytest.raises(ConflictError):
        services.delete_run(run)
    services.cancel_run(run)
    run.refresh_from_db()
    assert run.status == RunStatus.CANCELLED
    assert services.execute_run(run.pk) is None  # a late delivery does nothing
    with pytest.raises(ConflictError):
        services.cancel_run(run)
    services.delete_run(run)
    assert not SimulationRun.objects.filter(pk=run.pk).exists()


def test_machine_gives_the_partitions(machine, tiny):
    run = services.start_run({**tiny, "scenario": "escalation", "replicas": 2,
                              "sides": [9, 9]}, machine=machine)
    parts = [p.tolist() for p in stored_partitions(run.parameters)]
    assert run.config["sides"] == [4, 4] and len(parts) == 2
    assert all(len(p) == 16 for p in parts) and not set(parts[0]) & set(parts[1])
    services.execute_run(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert [a["partition"] for a in run.result["apps"]] == parts
    with pytest.raises(ValidationError) as info:
        services.start_run({**tiny, "ranks": 48, "scenario": "escalation", "replicas": 2},
                           machine=machine)
    assert "machine" in info.value.message_dict or "replicas" in info.value.message_dict


def test_sweep_is_the_product_with_progress_and_status(tiny):
    sweep = services.create_sweep(
        name="grid", base=tiny,
        parameters={"routing": ["min", "omniwar"], "policy": ["row", "diagonal", "random_switch"],
                    "seed": [0, 1]})
    assert sweep.run_count == 12 and sweep.runs.count() == 12
    first = sweep.runs.order_by("id").first()
    assert first.parameters["point"] == {"policy": "row", "routing": "min", "seed": 0}
    progress = services.sweep_progress(sweep)
    assert progress["total"] == 12 and progress["done"] == 0 and progress["status"] == "pending"
    ids = list(sweep.runs.order_by("id").values_list("id", flat=True))
    for pk in ids[:5]:
        services.execute_run(pk)
    progress = services.sweep_progress(sweep)
    assert (progress["done"], progress["status"]) == (5, "running")
    rows = services.sweep_rows(sweep)
    assert len(rows) == 12 and sum(r["makespan_cycles"] is not None for r in rows) == 5
    run_pending(sweep.runs.all())
    assert services.sweep_progress(sweep)["status"] == "succeeded"
    assert set(rows[0]) == set(services.RESULT_COLUMNS)


def test_bad_sweeps_are_refused(tiny):
    cases = [
        ({"colour": ["x"]}, "parameters.colour"),
        ({"seed": []}, "parameters.seed"),
        ({"seed": 3}, "parameters.seed"),
        ({"seed": [1, 1]}, "parameters.seed"),
        ({}, "parameters"),
        ({"seed": list(range(50)), "policy": list(presets.STUDY_POLICIES),
          "routing": ["min", "omniwar", "dor"], "vc_sets": ["shared", "per_partition"]},
         "parameters"),
        ({"ranks": [16, 999]}, "parameters"),
    ]
    for parameters, field in cases:
        with pytest.raises(ValidationError) as info:
            services.create_sweep(name="bad", base=tiny, parameters=parameters)
        assert field in info.value.message_dict, (parameters, info.value.message_dict)
    with pytest.raises(ValidationError) as info:
        services.create_sweep(name="bad", base={**tiny, "nope": 1}, parameters={"seed": [1]})
    assert "base.nope" in info.value.message_dict
    with pytest.raises(ValidationError) as info:
        services.create_sweep(name="", base=tiny, parameters={"seed": [1]})
    assert "name" in info.value.message_dict
    with pytest.raises(ValidationError) as info:
        services.create_sweep(name="bad", base=tiny, parameters={"ranks": [16, 999]})
    assert "point ranks=999: ranks:" in info.value.message_dict["parameters"][0]
    assert not Sweep.objects.exists()


def test_cancel_sweep(tiny):
    sweep = services.create_sweep(name="c", base=tiny, parameters={"seed": [0, 1, 2]})
    services.execute_run(sweep.runs.order_by("id").first().pk)
    with pytest.raises(ConflictError):
        services.delete_sweep(sweep)
    assert services.cancel_sweep(sweep) == 2
    assert services.sweep_progress(sweep)["status"] == "failed"
    services.delete_sweep(sweep)
    assert not SimulationRun.objects.exists()


def test_study_preset_is_valid_and_sized():
    items = presets.study_configs(scale=1)
    assert len(items) == presets.study_size() == 2380
    for _point, config in items:
        services.validate_config(config)
    points = {tuple(sorted(p.items())) for p, _ in items}
    assert len(points) == len(items)
    kinds = {(p["scenario"], p["ranks"]) for p, _ in items}
    assert ("interference", 256) in kinds and ("escalation", 64) in kinds
    assert max(p["replicas"] for p, _ in items if p["ranks"] == 64) == 8
    # scale multiplies the study's volume: 16 one-packet rounds for a 64-rank all2all
    assert presets.study_configs(scale=4)[0][1]["message_packets"] == 4 * 16
    for bad in (0, 65, 1.5, True):
        with pytest.raises(ValueError, match="scale"):
            presets.study_configs(scale=bad)


def test_start_study_creates_one_sweep(users, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        sweep = services.start_study(user=users["operator"], scale=2)
    assert sweep.preset == "study" and sweep.run_count == 2380 == sweep.runs.count()
    assert len(callbacks) == 2380
    volumes = {(run.config["pattern"], run.config["ranks"], run.config["message_packets"])
               for run in sweep.runs.all()}
    assert ("all2all", 64, 2 * 16) in volumes and ("stencil4", 128, 2 * 64) in volumes
    with pytest.raises(ValidationError):
        services.start_study(scale=0)


def test_a_kernels_packets_per_rank_at_the_studys_volume():
    """Every kernel sends about the study's 1,024 packets a rank (the all-reduce's two
    halvings about twice that) up to 1,024 ranks; past it the all-to-all still sends one
    packet to each peer, so its volume grows with the job. Open-loop traffic has none."""
    per_rank = services.study_packets_per_rank
    assert [per_rank("all2all", k) for k in (16, 64, 1024, 2048, 4096)] == [
        960, 1008, 1023, 2047, 4095]
    assert [per_rank("allreduce", k) for k in (64, 4096)] == [2016, 2050]
    assert {per_rank(p, k) for p in ("stencil4", "stencil8", "random_involution")
            for k in (64, 4096)} == {256, 512, 1024}
    assert per_rank("uniform", 4096) is None
