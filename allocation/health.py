"""The write path for node health: benchmark ingestion, estimation runs, spares, drains.

A services module split by topic from ``allocation.services`` (which it calls
for hostlists and node states). Views, the API, commands and tasks call these
functions; the maths lives in the pure core :mod:`allocation.spares`.

Ingestion rules (both JSON and CSV):

* ``seconds`` must be a plain, finite, positive number of seconds. CSV cells
  with a unit suffix (``16.7ms``) are refused rather than guessed.
* Mixed units: every time of one benchmark in one upload must lie within
  ``MAX_SPREAD`` (100x) of that benchmark's median in the upload. A value in
  milliseconds among seconds is 1000x off and is refused; a real abnormal node
  is a few times slower (DOMAIN.md: "several times"), far inside the limit.
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

import csv
import io
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from allocation import services, spares
from allocation.models import (
    Allocation,
    AllocationRole,
    BenchmarkResult,
    Estimate,
    EstimationRun,
    Job,
    Machine,
    Node,
    NodeState,
)
from allocation.models.benchmarks import BENCHMARK_NAME_RE, DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS
from hxportal import hostlists
from hxportal.runs import RunReporter, enqueue

MAX_ROWS = 200_000
MAX_SPREAD = 100.0
MAX_ERRORS = 50
MAX_CURVE_POINTS = 2000
MAX_N_NODE = 1_048_576
MAX_FUTURE = timedelta(days=1)
CSV_COLUMNS = ("job", "benchmark", "node", "seconds")
CSV_OPTIONAL = ("measured_at",)
LOOKUP_CHUNK = 900
INSERT_BATCH = 2000

_BENCHMARK_NAME = re.compile(BENCHMARK_NAME_RE)
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NON_FINITE_WORDS = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity",
                     "-infinity"}
_UNIT_SUFFIX = re.compile(r"^[+-]?[\d.]+(?:[eE][+-]?\d+)?\s*([A-Za-zµ]+)$")


# --------------------------------------------------------------------------
# Parsing and validation


@dataclass(slots=True)
class ParsedRow:
    """One validated benchmark time; ``label`` prefixes its error keys."""

    label: str
    job: str | int
    benchmark: str
    node: str
    seconds: float
    measured_at: datetime | None


class _Errors:
    """Collects ``{key: [message]}`` up to ``MAX_ERRORS`` keys, then stops the parse."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, key: str, message: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.setdefault(key, []).append(message)

    @property
    def full(self) -> bool:
        return len(self.errors) >= MAX_ERRORS

    def raise_if_any(self) -> None:
        if self.errors:
            raise ValidationError(self.errors)


def _key(label: str, name: str) -> str:
    return f"{label}.{name}" if label.startswith("results[") else f"{label}, {name}"


def _parse_seconds_text(text: str) -> tuple[float | None, str]:
    value = text.strip()
    if not value:
        return None, "is required"
    if value.lower() in _NON_FINITE_WORDS:
        return None, "must be finite (NaN and infinity are not times)"
    unit = _UNIT_SUFFIX.match(value)
    if unit:
        return None, (f"must be a plain number of seconds; the unit suffix {unit.group(1)!r} "
                      "is not accepted (mixed units)")
    if not _PLAIN_NUMBER.match(value):
        return None, f"{value[:40]!r} is not a number"
    return _check_seconds(float(value))


def _check_seconds(value: Any) -> tuple[float | None, str]:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, "must be a number of seconds"
    seconds = float(value)
    if not math.isfinite(seconds):
        return None, "must be finite (NaN and infinity are not times)"
    if seconds <= 0:
        return None, "must be positive"
    return seconds, ""


def _parse_measured_at(value: Any, now: datetime) -> tuple[datetime | None, str]:
    if value is None or value == "":
        return None, ""
    if not isinstance(value, str):
        return None, "must be an ISO 8601 date-time string"
    try:
        parsed = parse_datetime(value.strip())
    except ValueError:
        parsed = None
    if parsed is None:
        return None, "is not an ISO 8601 date-time (e.g. 2026-01-31T12:00:00Z)"
    if timezone.is_naive(parsed):
        return None, "needs a timezone offset (e.g. Z or +00:00)"
    if parsed > now + MAX_FUTURE:
        return None, "is in the future"
    return parsed, ""


def _check_benchmark(name: Any) -> str:
    if not isinstance(name, str) or not _BENCHMARK_NAME.match(name):
        return ("must be 1-64 letters, digits, '_', '.', ':', '+' or '-', "
                "starting with a letter or digit")
    return ""


