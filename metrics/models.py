"""The health snapshot: what is too costly to compute on every scrape."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class HealthSnapshot(models.Model):
    """One machine's drain candidates and watch list, as beat last computed them.

    Classifying a month of benchmark runs for every node is too slow for a scrape
    every 15 s, so beat (``hx.metrics.refresh_health_snapshots``) stores the outcome
    here and ``/metrics`` reads it, with its age. Which candidates are still up is
    read live, so a drain shows at the next scrape.
    """

    machine = models.OneToOneField("allocation.Machine", on_delete=models.CASCADE,
                                   related_name="health_snapshot")
    computed_at = models.DateTimeField(default=timezone.now)
    benchmark = models.CharField(max_length=64, blank=True, default="",
                                 help_text="The benchmark classified (the machine's latest).")
    window_days = models.PositiveIntegerField()
    node_runs = models.PositiveIntegerField(default=0)
    candidates = models.JSONField(default=list, blank=True,
                                  help_text="Hostnames of the drain candidates.")
    watch = models.PositiveIntegerField(default=0, help_text="Nodes on the watch list.")
    duration_seconds = models.FloatField(
        default=0.0, help_text="How long the whole fleet's refresh took.")

    class Meta:
        ordering = ["machine_id"]

    def __str__(self) -> str:
        return f"health snapshot of {self.machine_id} at {self.computed_at:%Y-%m-%d %H:%M}"
