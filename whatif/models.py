"""A what-if study (the workload and the scenarios) and its runs, one per scenario and seed."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from hxportal.models import RunStatus, TrackedRun
from whatif import constants
from whatif.choices import StudyStatus, WorkloadFormat

__all__ = ["WhatIfRun", "WhatIfStudy"]


class WhatIfStudy(models.Model):
    """One workload replayed under several policies and spare rules."""

    name = models.CharField(max_length=128)
    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="whatif_studies")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    source = models.CharField(max_length=16, choices=WorkloadFormat.choices)
    workload = models.JSONField(default=dict, blank=True,
                                help_text="The jobs as columns (id, submit, start, end, "
                                          "nodes, timelimit, pattern).")
    workload_info = models.JSONField(default=dict, blank=True,
                                     help_text="Jobs, left out, skipped by reason, header.")
    policies = models.JSONField(default=list)
    spares = models.JSONField(default=list, help_text="Spare rules: none, N or recommended.")
    release = models.BooleanField(default=True, help_text="Dropped spares go back after "
                                                          "the benchmark.")
    seeds = models.PositiveIntegerField(default=1)
    ideal = models.BooleanField(default=False)
    model = models.JSONField(default=dict, blank=True,
                             help_text="Run-time model parameters and their source.")
    run_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"what-if {self.pk} {self.name}"

    def get_absolute_url(self) -> str:
        return reverse("whatif:study_detail", args=[self.pk])

    @staticmethod
    def derive_status(counts: dict[str, int]) -> str:
        """Status from the number of runs per run status.

        >>> str(WhatIfStudy.derive_status({"succeeded": 3, "running": 1}))
        'running'
        """
        total = sum(counts.values())
        done = counts.get(RunStatus.SUCCEEDED, 0)
        if total and counts.get(RunStatus.PENDING, 0) == total:
            return StudyStatus.PENDING
        if counts.get(RunStatus.PENDING, 0) or counts.get(RunStatus.RUNNING, 0):
            return StudyStatus.RUNNING
        if done == total:
            return StudyStatus.SUCCEEDED
        if counts.get(RunStatus.CANCELLED, 0) == total:
            return StudyStatus.CANCELLED
        return StudyStatus.FAILED


class WhatIfRun(TrackedRun):
    """One scenario (policy x spare rule) and seed of a study."""

    task_name = constants.RUN_SCENARIO_TASK

    study = models.ForeignKey(WhatIfStudy, on_delete=models.CASCADE, related_name="runs")
    policy = models.CharField(max_length=32)
    spares = models.CharField(max_length=16)
    jobs = models.JSONField(null=True, blank=True,
                            help_text="The replayed jobs (kept apart from the result so "
                                      "that pages read the figures without them).")

    class Meta(TrackedRun.Meta):
        constraints = [models.UniqueConstraint(fields=["study", "policy", "spares", "seed"],
                                               name="whatif_run_one_per_scenario_seed")]

    def __str__(self) -> str:
        return f"{self.study_id}: {self.policy} / {self.spares} / seed {self.seed}"
