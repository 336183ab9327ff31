"""Calibrations: a sweep of prediction-like runs per machine shape, its table built as
runs finish, and recommendations answered from it (method ``calibrated``) when the
live simulations would not fit the deadline; ``analytic`` only while it runs."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from allocation.services import jobs, machines
from recommendations import constants as recommendation_constants
from recommendations import services as recommendations
from recommendations.calibration import CalibrationTable, synthetic_occupancy
from recommendations.models import Calibration, PolicyPrediction, Recommendation
from recommendations.services import calibration as calibration_service
from recommendations.services import predictions
from simulation.models import RunOrigin, SimulationRun
from simulation.services.runs import stored_partitions
from tests.simulation.conftest import run_pending

pytestmark = pytest.mark.django_db

AXES = {"patterns": ["all2all"], "sizes": [8, 16, 32], "loads": [0.5], "seeds": [0]}


@pytest.fixture
def half(users, monkeypatch):
    """A 4x4, c = 4 machine whose 32 held nodes are exactly the grid's synthetic
    occupancy at load 0.5 (so a live prediction can meet a calibration run)."""
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 1)
    machine = machines.create_machine(name="half", sides=[4, 4], concentration=4)
    held = synthetic_occupancy(machine.geometry, 0.5)
    background = jobs.create_job(owner=users["admin"], machine=machine, name="bg",
                                 node_count=held.size, pattern="all2all")
    jobs.allocate_candidate(background, jobs.Candidate(policy="row", seed=0,
                                                       endpoints=tuple(held.tolist())))
    return machine


def calibrate(machine, **axes) -> Calibration:
    calibration, created = recommendations.start_calibration(machine, axes={**AXES, **axes})
    assert created and calibration.sweep_id is None  # its runs come with the prepare task
    calibration = recommendations.prepare_calibration(calibration.pk)
    run_pending(SimulationRun.objects.filter(sweep_id=calibration.sweep_id))
    return recommendations.refresh_calibration(calibration)


def ask(users, machine, **extra) -> Recommendation:
    question = {"node_count": 16, "pattern": "all2all", "t_cmpt": 100.0, "t_comm": 50.0,
                "p_abn": 0.02, "alpha_abn": 3.0, "t_bench": 0.5, **extra}
    rec, _ = recommendations.request_recommendation(user=users["operator"], machine=machine,
                                                    **question)
    return rec


def test_a_calibration_simulates_every_point_once_and_becomes_ready(half):
    calibration = calibrate(half)
    assert calibration.status == "ready" and calibration.finished_at is not None
    assert calibration.points_done == calibration.run_count == 3 * 8  # sizes x policies
    assert calibration.run_seconds > 0
    runs = SimulationRun.objects.filter(sweep_id=calibration.sweep_id)
    assert set(runs.values_list("origin", flat=True)) == {RunOrigin.CALIBRATION}
    # CPU time is recorded beside wall time: a live run's expected cost is the CPU's
    assert all(0 < r.result["cpu_seconds"] <= r.result["wall_seconds"] * 1.5 + 0.05
               for r in runs)
    assert {tuple(sorted(r.parameters["point"])) for r in runs} == {
        ("load", "node_count", "pattern", "policy", "seed")}
    cells = calibration.table["cells"]["all2all"]["0.5"]
    assert set(cells) == {"8", "16", "32"} and len(cells["16"]) == 8
    # A second start while none runs is a new calibration; while one runs, the same.
    again, created = recommendations.start_calibration(half, axes=AXES)
    assert created and again.pk != calibration.pk
    assert recommendations.start_calibration(half)[0].pk == again.pk


def test_a_live_prediction_on_the_calibrated_occupancy_reads_the_calibrations_run(
        users, half):
    """Same occupancy, same job, same seed: the live prediction's configuration is the
    calibration point's, so it is read from the store, and both answers agree."""
    calibration = calibrate(half)
    rec = ask(users, half)
    assert rec.status == "computing" and rec.method == "calibrated"  # until live ones end
    assert rec.calibration_id == calibration.pk
    for prediction in PolicyPrediction.objects.filter(recommendation=rec):
        recommendations.run_prediction(prediction.pk)
    rec.refresh_from_db()
    assert rec.method == "simulation"
    assert not SimulationRun.objects.filter(origin=RunOrigin.PREDICTION,
                                            config__policy="diagonal").exists()
    live = {e["policy"]: e["predicted_cycles"] for e in rec.ranking if "error" not in e}
    assert {e["source"] for e in rec.ranking if "error" not in e} == {"simulation"}
    assert live["diagonal"] == round(rec.inputs["calibrated_cycles"]["diagonal"])


