"""Benchmark ingestion: parse, validate and store one upload (JSON or CSV), all or nothing.

Part of the node-health service API: :mod:`health.services` re-exports the public names
except :func:`ingest` itself (the name is this module; callers use
:func:`ingest_payload` and :func:`ingest_csv`).

Ingestion rules (both JSON and CSV):

* ``seconds`` must be a plain, finite, positive number of seconds. CSV cells
  with a unit suffix (``16.7ms``) are refused rather than guessed.
* Mixed units: every time of one benchmark in one upload must lie within
  ``MAX_SPREAD`` (100x) of that benchmark's median in the upload. A value in
  milliseconds among seconds is 1000x off and is refused; a real abnormal node
  is a few times slower (docs/domain.md section 5.2: "several times"), far inside the limit.
  100x rather than 1000x so that ms-in-s is caught even with noise.
* A job is named by its portal id (a JSON integer) or by a string: the string
  is matched against ``external_id`` (e.g. the Slurm job id) and, when no job
  has that external id and it is all digits, against the portal id. Several
  jobs with the same external id are ambiguous (400).
* Nodes must be nodes of the job's machine; a node appears once per job and
  benchmark in one upload.
* Re-posting a job's benchmark replaces its stored rows (delete + insert in one
  transaction). Any error stores nothing; errors name the row and field:
  ``results[3].seconds`` for JSON, ``row 5, seconds`` for CSV (rows count file
  lines, the header being row 1).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from allocation.models import Job, Machine, Node
from health.models import BenchmarkResult
from health.services.parsing import (
    ErrorCollector,
    ParsedRow,
    check_units,
    error_key,
    parse_csv,
    parse_payload,
)
from hxportal import hostlists
from hxportal.batching import LOOKUP_CHUNK, chunks

INSERT_BATCH = 2000


def resolve_job(ref: str | int, field_name: str = "job") -> Job:
    """The job named by a portal id (int) or an external id (str, digits fall back to id)."""
    found = _resolve_jobs({ref})
    job = found.get(ref)
    if isinstance(job, str) or job is None:
        raise ValidationError({field_name: [job or "no such job"]})
    return job


def _resolve_jobs(refs: set) -> dict[Any, Job | str]:
    """Map each reference to its job, or to the reason it names none."""
    out: dict[Any, Job | str] = {}
    by_external = _jobs_by_external_id(sorted(r for r in refs if isinstance(r, str)))
    ids: dict[int, list] = defaultdict(list)
    for ref in refs:
        if isinstance(ref, int):
            ids[ref].append(ref)
        elif len(by_external.get(ref, [])) > 1:
            out[ref] = (f"{len(by_external[ref])} jobs have external id {ref!r}; "
                        "name the job by its portal id")
        elif by_external.get(ref):
            out[ref] = by_external[ref][0]
        elif ref.isdigit() and len(ref) < 19:
            ids[int(ref)].append(ref)
        else:
            out[ref] = f"no job with id or external id {ref!r}"
    found = _jobs_by_id(sorted(ids))
    for pk, original_refs in ids.items():
        for ref in original_refs:
            out[ref] = found.get(pk) or f"no job with id or external id {ref!r}"
    return out


def _jobs_by_external_id(external_ids: list[str]) -> dict[str, list[Job]]:
    """The jobs of each external id (several when it is ambiguous)."""
    by_external: dict[str, list[Job]] = defaultdict(list)
    for chunk in chunks(external_ids, LOOKUP_CHUNK):
        for job in Job.objects.filter(external_id__in=chunk).select_related("machine", "owner"):
            by_external[job.external_id].append(job)
    return by_external


def _jobs_by_id(ids: list[int]) -> dict[int, Job]:
    """The jobs of these portal ids that exist."""
    found: dict[int, Job] = {}
    for chunk in chunks(ids, LOOKUP_CHUNK):
        found.update((j.pk, j) for j in Job.objects.filter(pk__in=chunk).select_related(
            "machine", "owner"))
    return found


def _node_ids(machine: Machine, names: set[str]) -> dict[str, int]:
    """Hostname -> node id on ``machine`` for ``names``: one query per machine."""
    query = Node.objects.filter(machine=machine)
    if len(names) <= LOOKUP_CHUNK:
        query = query.filter(hostname__in=names)
    return {h: pk for h, pk in query.values_list("hostname", "id") if h in names}


_INSERT_FIELDS = ("machine", "job", "node", "benchmark", "seconds", "measured_at", "created_at")


def _bulk_insert(rows: list[tuple]) -> None:
    """INSERT many result rows with ``executemany``.

    ``bulk_create`` spends about 60 us per row preparing seven values through
    the field machinery; here the values are already validated and the
    datetimes adapted once, which halves a 100,000-row upload.
    """
    meta = BenchmarkResult._meta
    quote = connection.ops.quote_name
    columns = ", ".join(quote(meta.get_field(name).column) for name in _INSERT_FIELDS)
    marks = ", ".join(["%s"] * len(_INSERT_FIELDS))
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({marks})"  # noqa: S608 - names from the model  # nosec B608 - table and column names come from the model
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            for chunk in chunks(rows, INSERT_BATCH):
                cursor.executemany(sql, chunk)
            return
        # PostgreSQL: COPY, because Django's client-side-binding cursor re-splits
        # every statement and executemany is one round trip per row.
        copy_sql = f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN"
        with cursor.cursor.copy(copy_sql) as copy:
            for row in rows:
                copy.write_row(row)


@dataclass
class IngestResult:
    stored: int
    replaced: int
    groups: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"stored": self.stored, "replaced": self.replaced, "groups": self.groups}


def _job_key(row: ParsedRow) -> str:
    """Where a job problem is reported: ``job`` (JSON, one job) or ``row N, job`` (CSV)."""
    return "job" if row.label.startswith("results[") else error_key(row.label, "job")


def ingest(rows: Sequence[ParsedRow], owner: Any = None) -> IngestResult:
    """Store validated rows; each (job, benchmark) present replaces what was stored for it.

    ``owner`` set: every job must be that user's (an operator uploads for their own
    jobs only); None: any job (admins, and the cluster's benchmark-scoped tokens).
    """
    check_units(rows)
    errors = ErrorCollector()
    jobs = _resolve_jobs({r.job for r in rows})
    objects, groups = _rows_to_insert(rows, jobs, owner, errors)
    errors.raise_if_any()
    replaced = _replace_stored(groups, objects)
    return IngestResult(stored=len(objects), replaced=replaced,
                        groups=_group_summary(groups, jobs))


def _rows_to_insert(rows: Sequence[ParsedRow], jobs: dict[Any, Job | str], owner: Any,
                    errors: ErrorCollector
                    ) -> tuple[list[tuple], dict[tuple[int, str], list[str]]]:
    """The insert values of the rows that can be stored (the others leave an error),
    and the node names of each (job id, benchmark) they store."""
    node_ids = _node_ids_by_machine(rows, jobs)
    now = timezone.now()
    seen: dict[tuple[int, int, str], str] = {}
    adapt = connection.ops.adapt_datetimefield_value
    adapted: dict[datetime, Any] = {}
    created = adapt(now)
    objects: list[tuple] = []
    groups: dict[tuple[int, str], list[str]] = defaultdict(list)
    for row in rows:
        if errors.full:
            break
        job = jobs[row.job]
        node_id = _node_id_to_store(row, job, owner, node_ids, seen, errors)
        if node_id is None:
            continue
        groups[(job.pk, row.benchmark)].append(row.node)
        measured = row.measured_at or now
        if measured not in adapted:
            adapted[measured] = adapt(measured)
        objects.append((job.machine_id, job.pk, node_id, row.benchmark, row.seconds,
                        adapted[measured], created))
    return objects, groups


def _node_ids_by_machine(rows: Sequence[ParsedRow],
                         jobs: dict[Any, Job | str]) -> dict[int, dict[str, int]]:
    """Per machine of the rows' jobs, hostname -> node id of the nodes the rows name."""
    by_machine: dict[int, set[str]] = defaultdict(set)
    machines: dict[int, Machine] = {}
    for row in rows:
        job = jobs[row.job]
        if isinstance(job, Job):
            by_machine[job.machine_id].add(row.node)
            machines[job.machine_id] = job.machine
    return {mid: _node_ids(machines[mid], names) for mid, names in by_machine.items()}


def _node_id_to_store(row: ParsedRow, job: Job | str, owner: Any,
                      node_ids: dict[int, dict[str, int]],
                      seen: dict[tuple[int, int, str], str],
                      errors: ErrorCollector) -> int | None:
    """The id of the row's node if the row may be stored; else None and the reason in
    ``errors``. ``seen`` remembers the rows taken, to refuse a node twice."""
    if not isinstance(job, Job):
        if (key := _job_key(row)) not in errors.errors:
            errors.add(key, job)
        return None
    if owner is not None and job.owner_id != owner.pk:
        if (key := _job_key(row)) not in errors.errors:
            errors.add(key, (f"job {job.pk} is {job.owner.username}'s; only its owner, an "
                             "admin or a benchmark-scoped token may upload for it"))
        return None
    node_id = node_ids[job.machine_id].get(row.node)
    if node_id is None:
        errors.add(error_key(row.label, "node"), (
            f"{row.node} is not a node of machine {job.machine.name} "
            f"(the machine of job {job.pk})"))
        return None
    key = (job.pk, node_id, row.benchmark)
    if key in seen:
        errors.add(error_key(row.label, "node"), (
            f"{row.node} already has a {row.benchmark} time for job {job.pk} "
            f"({seen[key]})"))
        return None
    seen[key] = row.label
    return node_id


def _replace_stored(groups: dict[tuple[int, str], list[str]], objects: list[tuple]) -> int:
    """Delete what the (job, benchmark) groups had stored and insert ``objects``, in one
    transaction; the number of rows deleted."""
    job_ids_by_benchmark: dict[str, list[int]] = defaultdict(list)
    for job_id, benchmark in groups:
        job_ids_by_benchmark[benchmark].append(job_id)
    replaced = 0
    with transaction.atomic():
        # Lock the jobs (in id order, so two uploads never deadlock): concurrent
        # uploads for one job then replace each other instead of colliding.
        list(Job.objects.select_for_update().filter(
            pk__in=sorted({job_id for job_id, _ in groups})).order_by("pk").values_list(
            "pk", flat=True))
        for benchmark, job_ids in job_ids_by_benchmark.items():
            for chunk in chunks(sorted(job_ids), LOOKUP_CHUNK):
                replaced += BenchmarkResult.objects.filter(
                    benchmark=benchmark, job_id__in=chunk).delete()[0]
        _bulk_insert(objects)
    return replaced


def _group_summary(groups: dict[tuple[int, str], list[str]],
                   jobs: dict[Any, Job | str]) -> list[dict[str, Any]]:
    """One line per (job, benchmark) stored: the job, its machine and the nodes."""
    job_by_id = {j.pk: j for j in jobs.values() if isinstance(j, Job)}
    return [
        {"job": job_id, "external_id": job_by_id[job_id].external_id,
         "machine": job_by_id[job_id].machine.name, "benchmark": benchmark,
         "count": len(names), "nodes": hostlists.compress(names)}
        for (job_id, benchmark), names in groups.items()]


def ingest_payload(data: Any, owner: Any = None) -> IngestResult:
    """Validate and store one JSON upload (one job, one benchmark)."""
    return ingest(parse_payload(data), owner=owner)


def ingest_csv(text: str, owner: Any = None) -> IngestResult:
    """Validate and store one CSV upload (any number of jobs and benchmarks)."""
    return ingest(parse_csv(text), owner=owner)
