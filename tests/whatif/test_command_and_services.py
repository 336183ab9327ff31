"""The hx_whatif command (the contract's JSON) and the study write path."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from hxportal.models import RunStatus
from whatif import services
from whatif.models import WhatIfRun
from whatif.replay import SUMMARY_KEYS

SWF = "\n".join(["; MaxNodes: 64", "; a comment"] + [
    f"{i} {i * 40} 0 {300 + (i * 37) % 900} {1 + (i * 11) % 40} -1 -1 "
    f"{-1 if i % 5 == 0 else 1 + (i * 11) % 40} {1800 if i % 4 else -1} -1 1 -1 -1 -1 -1 -1 -1 -1"
    for i in range(1, 120)] + ["200 5000 0 60 100 -1 -1 100 600 -1 1 -1 -1 -1 -1 -1 -1 -1"])


def run_cmd(*args):
    out = io.StringIO()
    call_command("hx_whatif", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def swf_file(tmp_path):
    path = tmp_path / "log.swf"
    path.write_text(SWF)
    return str(path)


def test_json_contract(machine, swf_file):
    out = json.loads(run_cmd("m4", "--workload", swf_file, "--format", "swf", "--policy", "row",
                             "--policy", "diagonal", "--spares", "none", "--seeds", "2",
                             "--json"))
    assert [(e["policy"], e["spares"]) for e in out["scenarios"]] == [("row", "none"),
                                                                     ("diagonal", "none")]
    entry = out["scenarios"][0]
    assert set(entry) == {"policy", "spares", "summary", "jobs"}
    assert tuple(entry["summary"]) == SUMMARY_KEYS
    assert set(entry["jobs"][0]) == {"id", "submit", "start", "end", "nodes"}
    assert out["left_out"] == 1  # the 100-node job on a 64-node machine
    assert len(entry["jobs"]) == 119
    first = entry["jobs"][0]
    assert (first["id"], first["submit"], first["nodes"]) == (1, 40, 12)
    fifth = next(j for j in entry["jobs"] if j["id"] == 5)
    assert fifth["nodes"] == 1 + (5 * 11) % 40  # field 5 when field 8 is missing


def test_ideal_replay_keeps_recorded_run_times(machine, swf_file):
    out = json.loads(run_cmd("m4", "--workload", swf_file, "--format", "swf", "--policy",
                             "random_endpoint", "--spares", "2", "--ideal", "--json"))
    jobs = out["scenarios"][0]["jobs"]
    runs = {i: 300 + (i * 37) % 900 for i in range(1, 120)}
    assert all(j["end"] - j["start"] == runs[j["id"]] for j in jobs)
    assert out["scenarios"][0]["summary"]["node_hours_lost_slow"] == 0
    assert out["ideal"] is True


def test_table_and_errors(machine, swf_file, tmp_path):
    assert "row" in run_cmd("m4", "--workload", swf_file, "--format", "swf", "--policy", "row")
    bad = tmp_path / "bad.swf"
    bad.write_text("1 0 0 10 4 -1 -1 4 60 -1 1 -1 -1 -1 -1 -1 -1 -1\n1 x\n")
    with pytest.raises(CommandError, match="line 2: 2 fields, SWF has 18"):
        run_cmd("m4", "--workload", str(bad), "--format", "swf", "--policy", "row")
    with pytest.raises(CommandError, match="no machine"):
        run_cmd("nope", "--format", "synthetic", "--policy", "row")
    with pytest.raises(CommandError, match="spares must be"):
        run_cmd("m4", "--format", "synthetic", "--days", "1", "--policy", "row",
                "--spares", "many")
    with pytest.raises(CommandError, match="needs --workload"):
        run_cmd("m4", "--format", "sacct", "--policy", "row")


def test_history_format_reads_synced_jobs(machine, users):
    with pytest.raises(CommandError, match="no job to replay"):
        run_cmd("m4", "--format", "history", "--policy", "row", "--json")


def run_pending(study) -> int:
    from whatif import tasks

    ids = list(study.runs.filter(status="pending").order_by("id").values_list("id", flat=True))
    for pk in ids:
        tasks.run_scenario.apply(args=[pk])
    return len(ids)


def test_study_runs_one_task_per_scenario_and_seed(machine, users):
    workload = services.synthetic(machine, days=2, load=2.0)
    jobs, info = services.prepare(workload, machine)
    study = services.create_study(machine=machine, jobs=jobs, info=info, source="synthetic",
                                  policies=["row", "diagonal"], spares=["none", "recommended"],
                                  seeds=2, user=users["operator"])
    assert study.runs.count() == 8 and study.run_count == 8
    assert services.progress(study)["status"] == "pending"
    assert run_pending(study) == 8
    # a redelivered message finds the run finished and stores nothing twice
    from whatif import tasks

    first = study.runs.order_by("id").first()
    assert tasks.run_scenario.apply(args=[first.pk]).get() is None
    assert "jobs" not in first.result and len(first.jobs) == len(jobs)  # kept apart
    data = services.results(study)
    assert data["progress"]["status"] == "succeeded"
    assert len(data["scenarios"]) == 4
    assert data["details"][0]["intervals"]["mean_wait_s"]["n"] == 2
    assert set(data["best"]) >= set(SUMMARY_KEYS)
    csv_text = services.export_csv(study)
    assert csv_text.splitlines()[0].startswith("policy,spares,seeds,utilisation,")
    assert len(csv_text.splitlines()) == 5


def test_cancel_leaves_finished_runs(machine, users):
    jobs, info = services.prepare(services.synthetic(machine, days=1), machine)
    study = services.create_study(machine=machine, jobs=jobs, info=info, source="synthetic",
                                  policies=["row"], spares=["none"], seeds=2)
    run = study.runs.order_by("id").first()
    services.execute_run(run.pk)
    assert services.cancel_study(study) == 1
    statuses = sorted(WhatIfRun.objects.filter(study=study).values_list("status", flat=True))
    assert statuses == [RunStatus.CANCELLED, RunStatus.SUCCEEDED]
