"""The simulation app's enumerations (stored values and their labels)."""

from __future__ import annotations

from django.db import models


class SweepStatus(models.TextChoices):
    """Derived from the sweep's runs (see :meth:`Sweep.derive_status`); never stored."""

    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Finished with failures"
    CANCELLED = "cancelled", "Cancelled"
    EMPTY = "empty", "Empty"


class RunOrigin(models.TextChoices):
    """Why a run exists: a person or sweep submitted it, a recommendation's prediction
    needed it, or a calibration did. Every origin shares the stored results (reuse by
    configuration hash); the runs page lists submitted runs unless asked otherwise."""

    SUBMITTED = "submitted", "Submitted"
    PREDICTION = "prediction", "Prediction"
    CALIBRATION = "calibration", "Calibration"
