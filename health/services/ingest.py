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
* Nodes must be the job's own: a job the portal allocated takes times only for
  the nodes it holds or held; a job the portal never allocated (created by the
  Slurm prolog) for nodes of its machine. A node appears once per job and
  benchmark in one upload.
* A health round names a ``machine`` instead of a job: a fleet-wide benchmark
  outside any job (docs/domain.md section 5.6). Each upload is a new round, one
  per machine; its nodes must be the machine's, each once per benchmark.
* Re-posting a job's benchmark replaces its stored rows (delete + insert in one
  transaction). Any error stores nothing; every problem of every row is reported
  at once, naming the row and field: ``results[3].seconds`` for JSON,
  ``row 5, seconds`` for CSV (rows count file lines, the header being row 1).
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

from allocation.models import Allocation, Job, Machine, Node
from health.models import BenchmarkResult, HealthRound
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


_INSERT_FIELDS = ("machine", "job", "health_round", "node", "benchmark", "seconds",
                  "measured_at", "created_at")
#: Where a row's health round goes in its insert values (filled in once created).
_ROUND_SLOT = 2


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


#: A stored group: ("job", job id, benchmark) or ("round", machine id, benchmark).
GroupKey = tuple[str, int, str]


@dataclass
class _Lookups:
    """What the rows name, looked up once: jobs, machines of rounds, nodes, job nodes."""

    jobs: dict[Any, Job | str]
    machines: dict[str, Machine | str]
    node_ids: dict[int, dict[str, int]]
    job_nodes: dict[int, set[int]]


def _job_key(row: ParsedRow) -> str:
    """Where a job problem is reported: ``job`` (JSON, one job) or ``row N, job`` (CSV)."""
    return "job" if row.label.startswith("results[") else error_key(row.label, "job")


def _machine_key(row: ParsedRow) -> str:
    return "machine" if row.label.startswith("results[") else error_key(row.label, "machine")


def ingest(rows: Sequence[ParsedRow], owner: Any = None,
           errors: ErrorCollector | None = None, user: Any = None) -> IngestResult:
    """Store validated rows; each (job, benchmark) present replaces what was stored for it,
    and the rows naming a machine are one new health round per machine.

    ``owner`` set: every job must be that user's (an operator uploads for their own
    jobs only); None: any job (admins, and the cluster's benchmark-scoped tokens).
    ``errors`` holds the problems the parse found; every later check adds to it and
    nothing is stored unless it stays empty. ``user`` is recorded on new rounds.
    """
    errors = ErrorCollector() if errors is None else errors
    check_units(rows, errors)
    lookups = _lookups(rows)
    objects, groups = _rows_to_insert(rows, lookups, owner, errors)
    errors.raise_if_any()
    replaced, rounds = _replace_stored(groups, objects, user)
    return IngestResult(stored=len(objects), replaced=replaced,
                        groups=_group_summary(groups, lookups, rounds))


def _lookups(rows: Sequence[ParsedRow]) -> _Lookups:
    jobs = _resolve_jobs({r.job for r in rows if r.job is not None and "job" not in r.bad})
    machines = _resolve_machines({r.machine for r in rows
                                  if r.job is None and r.machine and "machine" not in r.bad})
    return _Lookups(jobs=jobs, machines=machines,
                    node_ids=_node_ids_by_machine(rows, jobs, machines),
                    job_nodes=_allocated_nodes([j.pk for j in jobs.values()
                                                if isinstance(j, Job)]))


def _resolve_machines(names: set[str]) -> dict[str, Machine | str]:
    found = {m.name: m for m in Machine.objects.filter(name__in=sorted(names))}
    return {name: found.get(name) or f"no machine named {name!r}" for name in names}


def _allocated_nodes(job_ids: list[int]) -> dict[int, set[int]]:
    """Node ids each job holds or held; jobs the portal never allocated are absent."""
    out: dict[int, set[int]] = defaultdict(set)
    for chunk in chunks(sorted(job_ids), LOOKUP_CHUNK):
        for job_id, node_id in Allocation.objects.filter(job_id__in=chunk).values_list(
                "job_id", "node_id"):
            out[job_id].add(node_id)
    return out


