"""The Prometheus collector: readings in, metric families out.

Every family is built from what the database holds at scrape time (and the broker's
queue lengths), never from counters kept in a process, so every web process answers
the same and nothing is lost when one restarts. Names and labels are documented in
docs/operations.md ("Metrics").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from metrics.readings import Readings


def _gauge(name: str, doc: str, labels: tuple[str, ...] = ("machine",),
           unit: str = "") -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=list(labels), unit=unit)


class PortalCollector(Collector):
    """Reads the portal's state once per scrape through ``read`` (a callable returning
    :class:`Readings`) and yields its families."""

    def __init__(self, read: Callable[[], Readings]) -> None:
        self._read = read

    def describe(self) -> list[Metric]:
        """Nothing: registering must not read the database (the registry would call
        :meth:`collect` to learn the names)."""
        return []

    def collect(self) -> Iterator[Metric]:
        readings = self._read()
        yield from occupancy(readings)
        yield from node_health(readings)
        yield from estimates(readings)
        yield from recommendations(readings)
        yield from simulations(readings)
        yield from queues(readings)
        yield from slurm(readings)


def occupancy(readings: Readings) -> Iterator[Metric]:
    nodes = _gauge("hx_nodes", "Nodes by portal state.", ("machine", "state"))
    allocated = _gauge("hx_nodes_allocated", "Nodes held by a job (active allocations).")
    free = _gauge("hx_nodes_free", "Up nodes held by no job.")
    switches = _gauge("hx_switches", "Switches of the machine.")
    whole = _gauge("hx_switches_whole_free",
                   "Switches whose nodes are all up and free (a whole switch for a job).")
    for m in readings.machines:
        states = dict.fromkeys(readings.node_states, 0) | m.nodes_by_state
        for state, count in sorted(states.items()):
            nodes.add_metric([m.machine, state], count)
        allocated.add_metric([m.machine], m.allocated)
        free.add_metric([m.machine], m.free)
        switches.add_metric([m.machine], m.switches)
        whole.add_metric([m.machine], m.whole_free_switches)
    yield from (nodes, allocated, free, switches, whole)


def node_health(readings: Readings) -> Iterator[Metric]:
    candidates = _gauge("hx_drain_candidates",
                        "Nodes the drain rule flags (persistently abnormal), any state.")
    up = _gauge("hx_drain_candidates_up",
                "Drain candidates still up (not drained or down yet): an operator's call.")
    watch = _gauge("hx_watch_nodes",
                   "Nodes with abnormal runs that are not drain candidates (yet).")
    runs = _gauge("hx_health_node_runs", "Node-runs of the benchmark the snapshot classified.",
                  ("machine", "benchmark"))
    age = _gauge("hx_health_snapshot_age_seconds",
                 "Seconds since beat last computed the machine's health snapshot.")
    duration = GaugeMetricFamily(
        "hx_health_snapshot_duration_seconds",
        "How long beat's last refresh of every machine's health snapshot took.")
    for h in readings.health:
        candidates.add_metric([h.machine], h.candidates)
        up.add_metric([h.machine], h.candidates_up)
        watch.add_metric([h.machine], h.watch)
        runs.add_metric([h.machine, h.benchmark], h.node_runs)
        age.add_metric([h.machine], h.age_seconds)
    if readings.health:
        duration.add_metric([], max(h.duration_seconds for h in readings.health))
    yield from (candidates, up, watch, runs, age, duration)


def estimates(readings: Readings) -> Iterator[Metric]:
    labels = ("machine", "benchmark")
    p_abn = _gauge("hx_estimate_p_abn",
                   "Probability that a node-run is abnormal (newest estimate).", labels)
    low = _gauge("hx_estimate_p_abn_lower", "Lower bound of p_abn's confidence interval.",
                 labels)
    high = _gauge("hx_estimate_p_abn_upper", "Upper bound of p_abn's confidence interval.",
                  labels)
    confidence = _gauge("hx_estimate_p_abn_confidence",
                        "Confidence level of the intervals of p_abn and alpha_abn (0.95: 95 %).",
                        labels)
    alpha = _gauge("hx_estimate_alpha_abn",
                   "Slowdown of abnormal node-runs (absent when none was abnormal).", labels)
    alpha_low = _gauge("hx_estimate_alpha_abn_lower",
                       "Lower bound of alpha_abn's confidence interval (same level as p_abn's; "
                       "absent with fewer than two abnormal node-runs).", labels)
    alpha_high = _gauge("hx_estimate_alpha_abn_upper",
                        "Upper bound of alpha_abn's confidence interval.", labels)
    t_bench = _gauge("hx_estimate_t_bench_seconds", "Mean time of normal node-runs.", labels)
    runs = _gauge("hx_estimate_node_runs", "Node-runs in the estimate's window.", labels)
    abnormal = _gauge("hx_estimate_abnormal_node_runs",
                      "Abnormal node-runs in the estimate's window.", labels)
    age = _gauge("hx_estimate_age_seconds", "Seconds since the estimate's window ended.",
                 labels)
    for e in readings.estimates:
        key = [e.machine, e.benchmark]
        p_abn.add_metric(key, e.p_abn)
        low.add_metric(key, e.p_abn_low)
        high.add_metric(key, e.p_abn_high)
        confidence.add_metric(key, e.confidence)
        if e.alpha_abn is not None:
            alpha.add_metric(key, e.alpha_abn)
        if e.alpha_abn_low is not None and e.alpha_abn_high is not None:
            alpha_low.add_metric(key, e.alpha_abn_low)
            alpha_high.add_metric(key, e.alpha_abn_high)
        t_bench.add_metric(key, e.t_bench)
        runs.add_metric(key, e.node_runs)
        abnormal.add_metric(key, e.abnormal_runs)
        age.add_metric(key, e.age_seconds)
    yield from (p_abn, low, high, confidence, alpha, alpha_low, alpha_high, t_bench, runs,
                abnormal, age)


def recommendations(readings: Readings) -> Iterator[Metric]:
    counts = _gauge("hx_recommendations",
                    "Recommendations by status (accepted / all answered: the acceptance).",
                    ("machine", "status"))
    machines = sorted({machine for machine, _ in readings.recommendations}
                      | {m.machine for m in readings.machines})
    for machine in machines:
        for status in readings.recommendation_statuses:
            counts.add_metric([machine, status],
                              readings.recommendations.get((machine, status), 0))
    latency = HistogramMetricFamily(
        "hx_recommendation_latency_seconds",
        "Time from a recommendation's request to its answer (ranking ready).",
        labels=["machine", "method"])
    for r in readings.latency:
        buckets = [(floatToGoString(le), count) for le, count in r.buckets]
        latency.add_metric([r.machine, r.method], [*buckets, ("+Inf", r.count)],
                           sum_value=r.total_seconds)
    yield from (counts, latency)


def simulations(readings: Readings) -> Iterator[Metric]:
    """Simulation runs by status, and those that continue from checkpoints (a large
    machine's calibration points that outlive a task)."""
    if not readings.simulation_statuses:
        return
    runs = GaugeMetricFamily("hx_simulation_runs", "Simulation runs by status.",
                             labels=["status"])
    for status in readings.simulation_statuses:
        runs.add_metric([status], readings.simulation_runs.get(status, 0))
    continuing = GaugeMetricFamily(
        "hx_simulation_runs_continuing",
        "Unfinished simulation runs that continued in a new task from a checkpoint.")
    continuing.add_metric([], readings.simulation_runs_continuing)
    yield from (runs, continuing)


def queues(readings: Readings) -> Iterator[Metric]:
    up = GaugeMetricFamily("hx_celery_broker_up",
                           "1 when the scrape could read the Celery broker, else 0.")
    up.add_metric([], 1 if readings.queues.reachable else 0)
    length = _gauge("hx_celery_queue_length", "Messages waiting in a Celery queue.",
                    ("queue",))
    for name, count in sorted(readings.queues.lengths.items()):
        length.add_metric([name], count)
    yield from (up, length)


def slurm(readings: Readings) -> Iterator[Metric]:
    enabled = _gauge("hx_slurm_sync_enabled", "1 when beat syncs the machine with Slurm.")
    age = _gauge("hx_slurm_sync_age_seconds",
                 "Seconds since the last successful Slurm sync (absent before the first).")
    in_row = _gauge("hx_slurm_sync_consecutive_failures", "Slurm syncs failed in a row.")
    failing = _gauge("hx_slurm_sync_failing", "1 when the last Slurm sync failed.")
    duration = _gauge("hx_slurm_sync_duration_seconds",
                      "How long the last successful Slurm sync took.")
    failures = CounterMetricFamily("hx_slurm_sync_failures", "Failed Slurm syncs.",
                                   labels=["machine"])
    successes = CounterMetricFamily("hx_slurm_sync_successes", "Successful Slurm syncs.",
                                    labels=["machine"])
    for s in readings.slurm:
        enabled.add_metric([s.machine], 1 if s.enabled else 0)
        if s.age_seconds is not None:
            age.add_metric([s.machine], s.age_seconds)
        in_row.add_metric([s.machine], s.consecutive_failures)
        failing.add_metric([s.machine], 1 if s.failing else 0)
        if s.last_duration_seconds is not None:
            duration.add_metric([s.machine], s.last_duration_seconds)
        failures.add_metric([s.machine], s.failures_total)
        successes.add_metric([s.machine], s.syncs_total)
    yield from (enabled, age, in_row, failing, duration, failures, successes)
