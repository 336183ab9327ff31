"""Per-job recommendations (policy + spare count) and their policy predictions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from hxportal.models import TrackedRun
from recommendations.calibration import OCCUPANCY_DESCRIPTIONS
from recommendations.choices import CalibrationStatus, RecommendationMethod, RecommendationStatus
from recommendations.constants import NOTE_LENGTH, PREDICT_POLICY_TASK


class Recommendation(models.Model):
    """What to give a submitted job: every policy ranked, one (policy, N_spare) chosen."""

    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="recommendations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                             related_name="recommendations")
    name = models.CharField(max_length=128, default="job")
    external_id = models.CharField(max_length=64, blank=True, default="")
    node_count = models.PositiveIntegerField()
    pattern = models.CharField(max_length=24)
    inputs = models.JSONField(default=dict, help_text="Times and spare-model parameters.")
    cache_key = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=16, choices=RecommendationStatus.choices,
                              default=RecommendationStatus.COMPUTING, db_index=True)
    method = models.CharField(max_length=16, choices=RecommendationMethod.choices,
                              default=RecommendationMethod.ANALYTIC)
    note = models.CharField(max_length=NOTE_LENGTH, blank=True, default="")
    ranking = models.JSONField(default=list, blank=True)
    recommended = models.JSONField(null=True, blank=True)
    deadline = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    job = models.OneToOneField("allocation.Job", null=True, blank=True,
                               on_delete=models.SET_NULL, related_name="recommendation")
    accepted_at = models.DateTimeField(null=True, blank=True)
    shared_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="sharers",
        help_text="The recommendation whose computation (ranking and simulations) this one "
                  "reuses: the same question on the same occupancy, asked as another row.")
    calibration = models.ForeignKey(
        "Calibration", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The calibration the ranking was interpolated from (method calibrated, "
                  "or calibrated policies beside simulated ones).")

    class Meta:
        db_table = "allocation_recommendation"  # the table the model had in allocation
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["machine", "cache_key", "created_at"],
                                name="rec_machine_key_created")]

    def __str__(self) -> str:
        return f"recommendation {self.pk} for {self.node_count} nodes on {self.machine_id}"

    def get_absolute_url(self) -> str:
        return reverse("recommendations:recommendation_detail", args=[self.pk])


class PolicyPrediction(TrackedRun):
    """One policy's simulation at one engine seed for a recommendation (a Celery task
    each, so a policy's seeds run on as many workers as there are)."""

    task_name = PREDICT_POLICY_TASK
    #: Answers are due within 30 s: never queued behind housekeeping or other work.
    waits_behind_begun_runs = False

    recommendation = models.ForeignKey(Recommendation, on_delete=models.CASCADE,
                                       related_name="predictions")
    policy = models.CharField(max_length=32)

    class Meta(TrackedRun.Meta):
        db_table = "allocation_policyprediction"  # the table the model had in allocation
        constraints = [models.UniqueConstraint(fields=["recommendation", "policy", "seed"],
                                               name="prediction_one_per_policy_and_seed")]

    def __str__(self) -> str:
        return (f"{self.policy} prediction (seed {self.seed}) for recommendation "
                f"{self.recommendation_id}")

    def still_wanted(self) -> bool:
        """Only a recommendation still computing can use the prediction."""
        return Recommendation.objects.filter(pk=self.recommendation_id,
                                             status=RecommendationStatus.COMPUTING).exists()


class Calibration(models.Model):
    """Simulations of one machine shape, made beforehand, that rank the policies for any
    job size and load by interpolation (``recommendations.calibration``). Its runs are
    a sweep of simulation runs (origin calibration); ``table`` is rebuilt from the runs
    that succeeded, so a calibration answers for what it has while it still runs."""

    machine = models.ForeignKey("allocation.Machine", on_delete=models.CASCADE,
                                related_name="calibrations")
    sides = models.JSONField(help_text="The shape calibrated (a machine of the same shape "
                                       "reads it too).")
    concentration = models.PositiveIntegerField()
    engine_version = models.CharField(max_length=16, db_index=True)
    occupancy_model = models.CharField(
        max_length=16, db_index=True,
        help_text="The machine other jobs' endpoints were held on (recommendations."
                  "calibration.OCCUPANCY_MODEL): only today's model's calibrations are read.")
    grid = models.JSONField(default=dict, help_text="Patterns, sizes, loads, policies, seeds.")
    sweep = models.ForeignKey("simulation.Sweep", null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=CalibrationStatus.choices,
                              default=CalibrationStatus.RUNNING, db_index=True)
    table = models.JSONField(default=dict, blank=True)
    run_count = models.PositiveIntegerField(default=0)
    points_done = models.PositiveIntegerField(
        default=0, help_text="Succeeded runs the table was built from.")
    run_seconds = models.FloatField(default=0.0, help_text="Seconds its runs simulated.")
    note = models.CharField(max_length=255, blank=True, default="",
                            help_text="Points left out and why (e.g. over HX_SIM_MAX_BYTES).")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"calibration {self.pk} of {self.machine_id}"

    def get_absolute_url(self) -> str:
        return reverse("recommendations:calibration_detail", args=[self.pk])

    @property
    def occupancy_description(self) -> str:
        return OCCUPANCY_DESCRIPTIONS.get(self.occupancy_model, self.occupancy_model)
