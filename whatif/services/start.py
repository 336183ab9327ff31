"""Starting a study from what a page or an API request gives: the format, an
uploaded file or none, the scenarios."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError

from allocation.hyperx import ONLINE_POLICIES
from allocation.models import Machine
from whatif import constants
from whatif.choices import WorkloadFormat
from whatif.models import WhatIfStudy
from whatif.services.studies import create_study
from whatif.services.workloads import (
    history_workload,
    parse_upload,
    prepare,
    synthetic,
    upload_lines,
)


def start_study(*, machine: Machine, fmt: str, upload: Any = None,
                policies: Sequence[str], spares: Sequence[str] = ("none",), seeds: int = 1,
                ideal: bool = False, release: bool = True, name: str = "", user=None,
                days: float | None = None, load: float | None = None,
                rules: Sequence[Sequence[str]] = (), mix: dict[str, float] | None = None
                ) -> WhatIfStudy:
    """Read the workload, then store the study and enqueue its runs."""
    if fmt in (WorkloadFormat.SWF, WorkloadFormat.SACCT):
        if upload is None:
            raise ValidationError({"workload": [f"upload the {fmt} file"]})
        workload = parse_upload(fmt, upload_lines(upload))
    elif fmt == WorkloadFormat.HISTORY:
        workload = history_workload(machine)
    elif fmt == WorkloadFormat.SYNTHETIC:
        days = constants.SYNTHETIC_DAYS if days is None else days
        load = constants.SYNTHETIC_LOAD if load is None else load
        if not (0 < days <= 366 and 0 < load <= 20):
            raise ValidationError({"days": ["days in (0, 366] and load in (0, 20]"]})
        workload = synthetic(machine, days=days, load=load)
    else:
        raise ValidationError({"format": [f"unknown format {fmt!r}"]})
    jobs, info = prepare(workload, machine, rules=rules, mix=mix)
    return create_study(machine=machine, jobs=jobs, info=info, source=fmt, policies=policies,
                        spares=spares, seeds=seeds, ideal=ideal, release=release, name=name,
                        user=user)


def start_demo(*, machine: Machine, user=None, fmt: str = WorkloadFormat.SYNTHETIC
               ) -> WhatIfStudy:
    """The one-click study: every policy x none / 2 / recommended spares, several
    seeds, on a synthetic month (or the synced history)."""
    if fmt not in (WorkloadFormat.SYNTHETIC, WorkloadFormat.HISTORY):
        raise ValidationError({"format": ["the one-click study runs on synthetic or history"]})
    label = "synthetic month" if fmt == WorkloadFormat.SYNTHETIC else "synced history"
    return start_study(machine=machine, fmt=fmt, policies=list(ONLINE_POLICIES),
                       spares=list(constants.DEMO_SPARES), seeds=constants.DEMO_SEEDS,
                       days=constants.SYNTHETIC_DAYS, load=constants.SYNTHETIC_LOAD,
                       name=f"What-if on the {label} of {machine.name}", user=user)