def test_too_large_to_simulate_live_is_answered_calibrated_at_once(users, half, monkeypatch):
    calibration = calibrate(half)
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    rec = ask(users, half, node_count=12)
    assert rec.status == "ready" and rec.method == "calibrated", rec.note
    assert not PolicyPrediction.objects.filter(recommendation=rec).exists()
    assert f"calibration {calibration.pk}" in rec.note and "8-16 nodes" in rec.note
    entries = [e for e in rec.ranking if "error" not in e]
    assert all(e["predicted_cycles"] and e["source"] == "calibrated" for e in entries)
    assert all("From this machine shape's calibration" in e["reason"] for e in entries)
    assert rec.recommended["method"] == "calibrated"


def test_without_a_calibration_the_answer_is_analytic_while_one_starts(
        users, half, monkeypatch, settings):
    settings.HX_CALIBRATE_AUTOMATICALLY = True
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    rec = ask(users, half)
    assert rec.status == "ready" and rec.method == "analytic"
    running = Calibration.objects.get()
    assert running.status == "running"
    assert f"calibration {running.pk} of this machine shape is running (0 of " in rec.note
    running = recommendations.prepare_calibration(running.pk)
    # The all-to-all points come first: once they have run, the same shape answers.
    first = SimulationRun.objects.filter(sweep_id=running.sweep_id,
                                         parameters__point__pattern="all2all")
    run_pending(first)
    # The very same question, asked again within the cache's minutes, is not given
    # the stand-in again, by another user (who would share it) or by the same one
    # (whose repeat would get the same row): the calibration answers it now.
    other, _ = recommendations.request_recommendation(
        user=users["admin"], machine=half, node_count=16, pattern="all2all", t_cmpt=100.0,
        t_comm=50.0, p_abn=0.02, alpha_abn=3.0, t_bench=0.5)
    assert other.method == "calibrated" and other.shared_from_id is None, other.note
    assert "running with" in other.note, other.note
    again = ask(users, half)
    assert again.pk != rec.pk and again.method == "calibrated", again.note
    assert again.shared_from_id == other.pk  # the calibrated answer is reused as any other
    assert ask(users, half).pk == again.pk


def test_the_beat_starts_one_calibration_per_shape_on_this_engine(half, users, settings):
    machines.create_machine(name="twin", sides=[4, 4], concentration=4)
    settings.HX_CALIBRATE_AUTOMATICALLY = False
    assert recommendations.start_missing_calibrations() == []
    settings.HX_CALIBRATE_AUTOMATICALLY = True
    started = recommendations.start_missing_calibrations()
    assert len(started) == 1  # half and twin share a shape
    assert recommendations.start_missing_calibrations() == []


def test_a_calibration_on_another_occupancy_model_is_not_read(half, users, client, settings):
    """Calibrations made on the contiguous machine (before the aged one) stay listed
    with their model, but answer nothing: the shape is calibrated again."""
    settings.HX_CALIBRATE_AUTOMATICALLY = True
    old = calibrate(half)
    Calibration.objects.filter(pk=old.pk).update(occupancy_model="contiguous")
    assert calibration_service.current_calibration(half) is None
    started = recommendations.start_missing_calibrations()
    assert [c.occupancy_model for c in started] == ["aged"]
    client.force_login(users["viewer"])
    listed = client.get("/api/v1/calibrations/", {"occupancy_model": "contiguous"}).json()
    assert [c["id"] for c in listed["results"]] == [old.pk]
    page = client.get(f"/recommendations/calibrations/{old.pk}/").content.decode()
    assert "no longer read" in page and "occupancy contiguous" in page


@pytest.mark.parametrize("axes, field", [
    ({"sizes": [1]}, "sizes"), ({"sizes": [10_000]}, "sizes"), ({"loads": [0.95]}, "loads"),
    ({"patterns": ["nope"]}, "patterns"), ({"policies": ["best"]}, "policies"),
    ({"seeds": [-1]}, "seeds"), ({"sizes": []}, "sizes"), ({"colour": [1]}, "colour"),
    ({"sizes": list(range(2, 70))}, "sizes"), ({"loads": [True]}, "loads"),
])
def test_bad_axes_name_the_field_and_create_nothing(half, axes, field):
    with pytest.raises(ValidationError) as info:
        recommendations.start_calibration(half, axes=axes)
    assert field in info.value.message_dict
    assert not Calibration.objects.exists() and not SimulationRun.objects.exists()