def _rows_to_insert(rows: Sequence[ParsedRow], lookups: _Lookups, owner: Any,
                    errors: ErrorCollector) -> tuple[list[tuple], dict[GroupKey, list[str]]]:
    """The insert values of the rows that can be stored (the others leave an error),
    and the node names of each group they store."""
    now = timezone.now()
    seen: dict[tuple[GroupKey, int], str] = {}
    adapt = connection.ops.adapt_datetimefield_value
    adapted: dict[datetime, Any] = {}
    created = adapt(now)
    objects: list[tuple] = []
    groups: dict[GroupKey, list[str]] = defaultdict(list)
    for row in rows:
        if errors.full:
            break
        target = _row_target(row, lookups, owner, errors)
        if target is None:
            continue
        machine_id, job_id, group = target
        node_id = _node_id_to_store(row, group, machine_id, lookups, seen, errors)
        if node_id is None or row.bad:
            continue
        groups[group].append(row.node)
        measured = row.measured_at or now
        if measured not in adapted:
            adapted[measured] = adapt(measured)
        objects.append((machine_id, job_id, machine_id if job_id is None else None, node_id,
                        row.benchmark, row.seconds, adapted[measured], created))
    return objects, groups


def _row_target(row: ParsedRow, lookups: _Lookups, owner: Any, errors: ErrorCollector
                ) -> tuple[int, int | None, GroupKey] | None:
    """(machine id, job id or None, group) of a row whose job or machine may be written;
    else None and the reason in ``errors`` (once per upload for JSON)."""
    if row.job is None:
        machine = lookups.machines.get(row.machine)
        if not isinstance(machine, Machine):
            if machine and (key := _machine_key(row)) not in errors.errors:
                errors.add(key, machine)
            return None
        return machine.pk, None, ("round", machine.pk, row.benchmark)
    job = lookups.jobs.get(row.job)
    if not isinstance(job, Job):
        if job and (key := _job_key(row)) not in errors.errors:
            errors.add(key, job)
        return None
    if owner is not None and job.owner_id != owner.pk:
        if (key := _job_key(row)) not in errors.errors:
            errors.add(key, (f"job {job.pk} is {job.owner.username}'s; only its owner, an "
                             "admin or a benchmark-scoped token may upload for it"))
        return None
    return job.machine_id, job.pk, ("job", job.pk, row.benchmark)


def _node_ids_by_machine(rows: Sequence[ParsedRow], jobs: dict[Any, Job | str],
                         machines: dict[str, Machine | str]) -> dict[int, dict[str, int]]:
    """Per machine of the rows' jobs and rounds, hostname -> node id of the nodes the
    rows name."""
    by_machine: dict[int, set[str]] = defaultdict(set)
    found: dict[int, Machine] = {}
    for row in rows:
        target = jobs.get(row.job) if row.job is not None else machines.get(row.machine)
        machine = target.machine if isinstance(target, Job) else target
        if isinstance(machine, Machine):
            by_machine[machine.pk].add(row.node)
            found[machine.pk] = machine
    return {mid: _node_ids(found[mid], names) for mid, names in by_machine.items()}


def _node_id_to_store(row: ParsedRow, group: GroupKey, machine_id: int, lookups: _Lookups,
                      seen: dict[tuple[GroupKey, int], str],
                      errors: ErrorCollector) -> int | None:
    """The id of the row's node if it may be stored; else None and the reason in
    ``errors``. ``seen`` remembers the rows taken, to refuse a node twice."""
    if "node" in row.bad:
        return None
    node_id = lookups.node_ids[machine_id].get(row.node)
    kind, owner_id, benchmark = group
    job = lookups.jobs.get(row.job) if kind == "job" else None
    machine = job.machine if isinstance(job, Job) else lookups.machines[row.machine]
    if node_id is None:
        errors.add(error_key(row.label, "node"), (
            f"{row.node} is not a node of machine {machine.name}"
            + (f" (the machine of job {owner_id})" if kind == "job" else "")))
        return None
    held = lookups.job_nodes.get(owner_id) if kind == "job" else None
    if held is not None and node_id not in held:
        errors.add(error_key(row.label, "node"), (
            f"{row.node} is not a node of job {owner_id}: the job holds "
            f"{_hostlist_of(held)}; give the job's own nodes only (a fleet-wide round "
            "names the machine instead of a job)"))
        return None
    key = (group, node_id)
    if key in seen:
        where = f"job {owner_id}" if kind == "job" else "this round"
        errors.add(error_key(row.label, "node"), (
            f"{row.node} already has a {benchmark} time for {where} ({seen[key]})"))
        return None
    seen[key] = row.label
    return node_id