def _check_node(name: Any) -> str:
    if not isinstance(name, str) or not Node.hostname_is_valid(name):
        return "must be a hostname (letters, digits, '_', '.', '-')"
    return ""


def _check_job(ref: Any) -> str:
    if isinstance(ref, bool):
        return "must be a job id or external id"
    if isinstance(ref, int):
        return "" if ref > 0 else "must be a positive id"
    if isinstance(ref, str) and 0 < len(ref.strip()) <= 64:
        return ""
    return "must be a job id or external id (at most 64 characters)"


def parse_payload(data: Any) -> list[ParsedRow]:
    """Validate a JSON upload ``{"job", "benchmark", "results": [{"node", "seconds"}]}``."""
    errors = _Errors()
    if not isinstance(data, dict):
        raise ValidationError({"non_field_errors": ["expected a JSON object"]})
    unknown = sorted(set(data) - {"job", "benchmark", "results", "measured_at"})
    for name in unknown:
        errors.add(name, "unknown field")
    now = timezone.now()
    job = data.get("job")
    if job is None:
        errors.add("job", "is required")
    elif problem := _check_job(job):
        errors.add("job", problem)
    benchmark = data.get("benchmark")
    if benchmark is None:
        errors.add("benchmark", "is required")
    elif problem := _check_benchmark(benchmark):
        errors.add("benchmark", problem)
    default_time, problem = _parse_measured_at(data.get("measured_at"), now)
    if problem:
        errors.add("measured_at", problem)
    results = data.get("results")
    if not isinstance(results, list) or not results:
        errors.add("results", "must be a non-empty list of {node, seconds}")
        errors.raise_if_any()
    if len(results) > MAX_ROWS:
        raise ValidationError({"results": [f"{len(results)} rows; at most {MAX_ROWS} per upload"]})
    rows: list[ParsedRow] = []
    job_ref = job.strip() if isinstance(job, str) else job
    for i, item in enumerate(results):
        if errors.full:
            break
        label = f"results[{i}]"
        if not isinstance(item, dict):
            errors.add(label, "must be an object {node, seconds[, measured_at]}")
            continue
        for name in sorted(set(item) - {"node", "seconds", "measured_at"}):
            errors.add(f"{label}.{name}", "unknown field")
        node = item.get("node")
        if problem := _check_node(node):
            errors.add(f"{label}.node", problem)
        seconds, problem = _check_seconds(item.get("seconds"))
        if problem:
            errors.add(f"{label}.seconds", problem)
        measured_at, problem = _parse_measured_at(item.get("measured_at"), now)
        if problem:
            errors.add(f"{label}.measured_at", problem)
        rows.append(ParsedRow(label, job_ref, benchmark, node, seconds or 0.0,
                              measured_at or default_time))
    errors.raise_if_any()
    return rows


def parse_csv(text: str, max_rows: int | None = None) -> list[ParsedRow]:
    """Validate CSV text with header ``job,benchmark,node,seconds[,measured_at]``.

    Needs no database, so ``hx_estimate`` can use it offline (with a larger
    ``max_rows`` than an upload's ``MAX_ROWS``).
    """
    limit = MAX_ROWS if max_rows is None else max_rows
    errors = _Errors()
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise ValidationError({"row 1, header": ["the CSV is empty"]}) from None
    except csv.Error as exc:
        raise ValidationError({"row 1, header": [f"not CSV: {exc}"]}) from None
    allowed = [list(CSV_COLUMNS), [*CSV_COLUMNS, *CSV_OPTIONAL]]
    if header not in allowed:
        raise ValidationError({"row 1, header": [
            f"expected {','.join(CSV_COLUMNS)}[,{','.join(CSV_OPTIONAL)}], "
            f"got {','.join(header)[:200]}"]})
    width = len(header)
    now = timezone.now()
    rows: list[ParsedRow] = []
    try:
        for number, cells in enumerate(reader, start=2):
            if errors.full:
                break
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            label = f"row {number}"
            if len(rows) >= limit:
                raise ValidationError({label: [f"more than {limit} rows; split the upload"]})
            if len(cells) != width:
                errors.add(label, f"has {len(cells)} cells, expected {width}")
                continue
            job, benchmark, node, seconds_text = (c.strip() for c in cells[:4])
            if problem := _check_job(job):
                errors.add(f"{label}, job", problem)
            if problem := _check_benchmark(benchmark):
                errors.add(f"{label}, benchmark", problem)
            if problem := _check_node(node):
                errors.add(f"{label}, node", problem)
            seconds, problem = _parse_seconds_text(seconds_text)
            if problem:
                errors.add(f"{label}, seconds", problem)
            measured_at = None
            if width == 5:
                measured_at, problem = _parse_measured_at(cells[4], now)
                if problem:
                    errors.add(f"{label}, measured_at", problem)
            rows.append(ParsedRow(label, job, benchmark, node, seconds or 0.0, measured_at))
    except csv.Error as exc:
        errors.add(f"row {reader.line_num}", f"not valid CSV: {exc}")
    if not rows and not errors.errors:
        errors.add("row 2", "the CSV has a header but no rows")
    errors.raise_if_any()
    return rows