def test_a_repeated_prepare_makes_the_runs_once_and_a_lost_one_is_sent_again(half, monkeypatch):
    calibration, _ = recommendations.start_calibration(half, axes=AXES)
    assert recommendations.calibration_progress(calibration)["prepared"] is False
    sent = []
    monkeypatch.setattr(calibration_service.current_app, "send_task",
                        lambda name, args: sent.append((name, args)))
    Calibration.objects.filter(pk=calibration.pk).update(
        created_at=calibration.created_at - timedelta(hours=1))
    recommendations.refresh_running_calibrations()
    assert sent == [(recommendation_constants.PREPARE_CALIBRATION_TASK, [calibration.pk])]
    first = recommendations.prepare_calibration(calibration.pk)
    again = recommendations.prepare_calibration(calibration.pk)
    assert first.sweep_id == again.sweep_id is not None
    assert SimulationRun.objects.count() == first.run_count == 24


def test_polling_the_started_instance_sees_the_runs_the_prepare_task_made(half):
    """A caller keeps the object start_calibration returned while a worker prepares
    and runs the calibration: refreshing it must find the sweep, then the result."""
    started, _ = recommendations.start_calibration(half, axes=AXES)
    prepared = recommendations.prepare_calibration(started.pk)  # as the worker does
    run_pending(SimulationRun.objects.filter(sweep_id=prepared.sweep_id))
    assert started.sweep_id is None
    polled = recommendations.refresh_calibration(started)
    assert polled.sweep_id == prepared.sweep_id
    assert polled.status == "ready" and polled.points_done == 24
    assert recommendations.calibration_progress(polled)["done"] == 24


def test_cancelling_before_the_runs_exist(half):
    calibration, _ = recommendations.start_calibration(half, axes=AXES)
    calibration = recommendations.cancel_calibration(calibration)
    assert calibration.status == "cancelled"
    assert recommendations.prepare_calibration(calibration.pk).sweep_id is None
    assert not SimulationRun.objects.exists()


def test_cancelling_keeps_what_finished(half):
    calibration, _ = recommendations.start_calibration(half, axes=AXES)
    calibration = recommendations.prepare_calibration(calibration.pk)
    first = SimulationRun.objects.filter(sweep_id=calibration.sweep_id).order_by("id")[:4]
    run_pending(SimulationRun.objects.filter(pk__in=[r.pk for r in first]))
    calibration = recommendations.cancel_calibration(calibration)
    assert calibration.status == "ready" and calibration.points_done == 4
    assert calibration_service.current_calibration(half).pk == calibration.pk


def test_the_issues_large_machine_is_not_simulated_live_but_calibrated(users, settings):
    """16x16, c = 16, half held by eight 256-node jobs, a 512-node all-to-all: the
    live simulations are expected to take far longer than the deadline on 2 processes,
    so the answer comes at once (analytic while the shape's calibration, started now,
    has no result), and that calibration's points are the live prediction's runs."""
    settings.HX_CALIBRATE_AUTOMATICALLY = True
    big = machines.create_machine(name="big", sides=[16, 16], concentration=16)
    for i in range(8):
        jobs.submit_job(owner=users["admin"], machine=big, name=f"bg{i}", node_count=256,
                        pattern="all2all", policy="row")
    rec = ask(users, big, node_count=512)
    assert rec.status == "ready" and rec.method == "analytic"
    assert rec.inputs["expected_live_seconds"] > recommendation_constants.DEADLINE_SECONDS
    assert not PolicyPrediction.objects.filter(recommendation=rec).exists()
    calibration = recommendations.prepare_calibration(Calibration.objects.get().pk)
    assert calibration.grid["sizes"] == [16, 64, 256, 1024, 2048]
    point = SimulationRun.objects.get(
        sweep_id=calibration.sweep_id, parameters__point__node_count=512 // 2,
        parameters__point__load=0.5, parameters__point__policy="diagonal",
        parameters__point__seed=0, parameters__point__pattern="all2all")
    live = recommendations.prediction_config(big, rec, "diagonal", 0)
    assert {k: point.config[k] for k in live if k != "ranks" and k != "message_packets"} \
        == {k: v for k, v in live.items() if k != "ranks" and k != "message_packets"}
    parts = stored_partitions(point.parameters)
    assert parts[0].size == 256 and parts[1].size == 2048


