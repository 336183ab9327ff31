"""Jobs and the nodes allocated to them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from allocation.choices import AllocationRole, CommPattern, JobSource, JobStatus
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
    created_at = models.DateTimeField(default=timezone.now,
                                      help_text="Submitted (for a Slurm job: Slurm's submit time).")
    allocated_at = models.DateTimeField(null=True, blank=True,
                                        help_text="Nodes allocated (a Slurm job: its start).")
    finished_at = models.DateTimeField(null=True, blank=True,
                                       help_text="Nodes released (a Slurm job: its end).")
    # Provenance of jobs that Slurm knows (read by the sync, or submitted by the portal).
    source = models.CharField(max_length=8, choices=JobSource.choices,
                              default=JobSource.PORTAL)
    slurm_job_id = models.PositiveBigIntegerField(null=True, blank=True)
    slurm_user = models.CharField(max_length=64, blank=True, default="")
    slurm_state = models.CharField(max_length=24, blank=True, default="",
                                   help_text="Slurm's own job state, e.g. TIMEOUT.")
    slurm_partition = models.CharField(max_length=64, blank=True, default="")
    exit_code = models.IntegerField(null=True, blank=True,
                                    help_text="The batch script's exit code (Slurm jobs).")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["machine", "status"], name="job_machine_status"),
                   models.Index(fields=["machine", "finished_at"], name="job_machine_finished")]
        constraints = [models.UniqueConstraint(
            fields=["machine", "slurm_job_id"], condition=Q(slurm_job_id__isnull=False),
            name="job_one_per_slurm_id")]

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
