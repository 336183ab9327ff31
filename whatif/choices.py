"""Named choices of the what-if app."""

from django.db import models


class WorkloadFormat(models.TextChoices):
    SWF = "swf", "Standard Workload Format"
    SACCT = "sacct", "sacct --parsable2 --allocations"
    HISTORY = "history", "The portal's synced job history"
    SYNTHETIC = "synthetic", "Synthetic (Lublin & Feitelson 2003)"


class StudyStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed (some runs)"
    CANCELLED = "cancelled", "Cancelled"