def test_points_the_portal_may_not_simulate_are_left_out_and_said(half, settings):
    """A run over HX_SIM_MAX_BYTES before it starts (here 1 MiB; a 65,536-node
    machine's runs take up to 0.45 GiB before their packet pool grows) is not made;
    the calibration says how many and why, and fails when none is left."""
    settings.HX_SIM_MAX_BYTES = 1 << 20
    calibration, _ = recommendations.start_calibration(half, axes=AXES)
    calibration = recommendations.prepare_calibration(calibration.pk)
    assert calibration.status == "failed" and calibration.run_count == 0
    assert calibration.note.startswith("24 points refused (")
    assert "the run would need" in calibration.note
    assert not SimulationRun.objects.exists()


def test_a_failed_calibration_is_not_restarted_behind_the_operators_back(
        users, half, settings, monkeypatch):
    settings.HX_CALIBRATE_AUTOMATICALLY = True
    settings.HX_SIM_MAX_BYTES = 1 << 20
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    ask(users, half)
    failed = recommendations.prepare_calibration(Calibration.objects.get().pk)
    assert failed.status == "failed"
    rec = ask(users, half, t_cmpt=101.0)
    assert rec.method == "analytic" and f"calibration {failed.pk} of this machine shape " \
        "failed without a result for this job (" in rec.note and "points refused" in rec.note
    assert recommendations.start_missing_calibrations() == []
    assert Calibration.objects.count() == 1


@pytest.mark.parametrize(("processes", "rounds"), [(1, 16), (2, 8), (3, 6), (8, 2), (16, 1),
                                                 (64, 1)])
def test_the_expected_live_time_counts_the_runs_in_rounds_over_the_processes(
        users, half, monkeypatch, settings, processes, rounds):
    """Each (policy, seed) is a task of its own: on P processes the 16 runs of eight
    policies and two seeds take ceil(16 / P) rounds of one run, and no fewer than one."""
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 2)
    settings.HX_PREDICTION_PROCESSES = processes
    rec = ask(users, half, node_count=12)
    assert len(rec.inputs["candidates"]) == 8
    one_run = predictions.expected_run_seconds(rec)
    assert rec.inputs["expected_live_seconds"] == pytest.approx(round(one_run * rounds, 2))


def test_the_expected_run_time_follows_the_kernels_volume_per_rank():
    """Before a calibration, a live run is priced per busy endpoint at the reference
    job's cycles; the all-to-all past 1,024 ranks sends one packet to each peer (4,095
    a rank at 4,096 ranks against 1,008 at 64), so its runs are priced that much
    longer, while kernels of a fixed volume and open-loop traffic are not."""
    def per_endpoint(pattern: str, nodes: int) -> float:
        rec = Recommendation(pattern=pattern, node_count=nodes, inputs={})
        return predictions.expected_run_seconds(rec) / nodes

    reference = (recommendation_constants.EXPECTED_RUN_CYCLES
                 / recommendation_constants.ENDPOINT_CYCLES_PER_SECOND)
    assert per_endpoint("all2all", 64) == pytest.approx(reference)
    assert per_endpoint("all2all", 2048) == pytest.approx(reference * 2047 / 1008)
    assert per_endpoint("all2all", 4096) == pytest.approx(reference * 4095 / 1008)
    assert per_endpoint("allreduce", 4096) == pytest.approx(reference * 2050 / 2016)
    assert per_endpoint("stencil4", 4096) == pytest.approx(reference)
    assert per_endpoint("uniform", 4096) == pytest.approx(reference)


def test_a_machine_more_fragmented_than_the_calibration_says_so(users, half, monkeypatch):
    """Two full-spread jobs hold two endpoints of every switch: no candidate can have
    whole switches, while the calibration's occupancy at the same load gave them; the
    calibrated answer says its ranking may be far off. On the calibration's own
    occupancy it does not."""
    calibrate(half)
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    scattered = machines.create_machine(name="scattered", sides=[4, 4], concentration=4)
    for i in range(2):
        jobs.submit_job(owner=users["admin"], machine=scattered, name=f"spread{i}",
                        node_count=16, pattern="all2all", policy="full_spread")
    rec = ask(users, scattered, node_count=8)
    assert rec.method == "calibrated", rec.note
    assert not any(c["properties"]["switch_locality"] for c in rec.inputs["candidates"]
                   if not c.get("error"))
    assert calibration_service.FRAGMENTED_CAVEAT in rec.note
    own = ask(users, half, node_count=8)
    assert own.method == "calibrated"
    assert calibration_service.FRAGMENTED_CAVEAT not in own.note


