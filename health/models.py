"""Benchmark histories, estimation runs and the estimates they store (docs/domain.md section 5)."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from health.constants import BENCHMARK_NAME_RE, DEFAULT_WINDOW_DAYS, RUN_ESTIMATION_TASK
from hxportal.models import TrackedRun

BENCHMARK_NAME_VALIDATOR = RegexValidator(
    BENCHMARK_NAME_RE,
    "Benchmark names are letters, digits, '_', '.', ':', '+' and '-' (at most 64).")


class HealthRound(models.Model):
    """One fleet-wide benchmark round of a machine: nodes benchmarked outside any job
    (docs/domain.md section 5.6). Its results are judged against the round's own
    median, as a job's are against the job's."""

    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="health_rounds")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="health_rounds")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"health round {self.pk} of {self.machine_id}"


class BenchmarkResult(models.Model):
    """One node's benchmark time in one job or one health round (exactly one of the
    two); re-posting a job's benchmark replaces its rows, each round is new.

    ``machine`` repeats ``job.machine`` so the estimation window and the node
    history are one indexed range scan each, without a join through jobs.
    """

    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="benchmark_results")
    job = models.ForeignKey("allocation.Job", on_delete=models.CASCADE, null=True, blank=True,
                            related_name="benchmark_results")
    health_round = models.ForeignKey(HealthRound, on_delete=models.CASCADE, null=True,
                                     blank=True, related_name="results")
    node = models.ForeignKey("allocation.Node", on_delete=models.CASCADE,
                             related_name="benchmark_results")
    benchmark = models.CharField(max_length=64, validators=[BENCHMARK_NAME_VALIDATOR])
    seconds = models.FloatField(help_text="Benchmark time on this node, in seconds (> 0).")
    measured_at = models.DateTimeField(default=timezone.now, db_index=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "allocation_benchmarkresult"  # the table the model had in allocation
        ordering = ["-measured_at", "job_id", "node_id"]
        constraints = [
            models.UniqueConstraint(fields=["job", "node", "benchmark"],
                                    name="benchmark_result_unique_job_node_benchmark"),
            models.UniqueConstraint(fields=["health_round", "node", "benchmark"],
                                    name="benchmark_result_unique_round_node_benchmark"),
            models.CheckConstraint(
                condition=(Q(job__isnull=False, health_round__isnull=True)
                           | Q(job__isnull=True, health_round__isnull=False)),
                name="benchmark_result_job_or_round"),
            models.CheckConstraint(condition=Q(seconds__gt=0),
                                   name="benchmark_result_seconds_positive"),
        ]
        indexes = [
            models.Index(fields=["machine", "benchmark", "measured_at"],
                         name="bench_machine_bench_time"),
            models.Index(fields=["node", "measured_at"], name="bench_node_time"),
        ]

    def __str__(self) -> str:
        return f"{self.benchmark} {self.run_key} node {self.node_id}: {self.seconds:g} s"

    @property
    def run_key(self) -> str:
        """What the node-run belongs to, as evidence cites it: ``job 42`` or ``round 3``."""
        return f"job {self.job_id}" if self.job_id else f"round {self.health_round_id}"


class EstimationRun(TrackedRun):
    """Re-estimate ``p_abn``, ``alpha_abn`` and ``t_bench`` of one machine from a window."""

    task_name = RUN_ESTIMATION_TASK

    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="estimation_runs")
    benchmark = models.CharField(max_length=64, blank=True, default="",
                                 validators=[BENCHMARK_NAME_VALIDATOR],
                                 help_text="Only this benchmark; blank for every benchmark.")
    window_days = models.PositiveIntegerField(default=DEFAULT_WINDOW_DAYS)

    class Meta(TrackedRun.Meta):
        db_table = "allocation_estimationrun"  # the table the model had in allocation
        indexes = [models.Index(fields=["machine", "created_at"], name="estrun_machine_created")]

    def __str__(self) -> str:
        return f"estimation {self.pk} of {self.machine_id} ({self.status})"


class Estimate(models.Model):
    """Model parameters of one machine and benchmark over one window of history."""

    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="estimates")
    benchmark = models.CharField(max_length=64, validators=[BENCHMARK_NAME_VALIDATOR])
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    runs = models.PositiveIntegerField(help_text="Node-runs in the sample.")
    abnormal_runs = models.PositiveIntegerField()
    jobs = models.PositiveIntegerField()
    nodes = models.PositiveIntegerField(default=0)
    t_bench = models.FloatField(help_text="Mean time of normal node-runs (s).")
    alpha_abn = models.FloatField(null=True, blank=True,
                                  help_text="Slowdown of abnormal runs; empty when none.")
    alpha_abn_low = models.FloatField(
        null=True, blank=True,
        help_text="Confidence interval of alpha_abn; empty with fewer than two abnormal runs.")
    alpha_abn_high = models.FloatField(null=True, blank=True)
    p_abn = models.FloatField()
    p_abn_low = models.FloatField()
    p_abn_high = models.FloatField()
    confidence = models.FloatField(default=0.95)
    rule = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    run = models.ForeignKey(EstimationRun, null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="estimates")

    class Meta:
        db_table = "allocation_estimate"  # the table the model had in allocation
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["machine", "benchmark", "created_at"],
                                name="estimate_machine_bench_time")]

    def __str__(self) -> str:
        return f"{self.machine_id}/{self.benchmark}: p_abn={self.p_abn:.4g}"
