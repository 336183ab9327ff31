"""A machine's link to Slurm (sync settings and health) and the audit of node states."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from allocation.choices import NodeEventSource, NodeState


class SlurmLink(models.Model):
    """How and how well a machine is kept in step with Slurm.

    One row per machine, made by its first sync. ``enabled``: beat syncs it every
    ``interval_seconds``; ``partition``: only this Slurm partition's nodes and jobs
    (blank: every node Slurm has must be the machine's). The rest is the sync's
    own record: its lease (one sync per machine at a time, across workers), when
    it last tried and last succeeded, its last error (one line), counts, and the
    accounting cursor (finished jobs are read from there on).
    """

    machine = models.OneToOneField("allocation.Machine", on_delete=models.CASCADE,
                                   related_name="slurm_link")
    enabled = models.BooleanField(default=False, help_text="Synced by beat on its interval.")
    partition = models.CharField(max_length=64, blank=True, default="")
    interval_seconds = models.PositiveIntegerField(default=60)
    lease_until = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True, default="")
    last_error_at = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    failures_total = models.PositiveIntegerField(default=0)
    syncs_total = models.PositiveIntegerField(default=0)
    last_duration_seconds = models.FloatField(null=True, blank=True)
    last_counts = models.JSONField(default=dict, blank=True)
    history_until = models.DateTimeField(
        null=True, blank=True, help_text="Accounting was read up to here (finished jobs).")

    class Meta:
        ordering = ["machine_id"]

    def __str__(self) -> str:
        return f"Slurm link of {self.machine_id}"


class NodeEvent(models.Model):
    """One change of a node's state: who, why, and whether Slurm carried it out."""

    node = models.ForeignKey("allocation.Node", on_delete=models.CASCADE, related_name="events")
    state = models.CharField(max_length=16, choices=NodeState.choices)
    previous_state = models.CharField(max_length=16, choices=NodeState.choices)
    reason = models.CharField(max_length=255, blank=True, default="")
    source = models.CharField(max_length=8, choices=NodeEventSource.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    in_slurm = models.BooleanField(
        default=False, help_text="Slurm carried it out (or reported it).")
    at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["node", "at"], name="nodeevent_node_at")]

    def __str__(self) -> str:
        return f"{self.node_id}: {self.previous_state} -> {self.state}"
