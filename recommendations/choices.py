"""The recommendations app's enumerations (stored values and their labels)."""

from __future__ import annotations

from django.db import models


class RecommendationStatus(models.TextChoices):
    COMPUTING = "computing", "Computing"
    READY = "ready", "Ready"
    ACCEPTED = "accepted", "Accepted"
    FAILED = "failed", "Failed"


class RecommendationMethod(models.TextChoices):
    SIMULATION = "simulation", "Simulated on the live occupancy"
    CALIBRATED = "calibrated", "Interpolated from this machine shape's calibration"
    ANALYTIC = "analytic", "Analytic score (partition bandwidth and locality)"


class CalibrationStatus(models.TextChoices):
    """A calibration's life: its runs are simulating, it answers (every run ended and
    some succeeded), or it ended with none answering (failed or cancelled)."""

    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