def test_the_calibrated_answer_carries_its_spread_and_says_so(users, half, monkeypatch):
    """Two seeds per point: the answer keeps each policy's spread at its grid point,
    as the runs give it, and the note names exactly the policies within it of the
    fastest, read from the runs themselves."""
    calibration = calibrate(half, seeds=[0, 1])
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE", 0.0)
    rec = ask(users, half, node_count=16)
    assert rec.method == "calibrated", rec.note
    runs: dict[str, list[float]] = {}
    for run in SimulationRun.objects.filter(sweep_id=calibration.sweep_id):
        point = run.parameters["point"]
        if point["node_count"] == 16 and run.summary["completed"]:
            runs.setdefault(point["policy"], []).append(run.summary["target_cycles"])
    assert all(len(v) == 2 for v in runs.values()) and len(runs) == 8
    spread = {p: (max(v) - min(v)) / (sum(v) / 2) for p, v in runs.items()}
    assert rec.inputs["calibrated_spread"] == pytest.approx(spread)
    mean = {p: sum(v) / 2 for p, v in runs.items()}
    placed = [c["policy"] for c in rec.inputs["candidates"] if not c.get("error")]
    fastest = min(placed, key=mean.get)
    close = [p for p in placed if p != fastest
             and mean[p] / mean[fastest] - 1 < max(spread[p], spread[fastest])]
    assert ("too close to call" in rec.note) == bool(close)
    assert all(p in rec.note for p in close)
    assert len(rec.note) <= recommendation_constants.NOTE_LENGTH


def expected_close_call(table: CalibrationTable, node_count: int,
                        load: float) -> tuple[dict[str, float], list[str]]:
    """The table's cycles for the job and its close call, read from the table here (not
    by the service under test); asserts it is one that live runs could settle."""
    cycles, _ = table.completion_cycles("all2all", node_count, load)
    spread = table.seed_spread("all2all", node_count, load)
    fastest = min(cycles, key=cycles.get)
    group = [p for p in cycles if p == fastest or cycles[p] / cycles[fastest] - 1
             < max(spread[p], spread[fastest])]
    assert 1 < len(group) < len(cycles)
    return cycles, group


def test_a_close_call_is_settled_live_when_its_runs_fit(users, half, monkeypatch, settings,
                                                        client_for):
    """All eight policies' live runs would not fit the deadline, the close call's do:
    only its policies are simulated live, they are reordered by their live times, and
    the note says so."""
    calibration = calibrate(half, seeds=[0, 1])
    table = CalibrationTable.from_dict(calibration.table)
    cycles, group = expected_close_call(table, 16, 0.5)
    settings.HX_PREDICTION_PROCESSES = 1
    run = table.run_seconds("all2all", 16, 0.5)  # one seed a policy here (the fixture)
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE",
                        run * (len(group) + 0.5) / recommendation_constants.DEADLINE_SECONDS)
    rec = ask(users, half, node_count=16)
    assert rec.status == "computing" and rec.method == "calibrated"
    assert f"simulating {', '.join(sorted(group, key=cycles.get))} live" in rec.note
    assert rec.inputs["expected_live_seconds"] > rec.inputs["close_call_live_seconds"]
    predictions = PolicyPrediction.objects.filter(recommendation=rec)
    assert sorted(predictions.values_list("policy", flat=True)) == sorted(group)
    page = client_for("viewer").get(f"/recommendations/{rec.pk}/").content.decode()
    assert "Simulating the policies the calibration cannot order" in page
    for prediction in predictions:
        recommendations.run_prediction(prediction.pk)
    rec.refresh_from_db()
    assert rec.status == "ready" and rec.method == "simulation"
    assert "settled by live simulation" in rec.note
    entries = {e["policy"]: e for e in rec.ranking if "error" not in e}
    live = {p.policy: p.result["completion_cycles"]
            for p in PolicyPrediction.objects.filter(recommendation=rec)}
    assert {p: e["source"] for p, e in entries.items()} == {
        p: "simulation" if p in group else "calibrated" for p in entries}
    assert all(entries[p]["predicted_cycles"] == live[p] for p in group)
    assert all(("could not order it" in e["reason"]) == (p in group) for p, e in entries.items())
    assert {p for p, e in entries.items() if e.get("settled")} == set(group)
    assert not any("the simulation shows" in e["reason"] for e in entries.values())
    # the close call takes its own calibrated times in its live order; no policy moves
    # among the others (live and calibrated times are not on one scale)
    settled = {**cycles, **dict(zip(sorted(group, key=lambda p: (live[p], p)),
                                    sorted(cycles[p] for p in group), strict=True))}
    default = rec.inputs["default_policy"]
    assert {p: e["relative_comm"] for p, e in entries.items()} == pytest.approx(
        {p: settled[p] / settled[default] for p in entries})


