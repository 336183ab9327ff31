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
    ANALYTIC = "analytic", "Analytic score (partition bandwidth and locality)"
