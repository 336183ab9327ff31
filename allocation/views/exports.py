"""CSV downloads of the job and node lists: the same filters, role and row rules as
the pages (``HX_PRIVATE_DATA`` included), every matching row (not one page), streamed.

Cells a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab, CR) get
a leading apostrophe: job names come from users.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from datetime import datetime

from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.views import View

from allocation.filtersets import JobFilterSet, NodeFilterSet
from allocation.models import Job, Machine
from allocation.services import jobs, queries
from hxportal.views import FilteredListMixin, OwnedRowsMixin, RoleRequiredMixin

#: Rows fetched (and hostlists read) per round trip.
CHUNK = 1000
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


class _Echo:
    """A file-like object whose write returns the line (for csv.writer)."""

    def write(self, value: str) -> str:
        return value


def cell(value) -> str:
    """One CSV cell: ISO 8601 times, empty for None, formulas defused.

    >>> cell(None), cell(3), cell("=1+1"), cell("-x")
    ('', '3', "'=1+1", "'-x")
    """
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    text = str(value)
    return "'" + text if text.startswith(_FORMULA) and not _number(text) else text


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _stream(header: list[str], rows: Iterable[list]) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(header)
    for row in rows:
        yield writer.writerow([cell(v) for v in row])


class CSVView(RoleRequiredMixin, FilteredListMixin, View):
    """GET: the list's rows as ``text/csv``; invalid filters: 400 naming them."""

    header: list[str] = []

    def filename(self) -> str:
        raise NotImplementedError

    def rows(self, queryset) -> Iterable[list]:
        raise NotImplementedError

    def base_queryset(self):
        raise NotImplementedError

    def get(self, request, *args, **kwargs):
        queryset = self.base_queryset()
        if self.filterset.errors:
            problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in self.filterset.errors.items())
            return HttpResponse(f"invalid filters: {problems}\n", status=400,
                                content_type="text/plain; charset=utf-8")
        response = StreamingHttpResponse(_stream(self.header, self.rows(queryset)),
                                         content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{self.filename()}"'
        return response


class JobCSVView(OwnedRowsMixin, CSVView):
    """The job list (``/jobs/``) with its filters, as CSV."""

    owner_field = "owner"
    filterset_class = JobFilterSet
    header = ["id", "name", "source", "machine", "nodes", "status", "owner", "slurm_job_id",
              "slurm_user", "slurm_state", "slurm_partition", "external_id", "pattern",
              "policy", "submitted", "started", "ended", "runtime_s", "exit_code",
              "primary_hostlist"]

    def filename(self) -> str:
        return "jobs.csv"

    def base_queryset(self):
        return self.filtered(self.readable(Job.objects.select_related(
            "owner", "machine").order_by("-created_at", "-id")))

    def rows(self, queryset) -> Iterator[list]:
        batch: list[Job] = []
        for job in queryset.iterator(chunk_size=CHUNK):
            batch.append(job)
            if len(batch) == CHUNK:
                yield from self._rows(batch)
                batch = []
        yield from self._rows(batch)

    @staticmethod
    def _rows(batch: list[Job]) -> Iterator[list]:
        if not batch:
            return
        names = jobs.jobs_hostlists([j.pk for j in batch])
        for j in batch:
            yield [j.pk, j.name, j.get_source_display(), j.machine.name, j.node_count,
                   j.status, j.owner.username, j.slurm_job_id, j.slurm_user, j.slurm_state,
                   j.slurm_partition, j.external_id, j.pattern, j.policy, j.created_at,
                   j.allocated_at, j.finished_at, j.actual_runtime, j.exit_code,
                   names[j.pk]["primary"]]


class NodeCSVView(CSVView):
    """A machine's node list (``/machines/<name>/nodes/``) with its filters, as CSV."""

    filterset_class = NodeFilterSet
    header = ["hostname", "machine", "index", "switch", "coords", "port", "state", "reason",
              "state_changed_at", "held", "job"]

    def filename(self) -> str:
        return f"{self.machine.name}-nodes.csv"

    def base_queryset(self):
        self.machine = get_object_or_404(Machine, name=self.kwargs["name"])
        return self.filtered(queries.nodes_with_job(
            self.machine.nodes.all(), reader=self.request.user).order_by("index"),
            machine=self.machine.name)

    def rows(self, queryset) -> Iterator[list]:
        for n in queryset.iterator(chunk_size=CHUNK):
            yield [n.hostname, self.machine.name, n.index, n.switch,
                   ",".join(str(c) for c in n.coords), n.local, n.state, n.state_reason,
                   n.state_changed_at, "yes" if n.held else "no", n.job]
