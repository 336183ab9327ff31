"""Jobs and the nodes allocated to them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from allocation.choices import AllocationRole, CommPattern, JobStatus
from hxportal.text import pluralize
from hxportal.validators import no_control_characters


class Job(models.Model):
    name = models.CharField(max_length=128, validators=[no_control_characters])
    external_id = models.CharField(max_length=64, blank=True, default="",
                                   help_text="e.g. the Slurm job id")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                              related_name="jobs")
    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="jobs")
    node_count = models.PositiveIntegerField()
    pattern = models.CharField(max_length=24, choices=CommPattern.choices,
                               default=CommPattern.UNKNOWN)
    t_cmpt = models.FloatField(null=True, blank=True, help_text="Compute time (s).")
    t_comm = models.FloatField(null=True, blank=True, help_text="Communication time (s).")
    wall_time = models.FloatField(null=True, blank=True, help_text="Wall time (s).")
    status = models.CharField(max_length=16, choices=JobStatus.choices,
                              default=JobStatus.PENDING, db_index=True)
    policy = models.CharField(max_length=32, blank=True, default="")
    seed = models.BigIntegerField(null=True, blank=True)
    properties = models.JSONField(null=True, blank=True,
                                  help_text="Partition properties at allocation time.")
    actual_runtime = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    allocated_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["machine", "status"], name="job_machine_status")]

    def __str__(self) -> str:
        return f"{self.name} ({pluralize(self.node_count, 'node')})"

    def get_absolute_url(self) -> str:
        return reverse("allocation:job_detail", args=[self.pk])



class Allocation(models.Model):
    """A node held by a job; at most one active (unreleased) row per node."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="allocations")
    node = models.ForeignKey("allocation.Node", on_delete=models.CASCADE,
                             related_name="allocations")
    role = models.CharField(max_length=16, choices=AllocationRole.choices,
                            default=AllocationRole.PRIMARY)
    rank = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job_id", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["node"], condition=Q(released_at__isnull=True),
                                    name="allocation_one_active_per_node"),
        ]
        indexes = [models.Index(fields=["job", "role"], name="allocation_job_role")]

    def __str__(self) -> str:
        return f"{self.node_id} -> job {self.job_id} ({self.role})"
