"""The global search: a job id, a host or a hostlist, answered from the database.

Read-side only. A hostlist is read by :mod:`hxportal.hostlists` (names, ranges and
commas; never a shell, never node groups) and bounded by the largest machine's node
count before it is expanded. Jobs the reader may not read (``HX_PRIVATE_DATA``) are
not found.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.db.models import Q
from django.urls import reverse

from allocation.models import Job, Machine, Node
from hxportal import hostlists, ownership
from hxportal.batching import chunks

#: "123", "#123", "job 123", "job:123": a job id (portal or Slurm).
JOB_ID = re.compile(r"^(?:job[\s:]*)?#?(\d{1,18})$", re.IGNORECASE)
#: Jobs listed at most (the count says when there are more).
JOBS_SHOWN = 20
MAX_QUERY = 2000


@dataclass
class SearchResult:
    query: str
    error: str = ""
    jobs: list[Job] = field(default_factory=list)
    more_jobs: bool = False
    #: (machine, matched hostlist, count, node-list URL) per machine
    machines: list[tuple[Machine, str, int, str]] = field(default_factory=list)
    missing: str = ""  # names no machine has, as a hostlist

    @property
    def target(self) -> str:
        """Where to go at once: one job, or nodes of one machine only, else ""."""
        if self.error:
            return ""
        if len(self.jobs) == 1 and not self.machines:
            return self.jobs[0].get_absolute_url()
        if len(self.machines) == 1 and not self.jobs and not self.missing:
            return self.machines[0][3]
        return ""


def _jobs(number: int, user) -> tuple[list[Job], bool]:
    rows = ownership.readable(
        Job.objects.filter(Q(pk=number) | Q(slurm_job_id=number) | Q(external_id=str(number))),
        user, "owner").select_related("machine").order_by("-created_at", "-id")
    found = list(rows[:JOBS_SHOWN + 1])
    return found[:JOBS_SHOWN], len(found) > JOBS_SHOWN


def _hosts(query: str, result: SearchResult) -> None:
    cap = max([m.node_count for m in Machine.objects.only("sides", "concentration")],
              default=1)
    try:
        names = hostlists.expand(query, max_nodes=max(cap, 1))
    except hostlists.HostlistError as exc:
        result.error = f"Not a job id or a hostlist: {exc}."
        return
    per: dict[int, list[str]] = defaultdict(list)
    machines: dict[int, Machine] = {}
    for chunk in chunks(names):
        for node in Node.objects.filter(hostname__in=list(chunk)).select_related("machine") \
                .only("hostname", "machine__name", "machine__sides",
                      "machine__concentration"):
            per[node.machine_id].append(node.hostname)
            machines[node.machine_id] = node.machine
    found = {h for hosts in per.values() for h in hosts}
    result.missing = hostlists.compress(n for n in names if n not in found)
    for machine_id, hosts in sorted(per.items(), key=lambda kv: machines[kv[0]].name):
        machine = machines[machine_id]
        folded = hostlists.compress(hosts)
        url = reverse("allocation:node_list", args=[machine.name]) + "?" + \
            _query("hostlist", folded)
        result.machines.append((machine, folded, len(hosts), url))


def _query(key: str, value: str) -> str:
    return urlencode({key: value})


def search(query: str, user) -> SearchResult:
    """What ``query`` names: jobs by id (portal id, Slurm id or external id) and, for
    anything else, the nodes of a host or hostlist per machine."""
    query = (query or "").strip()[:MAX_QUERY]
    result = SearchResult(query=query)
    if not query:
        return result
    match = JOB_ID.match(query)
    if match:
        result.jobs, result.more_jobs = _jobs(int(match.group(1)), user)
        if result.jobs or not query.isdigit():
            return result
    _hosts(query, result)
    return result