def test_a_table_built_before_seed_spreads_gets_them_from_its_runs(users, half):
    """A ready calibration stored without spreads (as before they were kept) is rebuilt
    once from the same runs on its next read: the same cells, now with spreads."""
    calibration = calibrate(half, seeds=[0, 1])
    built = calibration.table
    assert built["spread"]["all2all"]
    Calibration.objects.filter(pk=calibration.pk).update(
        table={k: v for k, v in built.items() if k != "spread"})
    current = calibration_service.current_calibration(half)
    assert current.pk == calibration.pk and current.table == built
    calibration.refresh_from_db()
    assert calibration.table == built and calibration.status == "ready"


def test_a_close_call_whose_seeds_split_runs_more_seeds_for_its_contenders(
        users, half, monkeypatch, settings):
    """The close call settled live on two seeds each: two of its whole-switch policies
    split (Least-loaded Diagonal faster at seed 0, Rectangular on the mean), so the
    answer runs seed 2 for those two only (the calibration's close call shares
    switches in Full Spread and Random Endpoint, which the rules refuse here), then
    ranks the close call by the three seeds."""
    calibration = calibrate(half, seeds=[0, 1])
    cycles, group = expected_close_call(CalibrationTable.from_dict(calibration.table), 16, 0.5)
    assert {"least_loaded_diagonal", "rectangular"} <= set(group)
    monkeypatch.setattr(django_settings, "HX_PREDICTION_SEEDS", 2)
    settings.HX_PREDICTION_MAX_SEEDS = 3
    settings.HX_PREDICTION_PROCESSES = 1
    run = CalibrationTable.from_dict(calibration.table).run_seconds("all2all", 16, 0.5)
    monkeypatch.setattr(recommendation_constants, "LIVE_DEADLINE_SHARE",
                        run * (2 * len(group) + 0.5) / recommendation_constants.DEADLINE_SECONDS)
    rec = ask(users, half, node_count=16)
    assert rec.method == "calibrated" and rec.inputs["close_call"] == sorted(
        group, key=cycles.get), rec.note
    live = {"least_loaded_diagonal": (1000, 1100, 1300), "rectangular": (1050, 1000, 1000)}

    def finish_pending() -> Recommendation:
        pending = list(rec.predictions.filter(status="pending"))
        now = timezone.now()
        for p in pending:
            done = live.get(p.policy, (5000, 5010))[p.seed]
            PolicyPrediction.objects.filter(pk=p.pk).update(
                status="succeeded", started_at=now - timedelta(milliseconds=1),
                finished_at=now, result={"completion_cycles": done, "completed": True})
        predictions.finish_if_complete(pending[-1])
        return Recommendation.objects.get(pk=rec.pk)

    interim = finish_pending()
    assert interim.status == "computing" and interim.inputs["extra_seeds"] == [2], interim.note
    assert sorted(interim.predictions.filter(seed=2).values_list("policy", flat=True)) == [
        "least_loaded_diagonal", "rectangular"]
    assert "running seed 2 for least_loaded_diagonal and rectangular to settle it" in \
        interim.note
    final = finish_pending()
    assert final.status == "ready" and final.method == "simulation", final.note
    assert "settled by live simulation" in final.note
    assert "seeds 2, run for least_loaded_diagonal and rectangular, settled it" in final.note \
        or "seeds 2, run for least_loaded_diagonal and rectangular, did not settle it" in \
        final.note, final.note
    entries = {e["policy"]: e for e in final.ranking if "error" not in e}
    assert entries["least_loaded_diagonal"]["seed_cycles"] == {"0": 1000, "1": 1100, "2": 1300}
    assert entries["full_spread"]["seed_cycles"] == {"0": 5000, "1": 5010}
    # the close call keeps its calibrated times, in the order of the three seeds' means
    assert entries["rectangular"]["relative_comm"] < entries["least_loaded_diagonal"][
        "relative_comm"]
