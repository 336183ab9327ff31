"""Reading a workload for a study: an upload (SWF or sacct), the portal's synced
history, or the synthetic model; patterns assigned; jobs larger than the machine
left out and counted."""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError

from allocation.choices import JobSource
from allocation.hyperx import HyperX
from allocation.models import Job, Machine
from whatif import constants
from whatif.choices import WorkloadFormat
from whatif.replay import Job as ReplayJob
from whatif.replay import (
    Workload,
    WorkloadError,
    assign_patterns,
    fit_to_machine,
    parse_sacct,
    parse_swf,
    synthetic_workload,
)

__all__ = ["history_workload", "machine_topology", "parse_upload", "prepare", "synthetic"]


def machine_topology(machine: Machine) -> HyperX:
    return HyperX(tuple(machine.sides), machine.concentration)


def parse_upload(fmt: str, lines: Iterable[str]) -> Workload:
    """Parse uploaded lines; a bad line becomes a 400 naming the line and field."""
    try:
        if fmt == WorkloadFormat.SWF:
            return parse_swf(lines)
        if fmt == WorkloadFormat.SACCT:
            return parse_sacct(lines)
    except WorkloadError as exc:
        raise ValidationError({"workload": [str(exc)]}) from exc
    except UnicodeDecodeError as exc:
        raise ValidationError({"workload": [f"not UTF-8 text ({exc.reason})"]}) from exc
    raise ValidationError({"format": [f"an upload is swf or sacct, not {fmt!r}"]})


def upload_lines(data: bytes | Any) -> Iterable[str]:
    """Text lines of an uploaded file (bounded in size)."""
    size = getattr(data, "size", None)
    if size is not None and size > constants.MAX_UPLOAD_BYTES:
        raise ValidationError({"workload": [
            f"the file has {size:,} bytes; at most {constants.MAX_UPLOAD_BYTES:,} are read"]})
    raw = data if isinstance(data, bytes) else data.read(constants.MAX_UPLOAD_BYTES + 1)
    if len(raw) > constants.MAX_UPLOAD_BYTES:
        raise ValidationError({"workload": [
            f"the file has more than {constants.MAX_UPLOAD_BYTES:,} bytes"]})
    return io.StringIO(raw.decode("utf-8"))


def history_workload(machine: Machine) -> Workload:
    """The machine's finished Slurm jobs (synced), with Slurm's submit, start and end.

    A synced job has no requested limit in the portal: its wall time stands in
    when recorded, else its run time (the scheduler then knows each run time).
    """
    rows = (Job.objects.filter(machine=machine, source=JobSource.SLURM,
                               allocated_at__isnull=False, finished_at__isnull=False)
            .order_by("created_at", "id")
            .values_list("slurm_job_id", "pk", "name", "node_count", "pattern", "wall_time",
                         "created_at", "allocated_at", "finished_at"))
    jobs = []
    for slurm_id, pk, name, nodes, pattern, wall, submit, start, end in rows.iterator():
        run = (end - start).total_seconds()
        jobs.append(ReplayJob(id=slurm_id or pk, submit=submit.timestamp(),
                              start=start.timestamp(), end=end.timestamp(), nodes=nodes,
                              timelimit=max(run, wall or 0.0), name=name,
                              comment=f"pattern={pattern}"))
    return Workload(jobs=tuple(jobs), source="history")


def synthetic(machine: Machine, *, days: float | None = None, load: float | None = None,
              seed: int = 0) -> Workload:
    """A month (``SYNTHETIC_DAYS``) of the Lublin & Feitelson model sized to the machine."""
    return synthetic_workload(machine.node_count,
                              days=constants.SYNTHETIC_DAYS if days is None else days,
                              load=constants.SYNTHETIC_LOAD if load is None else load,
                              seed=seed, max_jobs=constants.MAX_SYNTHETIC_JOBS)


def prepare(workload: Workload, machine: Machine, *, rules=(), mix=None, seed: int = 0
            ) -> tuple[list[ReplayJob], dict[str, Any]]:
    """Jobs that fit the machine with their patterns, and what the study records
    about the workload (counts, skipped by reason, header)."""
    kept, left_out = fit_to_machine(workload.jobs, machine.node_count)
    if len(kept) > constants.MAX_JOBS:
        raise ValidationError({"workload": [
            f"{len(kept):,} jobs; a study replays at most {constants.MAX_JOBS:,}"]})
    if not kept:
        raise ValidationError({"workload": ["no job to replay (none fits the machine, or "
                                            "the log has no finished job)"]})
    try:
        jobs = assign_patterns(kept, rules, mix, seed=seed)
    except ValueError as exc:
        raise ValidationError({"patterns": [str(exc)]}) from exc
    info = {"jobs": len(jobs), "left_out": left_out, "skipped": workload.skipped,
            "header": workload.header, "source": workload.source,
            "first_submit": jobs[0].submit, "last_submit": jobs[-1].submit}
    return jobs, info