def _hostlist_of(node_ids: set[int]) -> str:
    names = Node.objects.filter(pk__in=sorted(node_ids)[:LOOKUP_CHUNK]).values_list(
        "hostname", flat=True)
    return hostlists.compress(names)[:200]


def _replace_stored(groups: dict[GroupKey, list[str]], objects: list[tuple],
                    user: Any = None) -> tuple[int, dict[int, int]]:
    """Delete what the job groups had stored, create one round per machine of the round
    groups and insert ``objects``, in one transaction; the number of rows deleted and
    the round created per machine id."""
    job_ids_by_benchmark: dict[str, list[int]] = defaultdict(list)
    for kind, owner_id, benchmark in groups:
        if kind == "job":
            job_ids_by_benchmark[benchmark].append(owner_id)
    replaced = 0
    with transaction.atomic():
        # Lock the jobs (in id order, so two uploads never deadlock): concurrent
        # uploads for one job then replace each other instead of colliding.
        list(Job.objects.select_for_update().filter(
            pk__in=sorted({job_id for ids in job_ids_by_benchmark.values() for job_id in ids})
        ).order_by("pk").values_list("pk", flat=True))
        for benchmark, job_ids in job_ids_by_benchmark.items():
            for chunk in chunks(sorted(job_ids), LOOKUP_CHUNK):
                replaced += BenchmarkResult.objects.filter(
                    benchmark=benchmark, job_id__in=chunk).delete()[0]
        rounds = {machine_id: HealthRound.objects.create(
                      machine_id=machine_id,
                      user=user if getattr(user, "is_authenticated", False) else None).pk
                  for machine_id in sorted({o for k, o, _ in groups if k == "round"})}
        _bulk_insert([row if row[_ROUND_SLOT] is None else
                      (*row[:_ROUND_SLOT], rounds[row[_ROUND_SLOT]], *row[_ROUND_SLOT + 1:])
                      for row in objects])
    return replaced, rounds


def _group_summary(groups: dict[GroupKey, list[str]], lookups: _Lookups,
                   rounds: dict[int, int]) -> list[dict[str, Any]]:
    """One line per (job, benchmark) or (round, benchmark) stored: the job or round,
    its machine and the nodes."""
    job_by_id = {j.pk: j for j in lookups.jobs.values() if isinstance(j, Job)}
    machine_by_id = {m.pk: m for m in lookups.machines.values() if isinstance(m, Machine)}
    out = []
    for (kind, owner_id, benchmark), names in groups.items():
        if kind == "job":
            job = job_by_id[owner_id]
            head = {"job": owner_id, "round": None, "external_id": job.external_id,
                    "machine": job.machine.name}
        else:
            head = {"job": None, "round": rounds[owner_id], "external_id": "",
                    "machine": machine_by_id[owner_id].name}
        out.append({**head, "benchmark": benchmark, "count": len(names),
                    "nodes": hostlists.compress(names)})
    return out


def ingest_payload(data: Any, owner: Any = None, user: Any = None) -> IngestResult:
    """Validate and store one JSON upload (one job or one health round, one benchmark)."""
    errors = ErrorCollector()
    return ingest(parse_payload(data, errors), owner=owner, errors=errors, user=user)


def ingest_csv(text: str, owner: Any = None, user: Any = None) -> IngestResult:
    """Validate and store one CSV upload (any number of jobs and benchmarks, or health
    rounds)."""
    errors = ErrorCollector()
    return ingest(parse_csv(text, errors=errors), owner=owner, errors=errors, user=user)
