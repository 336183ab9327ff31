"""Framework models: users with a role, hashed API tokens, the tracked-run base."""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone

from hxportal.roles import Role, role_at_least

TOKEN_PREFIX = "hx_"  # noqa: S105 - a public prefix, not a secret


class User(AbstractUser):
    """A portal user; ``role`` decides what they may read and change."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    def has_role(self, role: str) -> bool:
        return role_at_least(self, role)

    @property
    def effective_role(self) -> str:
        """The role the portal grants: a superuser may do everything an admin may,
        whatever ``role`` holds (``manage.py createsuperuser`` leaves it at viewer)."""
        return Role.ADMIN.value if self.is_superuser else self.role


class TokenScope(models.TextChoices):
    ALL = "all", "Everything the user's role allows"
    BENCHMARKS = "benchmarks", "Benchmark upload only (cluster scripts)"
    METRICS = "metrics", "Metrics only (a Prometheus scraper)"


def hash_token(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiToken(models.Model):
    """A script's credential; only its SHA-256 is stored, the key is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100, default="script")
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise a key.")
    key_hash = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=16, choices=TokenScope.choices, default=TokenScope.ALL)
    read_only = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user}, {self.name})"

    @classmethod
    def issue(cls, user, name: str = "script", *, scope: str = TokenScope.ALL,
              read_only: bool = False, expires_at: datetime | None = None
              ) -> tuple[ApiToken, str]:
        """Create a token and return it with its clear key (never stored)."""
        key = TOKEN_PREFIX + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, prefix=key[:10],
                                   key_hash=hash_token(key), scope=scope,
                                   read_only=read_only, expires_at=expires_at)
        return token, key

    @property
    def is_usable(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


class RunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"

    @classmethod
    def terminal(cls) -> frozenset[str]:
        return frozenset({cls.SUCCEEDED, cls.FAILED, cls.CANCELLED})


TERMINAL_RUN_STATUSES = RunStatus.terminal()


class TrackedRun(models.Model):
    """Long work as a row: the row id is the Celery task id and the row is the truth.

    Subclasses add their own inputs and name their Celery task in ``task_name``;
    the runner in ``hxportal.runs`` claims, executes and stores them so a
    redelivered message never repeats a result, and re-sends rows whose message
    never reached the broker. A running row is held by a lease: the process that
    claimed it writes ``heartbeat_at`` while it works, and only the holder of
    ``lease_token`` may store the outcome; a row whose heartbeat stops (its worker
    was killed) is queued again by ``hxportal.runs.recover_stale``.
    """

    task_name: str = ""
    #: Whether a new row waits behind rows that have begun (``hxportal.runs.run_priority``):
    #: bulk work does; work with a deadline (a recommendation's predictions) never waits.
    waits_behind_begun_runs: bool = True

    status = models.CharField(max_length=16, choices=RunStatus.choices,
                              default=RunStatus.PENDING, db_index=True)
    parameters = models.JSONField(default=dict, blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.SET_NULL, related_name="+")
    progress = models.FloatField(default=0.0)
    log = models.JSONField(default=list, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    continued = models.PositiveIntegerField(
        default=0, help_text="Tasks the run continued in after its first, each from where "
                             "the last stopped (a long simulation's checkpoints).")
    sent_at = models.DateTimeField(null=True, blank=True,
                                   help_text="When the broker accepted the task message.")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="Last sign of life of the process running it.")
    lease_token = models.CharField(
        max_length=32, blank=True, default="",
        help_text="Which claim holds the running row; empty when no process holds it.")
    lease_owner = models.CharField(max_length=255, blank=True, default="",
                                   help_text="Host and process id of the holder.")

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_RUN_STATUSES

    def still_wanted(self) -> bool:
        """Whether a run whose worker was lost should run again (subclasses say no
        when its result can no longer be used)."""
        return True

    @property
    def task_id(self) -> str:
        return f"{self._meta.label_lower}:{self.pk}"

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()
