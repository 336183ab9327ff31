"""Parsing and checking a benchmark upload (JSON or CSV) before anything is stored:
every row's fields, one error per row and field, units that do not mix.

The rules are those of :mod:`health.services.ingest`, which stores what this
module accepts. Given an :class:`ErrorCollector`, the parsers add every problem to
it and return every row they could read (a row remembers which of its fields were
refused), so the upload reports all of its problems at once; without one they
raise at the end, as before.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from allocation.models import Node
from health import maths
from health.constants import BENCHMARK_NAME_RE

MAX_ROWS = 200_000
MAX_SPREAD = 100.0
MAX_ERRORS = 50
MAX_FUTURE = timedelta(days=1)
CSV_COLUMNS = ("job", "benchmark", "node", "seconds")
#: A health round (docs/domain.md section 5.6): the machine instead of a job.
CSV_ROUND_COLUMNS = ("machine", "benchmark", "node", "seconds")
CSV_OPTIONAL = ("measured_at",)

_BENCHMARK_NAME = re.compile(BENCHMARK_NAME_RE)
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_NON_FINITE_WORDS = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity",
                     "-infinity"}
_UNIT_SUFFIX = re.compile(r"^[+-]?[\d.]+(?:[eE][+-]?\d+)?\s*([A-Za-zµ]+)$")


# --------------------------------------------------------------------------
# Parsing and validation


@dataclass(slots=True)
class ParsedRow:
    """One benchmark time; ``label`` prefixes its error keys. A row of a health round
    names its ``machine`` and no job. ``bad`` holds the fields that were refused (the
    later checks skip them)."""

    label: str
    job: str | int | None
    benchmark: str
    node: str
    seconds: float
    measured_at: datetime | None
    machine: str = ""
    bad: frozenset[str] = frozenset()


class ErrorCollector:
    """Collects ``{key: [message]}`` up to ``MAX_ERRORS`` keys, then stops the parse."""

    def __init__(self) -> None:
        self.errors: dict[str, list[str]] = {}

    def add(self, key: str, message: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.setdefault(key, []).append(message)

    @property
    def full(self) -> bool:
        return len(self.errors) >= MAX_ERRORS

    def fields_of(self, label: str) -> frozenset[str]:
        """The fields of row ``label`` that have a problem (``seconds``, ``node``, ...)."""
        out = set()
        for key in self.errors:
            for prefix in (f"{label}.", f"{label}, "):
                if key.startswith(prefix):
                    out.add(key[len(prefix):])
        return frozenset(out)

    def raise_if_any(self) -> None:
        """Raise every problem at once, in row order (the upload's own fields first)."""
        if self.errors:
            ordered = sorted(self.errors.items(), key=lambda item: _row_order(item[0]))
            raise ValidationError(dict(ordered))


def _row_order(key: str) -> tuple[int, int]:
    """Sort key of an error key: fields of the upload first, then by row number."""
    match = re.match(r"^(?:row (\d+)|results\[(\d+)\])", key)
    if match is None:
        return (0, 0)
    return (1, int(match.group(1) or match.group(2)))


def error_key(label: str, name: str) -> str:
    """Where an error is reported: ``results[3].seconds`` (JSON), ``row 5, seconds`` (CSV)."""
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
    return check_seconds(float(value))


def check_seconds(value: Any) -> tuple[float | None, str]:
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


def check_benchmark(name: Any) -> str:
    if not isinstance(name, str) or not _BENCHMARK_NAME.match(name):
        return ("must be 1-64 letters, digits, '_', '.', ':', '+' or '-', "
                "starting with a letter or digit")
    return ""


def check_node(name: Any) -> str:
    if not isinstance(name, str) or not Node.hostname_is_valid(name):
        return "must be a hostname (letters, digits, '_', '.', '-')"
    return ""


def check_machine_name(name: Any) -> str:
    if not isinstance(name, str) or not 0 < len(name.strip()) <= 64:
        return "must be a machine name (at most 64 characters)"
    return ""


def _check_job(ref: Any) -> str:
    if isinstance(ref, bool):
        return "must be a job id or external id"
    if isinstance(ref, int):
        return "" if ref > 0 else "must be a positive id"
    if isinstance(ref, str) and 0 < len(ref.strip()) <= 64:
        return ""
    return "must be a job id or external id (at most 64 characters)"


def parse_payload(data: Any, errors: ErrorCollector | None = None) -> list[ParsedRow]:
    """Validate a JSON upload ``{"job" | "machine", "benchmark", "results": [{"node",
    "seconds"}]}``; ``machine`` instead of ``job`` is a health round."""
    own = errors is None
    errors = ErrorCollector() if errors is None else errors
    if not isinstance(data, dict):
        raise ValidationError({"non_field_errors": ["expected a JSON object"]})
    now = timezone.now()
    job, machine, benchmark, default_time = _payload_header(data, errors, now)
    results = data.get("results")
    if not isinstance(results, list) or not results:
        errors.add("results", "must be a non-empty list of {node, seconds}")
        results = []
    if len(results) > MAX_ROWS:
        raise ValidationError({"results": [f"{len(results)} rows; at most {MAX_ROWS} per upload"]})
    rows: list[ParsedRow] = []
    job_ref = job.strip() if isinstance(job, str) else job
    header_bad = {name for name in ("job", "machine", "benchmark") if name in errors.errors}
    for i, item in enumerate(results):
        if errors.full:
            break
        label = f"results[{i}]"
        if (result := _payload_result(label, item, errors, now)) is not None:
            node, seconds, measured_at = result
            rows.append(ParsedRow(label, job_ref, benchmark, node, seconds,
                                  measured_at or default_time,
                                  machine=machine.strip() if isinstance(machine, str) else "",
                                  bad=errors.fields_of(label) | header_bad))
    if own:
        errors.raise_if_any()
    return rows


def _payload_header(data: dict[str, Any], errors: ErrorCollector,
                    now: datetime) -> tuple[Any, Any, Any, datetime | None]:
    """Check the upload's own fields: ``job`` or ``machine`` (a health round),
    ``benchmark``, the default ``measured_at`` (and no unknown ones); returns them as
    given, the time parsed."""
    known = {"job", "machine", "benchmark", "results", "measured_at"}
    for name in sorted(set(data) - known):
        errors.add(name, "unknown field")
    job, machine = data.get("job"), data.get("machine")
    if job is None and machine is None:
        errors.add("job", "is required: the job's id, or give machine for a health round "
                          "(a fleet-wide benchmark outside any job)")
    elif job is not None and machine is not None:
        errors.add("machine", "give job or machine, not both: machine is for a health "
                              "round outside any job")
    elif job is not None and (problem := _check_job(job)):
        errors.add("job", problem)
    elif machine is not None and (problem := check_machine_name(machine)):
        errors.add("machine", problem)
    benchmark = data.get("benchmark")
    if benchmark is None:
        errors.add("benchmark", "is required")
    elif problem := check_benchmark(benchmark):
        errors.add("benchmark", problem)
    default_time, problem = _parse_measured_at(data.get("measured_at"), now)
    if problem:
        errors.add("measured_at", problem)
    return (None if machine is not None and job is None else job), machine, benchmark, \
        default_time


def _payload_result(label: str, item: Any, errors: ErrorCollector, now: datetime
                    ) -> tuple[Any, float, datetime | None] | None:
    """Check one entry of ``results``: ``(node, seconds, measured_at)``, seconds 0.0 when
    refused; None when the entry is not an object at all."""
    if not isinstance(item, dict):
        errors.add(label, "must be an object {node, seconds[, measured_at]}")
        return None
    for name in sorted(set(item) - {"node", "seconds", "measured_at"}):
        errors.add(f"{label}.{name}", "unknown field")
    node = item.get("node")
    if problem := check_node(node):
        errors.add(f"{label}.node", problem)
    seconds, problem = check_seconds(item.get("seconds"))
    if problem:
        errors.add(f"{label}.seconds", problem)
    measured_at, problem = _parse_measured_at(item.get("measured_at"), now)
    if problem:
        errors.add(f"{label}.measured_at", problem)
    return node, seconds or 0.0, measured_at


def parse_csv(text: str, max_rows: int | None = None,
              errors: ErrorCollector | None = None) -> list[ParsedRow]:
    """Validate CSV text with header ``job,benchmark,node,seconds[,measured_at]`` (or
    ``machine`` first: a health round).

    Needs no database, so ``hx_estimate`` can use it offline (with a larger
    ``max_rows`` than an upload's ``MAX_ROWS``).
    """
    own = errors is None
    errors = ErrorCollector() if errors is None else errors
    limit = MAX_ROWS if max_rows is None else max_rows
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    width, first = _csv_width(reader)
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
            if (row := _csv_row(label, cells, width, first, errors, now)) is not None:
                rows.append(row)
    except csv.Error as exc:
        errors.add(f"row {reader.line_num}", f"not valid CSV: {exc}")
    if not rows and not errors.errors:
        errors.add("row 2", "the CSV has a header but no rows")
    if own:
        errors.raise_if_any()
    return rows


def _csv_width(reader: Iterator[list[str]]) -> tuple[int, str]:
    """Read and check the header row; the number of cells every row must have and
    its first column (``job``, or ``machine`` for a health round)."""
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise ValidationError({"row 1, header": ["the CSV is empty"]}) from None
    except csv.Error as exc:
        raise ValidationError({"row 1, header": [f"not CSV: {exc}"]}) from None
    allowed = [list(columns) + extra for columns in (CSV_COLUMNS, CSV_ROUND_COLUMNS)
               for extra in ([], list(CSV_OPTIONAL))]
    if header not in allowed:
        raise ValidationError({"row 1, header": [
            f"expected {','.join(CSV_COLUMNS)}[,{','.join(CSV_OPTIONAL)}] (or machine "
            f"instead of job, for a health round), got {','.join(header)[:200]}"]})
    return len(header), header[0]


def _csv_row(label: str, cells: list[str], width: int, first: str, errors: ErrorCollector,
             now: datetime) -> ParsedRow | None:
    """Check one data row (seconds 0.0 when refused); None when it has the wrong width."""
    if len(cells) != width:
        errors.add(label, f"has {len(cells)} cells, expected {width}")
        return None
    owner_ref, benchmark, node, seconds_text = (c.strip() for c in cells[:4])
    check = check_machine_name if first == "machine" else _check_job
    if problem := check(owner_ref):
        errors.add(f"{label}, {first}", problem)
    if problem := check_benchmark(benchmark):
        errors.add(f"{label}, benchmark", problem)
    if problem := check_node(node):
        errors.add(f"{label}, node", problem)
    seconds, problem = _parse_seconds_text(seconds_text)
    if problem:
        errors.add(f"{label}, seconds", problem)
    measured_at = None
    if width == 5:
        measured_at, problem = _parse_measured_at(cells[4], now)
        if problem:
            errors.add(f"{label}, measured_at", problem)
    job, machine = (None, owner_ref) if first == "machine" else (owner_ref, "")
    return ParsedRow(label, job, benchmark, node, seconds or 0.0, measured_at,
                     machine=machine, bad=errors.fields_of(label))


def check_units(rows: Sequence[ParsedRow], errors: ErrorCollector | None = None) -> None:
    """Refuse uploads whose times of one benchmark spread over more than ``MAX_SPREAD``x
    (rows whose time or benchmark was already refused are left out)."""
    by_benchmark: dict[str, list[ParsedRow]] = defaultdict(list)
    for row in rows:
        if not row.bad & {"seconds", "benchmark"}:
            by_benchmark[row.benchmark].append(row)
    own = errors is None
    errors = ErrorCollector() if errors is None else errors
    for name, group in by_benchmark.items():
        median = maths.median(r.seconds for r in group)
        low, high = median / MAX_SPREAD, median * MAX_SPREAD
        for row in group:
            if not low <= row.seconds <= high:
                errors.add(error_key(row.label, "seconds"), (
                    f"{row.seconds:g} s is more than {MAX_SPREAD:g}x from the median "
                    f"{median:.4g} s of benchmark {name!r} in this upload: mixed units?"))
            if errors.full:
                break
    if own:
        errors.raise_if_any()

