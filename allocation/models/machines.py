"""HyperX machines and their materialised nodes."""

from __future__ import annotations

import re

from django.core.validators import RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone

from allocation.choices import NodeState
from allocation.hyperx.shape import MachineShape
from hxportal.validators import no_control_characters

NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$",
    "Use a letter first, then letters, digits, '_', '.' or '-' (at most 64).")
HOSTNAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")
HOSTNAME_VALIDATOR = RegexValidator(
    HOSTNAME_RE,
    "Hostnames are letters, digits, '_', '.' and '-' (at most 63), starting alphanumeric.")


class Machine(models.Model):
    """A HyperX: a grid of switches (``sides``) with ``concentration`` nodes each."""

    name = models.CharField(max_length=64, unique=True, validators=[NAME_VALIDATOR])
    description = models.CharField(max_length=255, blank=True, default="",
                                   validators=[no_control_characters])
    sides = models.JSONField(help_text="Switches per dimension, e.g. [8, 8].")
    concentration = models.PositiveIntegerField(help_text="Compute nodes per switch.")
    hostname_pattern = models.CharField(max_length=128, blank=True, default="")
    hostlist = models.TextField(blank=True, default="",
                                help_text="Slurm hostlist mapped in order onto the nodes.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("allocation:machine_detail", args=[self.name])

    @property
    def geometry(self) -> MachineShape:
        """The machine's shape: sizes, checks and coordinate maps live there."""
        return MachineShape(tuple(self.sides), self.concentration)

    @property
    def dimensions(self) -> int:
        return self.geometry.dimensions

    @property
    def switch_count(self) -> int:
        return self.geometry.switch_count

    @property
    def node_count(self) -> int:
        return self.geometry.node_count

    @property
    def shape(self) -> str:
        """The shape as pages show it, e.g. ``8x8, c = 8``."""
        return self.geometry.label


class Node(models.Model):
    """One compute node: endpoint ``index`` = switch index * c + ``local``."""

    machine = models.ForeignKey(Machine, on_delete=models.CASCADE, related_name="nodes")
    index = models.PositiveIntegerField()
    switch = models.PositiveIntegerField(help_text="Row-major switch index.")
    coords = models.JSONField(help_text="Switch coordinates, one per dimension.")
    local = models.PositiveIntegerField(help_text="Port on its switch, 0..c-1.")
    hostname = models.CharField(max_length=63, validators=[HOSTNAME_VALIDATOR])
    state = models.CharField(max_length=16, choices=NodeState.choices, default=NodeState.UP)
    state_reason = models.CharField(max_length=255, blank=True, default="")
    state_changed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["machine_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["machine", "hostname"],
                                    name="node_unique_hostname_per_machine"),
            models.UniqueConstraint(fields=["machine", "index"],
                                    name="node_unique_index_per_machine"),
        ]
        indexes = [
            models.Index(fields=["machine", "switch"], name="node_machine_switch"),
            models.Index(fields=["machine", "state"], name="node_machine_state"),
        ]

    def __str__(self) -> str:
        return self.hostname

    @staticmethod
    def hostname_is_valid(hostname: str) -> bool:
        return bool(HOSTNAME_RE.fullmatch(hostname))