def check_units(rows: Sequence[ParsedRow]) -> None:
    """Refuse uploads whose times of one benchmark spread over more than ``MAX_SPREAD``x."""
    by_benchmark: dict[str, list[ParsedRow]] = defaultdict(list)
    for row in rows:
        by_benchmark[row.benchmark].append(row)
    errors = _Errors()
    for name, group in by_benchmark.items():
        values = sorted(r.seconds for r in group)
        m = len(values)
        median = 0.5 * (values[(m - 1) // 2] + values[m // 2])
        low, high = median / MAX_SPREAD, median * MAX_SPREAD
        for row in group:
            if not low <= row.seconds <= high:
                errors.add(_key(row.label, "seconds"), (
                    f"{row.seconds:g} s is more than {MAX_SPREAD:g}x from the median "
                    f"{median:.4g} s of benchmark {name!r} in this upload: mixed units?"))
            if errors.full:
                break
    errors.raise_if_any()


# --------------------------------------------------------------------------
# Ingestion


def _chunks(items: Sequence, size: int = LOOKUP_CHUNK):
    for start in range(0, len(items), size):
        yield items[start:start + size]


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
    text_refs = sorted(r for r in refs if isinstance(r, str))
    by_external: dict[str, list[Job]] = defaultdict(list)
    for chunk in _chunks(text_refs):
        for job in Job.objects.filter(external_id__in=chunk).select_related("machine"):
            by_external[job.external_id].append(job)
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
    id_list = sorted(ids)
    found: dict[int, Job] = {}
    for chunk in _chunks(id_list):
        found.update((j.pk, j) for j in Job.objects.filter(pk__in=chunk).select_related("machine"))
    for pk, original_refs in ids.items():
        for ref in original_refs:
            out[ref] = found.get(pk) or f"no job with id or external id {ref!r}"
    return out


def _node_ids(machine: Machine, names: set[str]) -> dict[str, int]:
    """Hostname -> node id on ``machine`` for ``names``: one query per machine."""
    query = Node.objects.filter(machine=machine)
    if len(names) <= LOOKUP_CHUNK:
        query = query.filter(hostname__in=names)
    return {h: pk for h, pk in query.values_list("hostname", "id") if h in names}


_TRAILING_DIGITS = re.compile(r"^(.*?)(\d+)\Z")


def compress_names(names: Sequence[str]) -> str:
    """``hostlists.compress`` with a fast path for one prefix and one digit width.

    NodeSet parses every name (about 15 us each), which dominated a 100,000-row
    upload's summary; the common cluster naming (``hx0001``) folds in a loop.
    """
    matches = [_TRAILING_DIGITS.match(n) for n in names]
    if not names or not all(matches):
        return hostlists.compress(names)
    prefixes = {m.group(1) for m in matches}
    widths = {len(m.group(2)) for m in matches}
    if len(prefixes) != 1 or len(widths) != 1 or len(names) == 1:
        return hostlists.compress(names)
    prefix, width = prefixes.pop(), widths.pop()
    numbers = sorted({int(m.group(2)) for m in matches})
    if len(numbers) == 1:
        return f"{prefix}{numbers[0]:0{width}d}"
    parts, start, prev = [], numbers[0], numbers[0]
    for number in [*numbers[1:], None]:
        if number is not None and number == prev + 1:
            prev = number
            continue
        parts.append(f"{start:0{width}d}" if start == prev else
                     f"{start:0{width}d}-{prev:0{width}d}")
        if number is not None:
            start = prev = number
    return f"{prefix}[{','.join(parts)}]"


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
            for chunk in _chunks(rows, INSERT_BATCH):
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


def ingest(rows: Sequence[ParsedRow]) -> IngestResult:
    """Store validated rows; each (job, benchmark) present replaces what was stored for it."""
    check_units(rows)
    errors = _Errors()
    jobs = _resolve_jobs({r.job for r in rows})
    by_machine: dict[int, set[str]] = defaultdict(set)
    machines: dict[int, Machine] = {}
    for row in rows:
        job = jobs[row.job]
        if isinstance(job, Job):
            by_machine[job.machine_id].add(row.node)
            machines[job.machine_id] = job.machine
    node_ids = {mid: _node_ids(machines[mid], names) for mid, names in by_machine.items()}
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
        if not isinstance(job, Job):
            key = "job" if row.label.startswith("results[") else _key(row.label, "job")
            if key not in errors.errors:
                errors.add(key, job)
            continue
        node_id = node_ids[job.machine_id].get(row.node)
        if node_id is None:
            errors.add(_key(row.label, "node"), (
                f"{row.node} is not a node of machine {job.machine.name} "
                f"(the machine of job {job.pk})"))
            continue
        key = (job.pk, node_id, row.benchmark)
        if key in seen:
            errors.add(_key(row.label, "node"), (
                f"{row.node} already has a {row.benchmark} time for job {job.pk} "
                f"({seen[key]})"))
            continue
        seen[key] = row.label
        groups[(job.pk, row.benchmark)].append(row.node)
        measured = row.measured_at or now
        if measured not in adapted:
            adapted[measured] = adapt(measured)
        objects.append((job.machine_id, job.pk, node_id, row.benchmark, row.seconds,
                        adapted[measured], created))
    errors.raise_if_any()
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
            for chunk in _chunks(sorted(job_ids)):
                replaced += BenchmarkResult.objects.filter(
                    benchmark=benchmark, job_id__in=chunk).delete()[0]
        _bulk_insert(objects)
    job_by_id = {j.pk: j for j in jobs.values() if isinstance(j, Job)}
    summary = [
        {"job": job_id, "external_id": job_by_id[job_id].external_id,
         "machine": job_by_id[job_id].machine.name, "benchmark": benchmark,
         "count": len(names), "nodes": compress_names(names)}
        for (job_id, benchmark), names in groups.items()]
    return IngestResult(stored=len(objects), replaced=replaced, groups=summary)


def ingest_payload(data: Any) -> IngestResult:
    """Validate and store one JSON upload (one job, one benchmark)."""
    return ingest(parse_payload(data))


def ingest_csv(text: str) -> IngestResult:
    """Validate and store one CSV upload (any number of jobs and benchmarks)."""
    return ingest(parse_csv(text))


# --------------------------------------------------------------------------
# Estimation runs


def _check_window(window_days: Any) -> int:
    if isinstance(window_days, bool) or not isinstance(window_days, int) or not (
            1 <= window_days <= MAX_WINDOW_DAYS):
        raise ValidationError({"window_days": [f"must be an integer in 1..{MAX_WINDOW_DAYS}"]})
    return window_days


def start_estimation(machine: Machine, *, window_days: int = DEFAULT_WINDOW_DAYS,
                     benchmark: str = "", user=None) -> EstimationRun:
    """Create an estimation run and enqueue it once the row is committed."""
    from allocation import tasks  # the task module imports this one

    window = _check_window(window_days)
    if benchmark and (problem := _check_benchmark(benchmark)):
        raise ValidationError({"benchmark": [problem]})
    with transaction.atomic():
        run = EstimationRun.objects.create(
            machine=machine, benchmark=benchmark, window_days=window,
            user=user if getattr(user, "is_authenticated", False) else None,
            parameters={"machine": machine.name, "benchmark": benchmark,
                        "window_days": window})
        enqueue(run, tasks.run_estimation)
    return run


def start_all_estimations(window_days: int = DEFAULT_WINDOW_DAYS) -> list[EstimationRun]:
    """One estimation run per machine with results in the window (the beat entry)."""
    since = timezone.now() - timedelta(days=_check_window(window_days))
    machine_ids = (BenchmarkResult.objects.filter(measured_at__gte=since)
                   .values_list("machine_id", flat=True).distinct())
    return [start_estimation(machine, window_days=window_days)
            for machine in Machine.objects.filter(pk__in=list(machine_ids)).order_by("name")]


def _window_runs(machine_id: int, benchmark: str, start: datetime,
                 end: datetime) -> list[tuple[str, str, str, float]]:
    query = BenchmarkResult.objects.filter(machine_id=machine_id, measured_at__gte=start,
                                           measured_at__lte=end)
    if benchmark:
        query = query.filter(benchmark=benchmark)
    return [(str(job), host, bench, seconds) for job, host, bench, seconds in
            query.order_by("measured_at", "id").values_list(
                "job_id", "node__hostname", "benchmark", "seconds")]


def estimate_work(run: EstimationRun, reporter: RunReporter) -> dict[str, Any]:
    """Estimate every benchmark of the run's window; stored by :func:`store_estimates`."""
    end = timezone.now()
    start = end - timedelta(days=run.window_days)
    rows = _window_runs(run.machine_id, run.benchmark, start, end)
    reporter.log(f"{len(rows)} node-runs between {start:%Y-%m-%d %H:%M} and "
                 f"{end:%Y-%m-%d %H:%M} UTC")
    by_benchmark: dict[str, list[tuple]] = defaultdict(list)
    for row in rows:
        by_benchmark[row[2]].append(row)
    estimates = []
    for i, (name, runs) in enumerate(sorted(by_benchmark.items())):
        try:
            est = spares.estimate(runs, benchmark=name)
        except ValueError as exc:
            reporter.log(f"{name}: skipped ({exc})")
        else:
            estimates.append(est.as_dict())
            alpha = "none" if est.alpha_abn is None else f"{est.alpha_abn:.3g}"
            reporter.log(f"{name}: {est.runs} runs, {est.abnormal_runs} abnormal, "
                         f"p_abn={est.p_abn:.4g}, alpha_abn={alpha}, "
                         f"t_bench={est.t_bench:.4g} s")
        reporter.progress((i + 1) / len(by_benchmark))
    if not by_benchmark:
        reporter.log("no benchmark results in the window; nothing estimated")
    return {"window_start": start.isoformat(), "window_end": end.isoformat(),
            "estimates": estimates}


def store_estimates(run: EstimationRun) -> None:
    """Store the run's estimates (inside the transaction that marks it succeeded)."""
    result = run.result or {}
    start = datetime.fromisoformat(result["window_start"])
    end = datetime.fromisoformat(result["window_end"])
    Estimate.objects.filter(run=run).delete()
    Estimate.objects.bulk_create(
        Estimate(machine_id=run.machine_id, benchmark=e["benchmark"], window_start=start,
                 window_end=end, runs=e["runs"], abnormal_runs=e["abnormal_runs"],
                 jobs=e["jobs"], nodes=e["nodes"], t_bench=e["t_bench"],
                 alpha_abn=e["alpha_abn"], p_abn=e["p_abn"],
                 p_abn_low=e["p_abn_interval"][0], p_abn_high=e["p_abn_interval"][1],
                 confidence=e["confidence"], rule=e["rule"], run=run, created_at=end)
        for e in result.get("estimates", []))


def estimate_history(rows: Iterable[ParsedRow], benchmark: str | None = None
                     ) -> dict[str, dict[str, Any]]:
    """Offline estimates per benchmark from parsed rows (no database)."""
    runs = [(str(r.job), r.node, r.benchmark, r.seconds) for r in rows]
    names = sorted({r[2] for r in runs})
    if benchmark is not None:
        if benchmark not in names:
            raise ValidationError({"benchmark": [
                f"{benchmark!r} is not in the input (have: {', '.join(names)})"]})
        names = [benchmark]
    out = {}
    for name in names:
        try:
            out[name] = spares.estimate(runs, benchmark=name).as_dict()
        except ValueError as exc:
            raise ValidationError({"benchmark": [f"{name}: {exc}"]}) from exc
    return out


def latest_estimate(machine: Machine, benchmark: str = "") -> Estimate | None:
    query = Estimate.objects.filter(machine=machine)
    if benchmark:
        query = query.filter(benchmark=benchmark)
    return query.order_by("-created_at", "-id").first()


# --------------------------------------------------------------------------
# Spare recommendation


_SPARE_FIELDS = {"n_node", "n_spare", "p_abn", "alpha_abn", "t_bench", "t_cmpt", "t_comm",
                 "wall_time", "compute_fraction", "max_curve_points"}


def _core_error(exc: ValueError) -> ValidationError:
    message = str(exc)
    first = message.split(" ", 1)[0]
    if first == "alpha_abn" or first in _SPARE_FIELDS:
        return ValidationError({first: [message]})
    return ValidationError({"non_field_errors": [message]})


def recommend(*, n_node: int, t_cmpt: float | None = None, t_comm: float | None = None,
              wall_time: float | None = None, compute_fraction: float | None = None,
              machine: Machine | None = None, benchmark: str = "",
              p_abn: float | None = None, alpha_abn: float | None = None,
              t_bench: float | None = None, per_node: bool = False,
              max_curve_points: int = MAX_CURVE_POINTS) -> dict[str, Any]:
    """The spare recommendation, with parameters given or from the machine's latest estimate.

    Give ``t_cmpt`` (and optionally ``t_comm``, default 0) or ``wall_time`` (and
    optionally ``compute_fraction``, default ``DEFAULT_COMPUTE_FRACTION``).
    Parameters not given explicitly come from the latest estimate of ``machine``
    (of ``benchmark`` when given). The curve holds at most ``max_curve_points``.

    ``per_node``: every free node of ``machine`` (up, not allocated) gets its own
    ``p_i``, the posterior mean from its benchmark history (nodes without
    history get ``p_abn``); the least suspicious nodes are chosen first and the
    answer names them (``chosen``, a hostlist of ``n_total`` nodes).
    """
    if per_node and machine is None:
        raise ValidationError({"per_node": ["needs a machine"]})
    if isinstance(n_node, bool) or not isinstance(n_node, int) or not 1 <= n_node <= MAX_N_NODE:
        raise ValidationError({"n_node": [f"must be an integer in 1..{MAX_N_NODE}"]})
    if wall_time is not None and (t_cmpt is not None or t_comm is not None):
        raise ValidationError({"wall_time": ["give either wall_time or t_cmpt/t_comm"]})
    if wall_time is None and t_cmpt is None:
        raise ValidationError({"t_cmpt": ["give t_cmpt (and t_comm) or wall_time"]})
    if compute_fraction is not None and wall_time is None:
        raise ValidationError({"compute_fraction": ["only applies with wall_time"]})
    try:
        if wall_time is not None:
            fraction = (spares.DEFAULT_COMPUTE_FRACTION if compute_fraction is None
                        else compute_fraction)
            t_cmpt, t_comm = spares.t_cmpt_from_wall(wall_time, fraction), 0.0
        t_comm = 0.0 if t_comm is None else t_comm
    except ValueError as exc:
        raise _core_error(exc) from exc
    given = {"p_abn": p_abn, "alpha_abn": alpha_abn, "t_bench": t_bench}
    missing = [name for name, value in given.items() if value is None]
    estimate = None
    if missing:
        if machine is None:
            raise ValidationError({name: ["give it, or a machine with a stored estimate"]
                                   for name in missing})
        estimate = latest_estimate(machine, benchmark)
        if estimate is None:
            raise ValidationError({"machine": [
                f"machine {machine.name} has no estimate"
                + (f" for benchmark {benchmark!r}" if benchmark else "")
                + f"; run an estimation or give {', '.join(missing)}"]})
        for name in missing:
            given[name] = getattr(estimate, name)
        if given["alpha_abn"] is None:
            raise ValidationError({"alpha_abn": [
                "the latest estimate saw no abnormal run, so it has no alpha_abn; give one"]})
    chosen = None
    try:
        params = spares.SpareParameters(**given)
        if per_node:
            names, node_p = _free_node_probabilities(
                machine, estimate.benchmark if estimate else benchmark, params.p_abn)
            if len(names) < n_node:
                raise ValidationError({"n_node": [
                    f"machine {machine.name} has only {len(names)} free nodes"]})
            rec = spares.recommend_spares_for_nodes(
                node_p, n_node, params.alpha_abn, params.t_bench, t_cmpt=t_cmpt,
                t_comm=t_comm, max_curve_points=max_curve_points)
            chosen = compress_names([names[i] for i in rec.chosen or ()])
        else:
            rec = spares.recommend_spares(n_node, params, t_cmpt=t_cmpt, t_comm=t_comm,
                                          max_curve_points=max_curve_points)
    except ValueError as exc:
        raise _core_error(exc) from exc
    out = rec.as_dict()
    out.pop("chosen", None)
    last = rec.curve_n_spare[-1] if rec.curve_n_spare else n_node
    evaluated = last + 1
    out.update(
        per_node=per_node, chosen=chosen,
        curve_points=len(rec.curve_n_spare),
        curve_downsampled=len(rec.curve_n_spare) < evaluated,
        curve_note=(f"every N_spare from 0 to {last}" if len(rec.curve_n_spare) == evaluated
                    else f"downsampled to {len(rec.curve_n_spare)} evenly spread points of "
                         f"0..{last} (the optimum is exact and always included)"),
        parameters_source="explicit" if estimate is None else (
            "estimate" if len(missing) == 3 else "estimate+explicit"),
        estimate=None if estimate is None else {
            "id": estimate.pk, "machine": machine.name, "benchmark": estimate.benchmark,
            "created_at": estimate.created_at.isoformat(), "runs": estimate.runs,
            "window_start": estimate.window_start.isoformat(),
            "window_end": estimate.window_end.isoformat()},
    )
    return out


def _free_node_probabilities(machine: Machine, benchmark: str, default_p: float
                             ) -> tuple[list[str], list[float]]:
    """Hostnames of the machine's free nodes and each one's posterior ``p_i``."""
    # Not ``exclude(allocations__released_at__isnull=True)``: through the LEFT
    # JOIN that also drops nodes that never had an allocation.
    held = Allocation.objects.filter(node__machine=machine, released_at__isnull=True)
    names = list(Node.objects.filter(machine=machine, state=NodeState.UP)
                 .exclude(pk__in=held.values("node_id"))
                 .order_by("index").values_list("hostname", flat=True))
    posterior = {s.node: s.p_posterior
                 for s in machine_health(machine, benchmark).suspicion}
    return names, [posterior.get(name, default_p) for name in names]


# --------------------------------------------------------------------------
# Selecting the fastest nodes of a job


def select_fastest(*, n_node: int | None = None, times: dict[str, Any] | None = None,
                   job: Job | None = None, benchmark: str = "",
                   abnormal_threshold: float | None = None) -> dict[str, Any]:
    """Keep the ``n_node`` fastest nodes from given times or a job's stored results."""
    if (times is None) == (job is None):
        raise ValidationError({"times": ["give either times or a job"]})
    if job is not None:
        names = sorted(set(job.benchmark_results.values_list("benchmark", flat=True)))
        if not names:
            raise ValidationError({"job": [f"job {job.pk} has no stored benchmark results"]})
        if not benchmark:
            if len(names) > 1:
                raise ValidationError({"benchmark": [
                    f"job {job.pk} has several benchmarks ({', '.join(names)}); name one"]})
            benchmark = names[0]
        elif benchmark not in names:
            raise ValidationError({"benchmark": [
                f"job {job.pk} has no {benchmark!r} results (has: {', '.join(names)})"]})
        times = dict(job.benchmark_results.filter(benchmark=benchmark)
                     .values_list("node__hostname", "seconds"))
        n_node = job.node_count if n_node is None else n_node
    if not isinstance(times, dict) or not times:
        raise ValidationError({"times": ["must be a non-empty object {node: seconds}"]})
    errors = _Errors()
    for name, value in times.items():
        if problem := _check_node(name):
            errors.add(f"times.{name}"[:80], problem)
        _, problem = _check_seconds(value)
        if problem:
            errors.add(f"times.{name}"[:80], problem)
    errors.raise_if_any()
    if n_node is None:
        raise ValidationError({"n_node": ["is required with times"]})
    if isinstance(n_node, bool) or not isinstance(n_node, int) or not 1 <= n_node <= len(times):
        raise ValidationError({"n_node": [f"must be an integer in 1..{len(times)} "
                                          "(the number of nodes with times)"]})
    try:
        sel = spares.select_fastest(times, n_node, abnormal_threshold)
    except ValueError as exc:
        raise ValidationError({"abnormal_threshold": [str(exc)]}) from exc
    return {
        "job": None if job is None else job.pk, "benchmark": benchmark or None,
        "n_node": n_node, "n_spare": len(sel.dropped),
        "keep": hostlists.compress(sel.keep), "dropped": hostlists.compress(sel.dropped),
        "abnormal": hostlists.compress(sel.abnormal),
        "abnormal_kept": hostlists.compress(sel.abnormal_kept),
        "median": sel.median, "ratio_threshold": sel.ratio_threshold, "rule": sel.rule,
    }


@transaction.atomic
def record_selection(job: Job, keep: str, dropped: str) -> dict[str, int]:
    """Mark the job's active allocations: kept nodes primary, dropped nodes excluded."""
    kept_names, dropped_names = set(hostlists.expand(keep)), set(hostlists.expand(dropped))
    active = Allocation.objects.select_for_update().filter(
        job=job, released_at__isnull=True).select_related("node")
    counts = {AllocationRole.PRIMARY: 0, AllocationRole.EXCLUDED: 0}
    for allocation in active:
        host = allocation.node.hostname
        role = (AllocationRole.PRIMARY if host in kept_names else
                AllocationRole.EXCLUDED if host in dropped_names else None)
        if role is not None and allocation.role != role:
            allocation.role = role
            allocation.save(update_fields=["role"])
        if role is not None:
            counts[role] += 1
    return {"primary": counts[AllocationRole.PRIMARY],
            "excluded": counts[AllocationRole.EXCLUDED]}


# --------------------------------------------------------------------------
# Per-node health and drains


@dataclass
class MachineHealth:
    """What the health page and API show for one machine and benchmark."""

    machine: Machine
    benchmark: str
    benchmarks: list[str]
    window_days: int
    window_start: datetime
    runs: int
    ratio_threshold: float | None
    suspicion: list[spares.NodeSuspicion]
    latest: dict[str, tuple[float, bool, float]]  # node -> (seconds, abnormal, ratio)
    rule: dict[str, Any] = field(default_factory=dict)

    @property
    def by_node(self) -> dict[str, spares.NodeSuspicion]:
        return {s.node: s for s in self.suspicion}

    @property
    def candidates(self) -> list[spares.NodeSuspicion]:
        return [s for s in self.suspicion if s.drain_candidate]


def suspicion_level(item: spares.NodeSuspicion | None) -> str:
    """A colour class: nodata, ok, watch (some abnormal runs) or suspect (drain candidate)."""
    if item is None:
        return "nodata"
    if item.drain_candidate:
        return "suspect"
    return "watch" if item.abnormal_runs else "ok"


def benchmarks_of(machine: Machine) -> list[str]:
    return sorted(set(BenchmarkResult.objects.filter(machine=machine)
                      .values_list("benchmark", flat=True).distinct()))


def machine_health(machine: Machine, benchmark: str = "",
                   window_days: int = DEFAULT_WINDOW_DAYS) -> MachineHealth:
    """Classify the window's node-runs of one benchmark and rank the nodes by suspicion."""
    window = _check_window(window_days)
    names = benchmarks_of(machine)
    if benchmark and benchmark not in names:
        raise ValidationError({"benchmark": [f"machine {machine.name} has no {benchmark!r} "
                                             "results"]})
    if not benchmark and names:
        latest = (BenchmarkResult.objects.filter(machine=machine)
                  .order_by("-measured_at", "-id").values_list("benchmark", flat=True).first())
        benchmark = latest or names[0]
    end = timezone.now()
    start = end - timedelta(days=window)
    runs = _window_runs(machine.pk, benchmark, start, end) if benchmark else []
    empty = MachineHealth(machine, benchmark, names, window, start, 0, None, [], {})
    if not runs:
        return empty
    result = spares.classify(runs)
    suspicion = spares.node_suspicion(runs, result.flags, result.ratios)
    latest: dict[str, tuple[float, bool, float]] = {}
    for (_, host, _, seconds), flag, ratio in zip(runs, result.flags.tolist(),
                                                  result.ratios.tolist(), strict=True):
        latest[host] = (seconds, flag, ratio)  # runs are oldest first: the last one wins
    threshold = result.rule["thresholds"][benchmark]["ratio_threshold"]
    return MachineHealth(machine, benchmark, names, window, start, len(runs), threshold,
                         suspicion, latest, result.rule)


def node_history(node: Node, benchmark: str = "", limit: int = 200) -> list[dict[str, Any]]:
    """The node's latest results, newest first, with the job median for context."""
    query = node.benchmark_results.select_related("job")
    if benchmark:
        query = query.filter(benchmark=benchmark)
    results = list(query.order_by("-measured_at", "-id")[:limit])
    medians: dict[tuple[int, str], float] = {}
    pairs = {(r.job_id, r.benchmark) for r in results}
    for job_id, name in pairs:
        values = sorted(BenchmarkResult.objects.filter(job_id=job_id, benchmark=name)
                        .values_list("seconds", flat=True))
        m = len(values)
        medians[(job_id, name)] = 0.5 * (values[(m - 1) // 2] + values[m // 2])
    return [{"job": r.job_id, "job_name": r.job.name, "external_id": r.job.external_id,
             "benchmark": r.benchmark, "seconds": r.seconds, "measured_at": r.measured_at,
             "job_median": medians[(r.job_id, r.benchmark)],
             "ratio": r.seconds / medians[(r.job_id, r.benchmark)]} for r in results]


def drain_reason(item: spares.NodeSuspicion) -> str:
    return (f"suspicion: {item.abnormal_runs}/{item.runs} runs abnormal "
            f"(score {item.score:.2f})")[:255]


def drain_suspect(machine: Machine, hostname: str, benchmark: str = "",
                  window_days: int = DEFAULT_WINDOW_DAYS) -> tuple[Node, str]:
    """Drain one node because of its benchmark history; the reason quotes the evidence."""
    health = machine_health(machine, benchmark, window_days)
    item = health.by_node.get(hostname)
    if item is None or not item.abnormal_runs:
        raise ValidationError({"hostname": [
            f"{hostname} has no abnormal {health.benchmark or 'benchmark'} runs in the last "
            f"{health.window_days} days; drain it from the node page with your own reason"]})
    reason = drain_reason(item)
    nodes = services.set_node_state(machine, hostname, NodeState.DRAINED, reason)
    return nodes[0], reason
