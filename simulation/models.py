"""Simulation runs (tracked rows) and sweeps (products of parameter lists)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from hxportal.models import RunStatus, TrackedRun
from simulation.choices import RunOrigin, SweepStatus

__all__ = ["RunOrigin", "SimulationRun", "Sweep", "SweepStatus"]


class Sweep(models.Model):
    """A product of parameter lists over a base configuration, one run per point."""

    name = models.CharField(max_length=128)
    base = models.JSONField(default=dict, blank=True,
                            help_text="Configuration shared by every point.")
    parameters = models.JSONField(default=dict, blank=True,
                                  help_text="Config key -> list of values (the product).")
    preset = models.CharField(max_length=32, blank=True, default="",
                              help_text="Name of the preset that defined the runs, if any.")
    run_count = models.PositiveIntegerField(default=0)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"sweep {self.pk} {self.name}"

    def get_absolute_url(self) -> str:
        return reverse("simulation:sweep_detail", args=[self.pk])

    @staticmethod
    def derive_status(counts: dict[str, int]) -> str:
        """Status from the number of runs per run status.

        >>> str(Sweep.derive_status({"succeeded": 3, "running": 1}))
        'running'
        >>> str(Sweep.derive_status({"succeeded": 3, "failed": 1}))
        'failed'
        """
        total = sum(counts.values())
        if total == 0:
            return SweepStatus.EMPTY
        pending = counts.get(RunStatus.PENDING, 0)
        running = counts.get(RunStatus.RUNNING, 0)
        if pending == total:
            return SweepStatus.PENDING
        if pending or running:
            return SweepStatus.RUNNING
        if counts.get(RunStatus.SUCCEEDED, 0) == total:
            return SweepStatus.SUCCEEDED
        if counts.get(RunStatus.CANCELLED, 0) == total:
            return SweepStatus.CANCELLED
        return SweepStatus.FAILED


class SimulationRun(TrackedRun):
    """One simulation: a validated engine configuration, run on a worker."""

    task_name = "simulation.tasks.run_simulation"

    config = models.JSONField(help_text="Full engine configuration (SimConfig.to_dict()).")
    engine_version = models.CharField(max_length=16)
    config_hash = models.CharField(max_length=64, db_index=True,
                                   help_text="sha256 of the canonical config, partitions "
                                             "and engine version.")
    sweep = models.ForeignKey(Sweep, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="runs")
    machine = models.ForeignKey("allocation.Machine", null=True, blank=True,
                                on_delete=models.SET_NULL, related_name="+",
                                help_text="Machine whose free nodes gave the partitions.")
    summary = models.JSONField(default=dict, blank=True,
                               help_text="Headline figures of the result (lists and charts).")
    wall_seconds = models.FloatField(null=True, blank=True,
                                     help_text="Wall time of simulate() on the worker.")
    origin = models.CharField(max_length=16, choices=RunOrigin.choices,
                              default=RunOrigin.SUBMITTED, db_index=True,
                              help_text="Who needed the run: submitted (a person or sweep), "
                                        "a recommendation's prediction, a calibration.")

    class Meta(TrackedRun.Meta):
        indexes = [
            models.Index(fields=["sweep", "status"], name="simrun_sweep_status"),
            models.Index(fields=["config_hash", "engine_version", "status"],
                         name="simrun_stored_result"),
        ]

    def __str__(self) -> str:
        return f"simulation {self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("simulation:run_detail", args=[self.pk])
