"""The collector's output from hand-made readings: names, labels, values, and what is
left out (no alpha without abnormal runs, no sync age before the first success)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from metrics.collector import PortalCollector
from metrics.readings import (
    EstimateReading,
    HealthReading,
    LatencyReading,
    MachineReading,
    QueueReading,
    Readings,
    SlurmReading,
)


def readings(**changes) -> Readings:
    base = dict(
        machines=[MachineReading("hx", {"up": 60, "drained": 3}, allocated=20, free=40,
                                 switches=16, whole_free_switches=7)],
        health=[HealthReading("hx", "stream", age_seconds=42.0, node_runs=192, candidates=2,
                              candidates_up=1, watch=3, duration_seconds=0.25)],
        estimates=[EstimateReading("hx", "stream", p_abn=0.026, p_abn_low=0.0085,
                                   p_abn_high=0.0597, confidence=0.95, alpha_abn=3.53,
                                   alpha_abn_low=3.1, alpha_abn_high=4.0, t_bench=0.0167,
                                   node_runs=192, abnormal_runs=5,
                                   age_seconds=3600.0),
                   EstimateReading("hx", "dgemm", p_abn=0.0, p_abn_low=0.0, p_abn_high=0.04,
                                   confidence=0.95, alpha_abn=None, alpha_abn_low=None,
                                   alpha_abn_high=None, t_bench=1.5,
                                   node_runs=90, abnormal_runs=0, age_seconds=60.0)],
        recommendations={("hx", "ready"): 4, ("hx", "accepted"): 6},
        latency=[LatencyReading("hx", "analytic", buckets=((0.1, 7), (1.0, 9), (30.0, 10)),
                                count=10, total_seconds=12.5)],
        slurm=[SlurmReading("hx", enabled=True, age_seconds=30.0, consecutive_failures=0,
                            failing=False, failures_total=2, syncs_total=40,
                            last_duration_seconds=0.8),
               SlurmReading("lab", enabled=False, age_seconds=None, consecutive_failures=3,
                            failing=True, failures_total=3, syncs_total=0,
                            last_duration_seconds=None)],
        queues=QueueReading(True, {"celery": 5, "hx-interactive": 0, "hx-maintenance": 1}),
        node_states=("up", "drained", "down"),
        recommendation_statuses=("computing", "ready", "accepted", "failed"),
        simulation_runs={"running": 3, "pending": 1400, "succeeded": 37},
        simulation_statuses=("pending", "running", "succeeded", "failed", "cancelled"),
        simulation_runs_continuing=2)
    return Readings(**(base | changes))


def samples(data: Readings) -> dict[tuple[str, tuple], float]:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PortalCollector(lambda: data))
    text = generate_latest(registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_occupancy_lists_every_state_and_the_whole_free_switches():
    got = samples(readings())
    assert got[("hx_nodes", (("machine", "hx"), ("state", "up")))] == 60
    assert got[("hx_nodes", (("machine", "hx"), ("state", "drained")))] == 3
    assert got[("hx_nodes", (("machine", "hx"), ("state", "down")))] == 0  # zero, not absent
    assert got[("hx_nodes_allocated", (("machine", "hx"),))] == 20
    assert got[("hx_nodes_free", (("machine", "hx"),))] == 40
    assert got[("hx_switches_whole_free", (("machine", "hx"),))] == 7
    assert got[("hx_switches", (("machine", "hx"),))] == 16


def test_health_snapshot_and_its_age():
    got = samples(readings())
    assert got[("hx_drain_candidates", (("machine", "hx"),))] == 2
    assert got[("hx_drain_candidates_up", (("machine", "hx"),))] == 1
    assert got[("hx_watch_nodes", (("machine", "hx"),))] == 3
    assert got[("hx_health_node_runs", (("benchmark", "stream"), ("machine", "hx")))] == 192
    assert got[("hx_health_snapshot_age_seconds", (("machine", "hx"),))] == 42
    assert got[("hx_health_snapshot_duration_seconds", ())] == 0.25


def test_estimates_carry_their_intervals_and_alpha_only_when_abnormal_runs_exist():
    got = samples(readings())
    stream = (("benchmark", "stream"), ("machine", "hx"))
    dgemm = (("benchmark", "dgemm"), ("machine", "hx"))
    assert got[("hx_estimate_p_abn", stream)] == 0.026
    assert got[("hx_estimate_p_abn_lower", stream)] == 0.0085
    assert got[("hx_estimate_p_abn_upper", stream)] == 0.0597
    assert got[("hx_estimate_p_abn_confidence", stream)] == 0.95
    assert got[("hx_estimate_alpha_abn", stream)] == 3.53
    assert got[("hx_estimate_alpha_abn_lower", stream)] == 3.1
    assert got[("hx_estimate_alpha_abn_upper", stream)] == 4.0
    assert ("hx_estimate_alpha_abn", dgemm) not in got
    assert ("hx_estimate_alpha_abn_lower", dgemm) not in got
    assert got[("hx_estimate_p_abn_upper", dgemm)] == 0.04
    assert got[("hx_estimate_t_bench_seconds", dgemm)] == 1.5
    assert got[("hx_estimate_abnormal_node_runs", stream)] == 5
    assert got[("hx_estimate_age_seconds", stream)] == 3600


def test_recommendation_counts_by_status_and_latency_histogram():
    got = samples(readings())
    hx = (("machine", "hx"),)
    assert got[("hx_recommendations", (*hx, ("status", "accepted")))] == 6
    assert got[("hx_recommendations", (*hx, ("status", "failed")))] == 0
    labels = (("le", "0.1"), ("machine", "hx"), ("method", "analytic"))
    assert got[("hx_recommendation_latency_seconds_bucket", labels)] == 7
    inf = (("le", "+Inf"), ("machine", "hx"), ("method", "analytic"))
    assert got[("hx_recommendation_latency_seconds_bucket", inf)] == 10
    key = (("machine", "hx"), ("method", "analytic"))
    assert got[("hx_recommendation_latency_seconds_count", key)] == 10
    assert got[("hx_recommendation_latency_seconds_sum", key)] == 12.5


def test_queues_and_an_unreachable_broker():
    got = samples(readings())
    assert got[("hx_celery_broker_up", ())] == 1
    assert got[("hx_celery_queue_length", (("queue", "celery"),))] == 5
    assert got[("hx_celery_queue_length", (("queue", "hx-interactive"),))] == 0
    down = samples(readings(queues=QueueReading(False)))
    assert down[("hx_celery_broker_up", ())] == 0
    assert not [key for key in down if key[0] == "hx_celery_queue_length"]


def test_slurm_sync_age_failures_and_counters():
    got = samples(readings())
    hx, lab = (("machine", "hx"),), (("machine", "lab"),)
    assert got[("hx_slurm_sync_age_seconds", hx)] == 30
    assert ("hx_slurm_sync_age_seconds", lab) not in got  # never succeeded
    assert got[("hx_slurm_sync_failing", lab)] == 1 and got[("hx_slurm_sync_failing", hx)] == 0
    assert got[("hx_slurm_sync_consecutive_failures", lab)] == 3
    assert got[("hx_slurm_sync_failures_total", hx)] == 2
    assert got[("hx_slurm_sync_successes_total", hx)] == 40
    assert got[("hx_slurm_sync_enabled", lab)] == 0
    assert got[("hx_slurm_sync_duration_seconds", hx)] == 0.8


def test_an_empty_portal_still_answers_with_typed_families():
    empty = Readings(machines=[], health=[], estimates=[], recommendations={}, latency=[],
                     slurm=[], queues=QueueReading(True, {"celery": 0}))
    got = samples(empty)
    assert got == {("hx_celery_broker_up", ()): 1,
                   ("hx_celery_queue_length", (("queue", "celery"),)): 0}


def test_openmetrics_output_ends_with_eof_and_types_counters():
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PortalCollector(readings))
    text = generate_openmetrics(registry).decode()
    assert text.endswith("# EOF\n")
    assert "# TYPE hx_slurm_sync_failures counter" in text
    assert 'hx_slurm_sync_failures_total{machine="hx"} 2.0' in text


def test_simulation_runs_by_status_and_those_continuing_from_checkpoints():
    got = samples(readings())
    assert got[("hx_simulation_runs", (("status", "pending"),))] == 1400
    assert got[("hx_simulation_runs", (("status", "running"),))] == 3
    assert got[("hx_simulation_runs", (("status", "cancelled"),))] == 0
    assert got[("hx_simulation_runs_continuing", ())] == 2
