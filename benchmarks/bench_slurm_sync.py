"""Time the Slurm sync (``allocation.services.slurm_sync``) on a real local Slurm with 1,000 jobs.

Usage: .venv/bin/python benchmarks/bench_slurm_sync.py [--sizes 512,4096] [--jobs 1000]
       [--repeat 5] [--change-repeat 3] [--change 50] [--max-live 512]
       [--database-url postgres://postgres@127.0.0.1:5432/NAME] [--baseline-rev REV]
       [--base-port N] [--no-accounting]

For each size (512 = 8x8, c = 8; 4096 = 16x16, c = 16) it starts the local
cluster (``allocation.slurm.LocalCluster``: munged, slurmdbd on the local
MariaDB unless ``--no-accounting``, slurmctld, slurmd) in a scratch directory
and puts ``--jobs`` plain sbatch jobs in it: 40 % finished (completed, failed
with exit 3, cancelled while held), 35 % running (half pinned with ``-w``, half
placed by Slurm, 1 or 2 nodes each), 25 % pending (held, pinned to busy nodes
or to nodes without a slurmd, or larger than the nodes that are ever free). Finished jobs
reach the sync through ``squeue`` (MinJobAge 3600 s) and ``sacct``, as they
do with accounting.

Every node is in slurm.conf, but at most ``--max-live`` of them get a slurmd
(the first ones in endpoint order): a slurmd holds the whole node table, so at
4,096 nodes each takes about 8 MiB and all 4,096 would need about 33 GiB. The
others stay ``unknown*`` in Slurm (never answered; the portal keeps them up),
run no job, and pending jobs pinned to them wait (ReqNodeNotAvail). So at 4,096
the sync reads 4,096 nodes and the same kind of 1,000 jobs, all running on the
live nodes. The script prints how many run and their memory.

Then one portal process per database (SQLite; PostgreSQL with
``--database-url``, in a scratch database ``<name>_sync``) and per
implementation (this checkout's; with ``--baseline-rev`` also that revision's
``allocation/services/slurm_sync.py`` and ``allocation/slurm/parse.py``, in a
database of its own) creates the machine and times, in turn, each process warm:

* ``first``: the first sync (an emptied portal: every job and node state is new),
  ``--repeat`` times;
* ``repeat``: a sync with nothing changed, ``--repeat`` times;
* ``change``: after ``--change`` running jobs end (4 in 5 complete, 1 in 5 is
  cancelled) and as many new ones are submitted (half pinned to the freed
  nodes), ``--change-repeat`` times (each round adds jobs: the sync sees
  1,000 + ``--change`` x round).

Printed per row: medians of the Slurm commands' own time (``sinfo``,
``squeue``, ``sacct``; run by the sync's client, timed in its runner), parsing
their output, reading the portal, planning, writing (the transaction, commit
included) and the whole ``sync_machine`` call, and the ratio baseline/this
when a baseline ran. After every sync the portal is checked against Slurm
(jobs by status, nodes held, no duplicate); a mismatch exits 1. Needs root,
Debian's slurmctld, slurmd, slurm-client, munge (slurmdbd and MariaDB for
accounting). Nothing is left running: every cluster is stopped (and its
accounting database dropped) as soon as its size is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _databases import fresh_postgres

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from allocation.slurm import Accounting, ClusterSpec, LocalCluster, SlurmClient  # noqa: E402
from allocation.slurm.local import MYSQL_SOCKET, find_free_base_port  # noqa: E402
from allocation.slurm.processes import comm, marked_processes, read_bytes  # noqa: E402

SHAPES = {64: ((4, 4), 4), 512: ((8, 8), 8), 1024: ((8, 8), 16), 2048: ((16, 16), 8),
          4096: ((16, 16), 16)}
FOREVER = "sleep 1000000; exit 0"
NICE = "--nice=1000000"
#: Node counts of running jobs, in turn (1.25 nodes a job on average).
RUN_SIZES = (1, 1, 2, 1, 1, 1, 2, 1)

CHILD = r"""
import importlib.util, json, os, sys, time
import django; django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.db.models import Count
from allocation.models import Allocation, Job, Node, NodeEvent, SlurmLink
from allocation.services import machines
from allocation.slurm import SlurmClient
from allocation.slurm.client import run_command

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module

base = os.environ.get("HX_BENCH_BASELINE_DIR")
if base:
    # The baseline's parsers, where the client looks them up, and its sync.
    import allocation.slurm.client as client_module
    parse = load("hx_bench_parse_baseline", os.path.join(base, "parse.py"))
    for name in ("parse_sacct", "parse_sinfo_json", "parse_squeue_json"):
        setattr(client_module, name, getattr(parse, name))
    mod = load("hx_bench_sync_baseline", os.path.join(base, "slurm_sync.py"))
else:
    from allocation.services import slurm_sync as mod

calls, phases = [], {}
def runner(argv, timeout, env):
    started = time.perf_counter()
    try:
        return run_command(argv, timeout, env)
    finally:
        calls.append((os.path.basename(argv[0]), time.perf_counter() - started))

def timed(name, fn):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            phases[name] = phases.get(name, 0.0) + time.perf_counter() - started
    return wrapper

for name, attr in (("slurm", "_read_slurm"), ("portal", "_link_placed"),
                   ("portal", "_portal_side"), ("plan", "plan_sync"), ("write", "_apply")):
    setattr(mod, attr, timed(name, getattr(mod, attr)))

sides, c = json.loads(os.environ["HX_BENCH_SHAPE"])
machine = machines.create_machine(name="bench", sides=sides, concentration=c,
                                  hostname_pattern="hx{n:04d}")
mod.configure(machine, enabled=True)
client = SlurmClient(os.environ["HX_SLURM_CONF"], timeout=300, runner=runner)

def reset():
    Job.objects.filter(machine=machine).delete()
    NodeEvent.objects.filter(node__machine=machine).delete()
    Node.objects.filter(machine=machine).update(state="up", state_reason="")
    SlurmLink.objects.filter(machine=machine).update(history_until=None, lease_until=None)

def state():
    jobs = Job.objects.filter(machine=machine, slurm_job_id__isnull=False)
    by_status = dict(jobs.values_list("status").annotate(n=Count("id")))
    return {"jobs": jobs.count(), "ids": jobs.values("slurm_job_id").distinct().count(),
            "status": by_status,
            "held": Allocation.objects.filter(node__machine=machine,
                                              released_at__isnull=True).count()}

def sync():
    calls.clear(); phases.clear()
    started = time.perf_counter()
    report = mod.sync_machine(machine, client=client)
    total = time.perf_counter() - started
    commands = {}
    for name, seconds in calls:
        commands[name] = commands.get(name, 0.0) + seconds
    keep = ("jobs_seen", "jobs_created", "jobs_updated", "jobs_finished", "node_changes",
            "allocations_added", "allocations_released", "deferred", "accounting", "status")
    return {"total": total, "phases": dict(phases), "commands": commands,
            "report": {k: v for k, v in report.as_dict().items() if k in keep},
            "warnings": report.warnings[:3], "state": state()}

print("@@" + json.dumps({"ready": machine.node_count}), flush=True)
for line in sys.stdin:
    command = line.strip()
    if command == "quit":
        break
    if command == "first":
        reset()
    print("@@" + json.dumps(sync()), flush=True)
"""


# ---------------------------------------------------------------------- Slurm side
class Jobs:
    """Submits the job mix and the small changes through sbatch (the bench's own calls)."""

    def __init__(self, cluster: LocalCluster, rng: random.Random) -> None:
        self.cluster = cluster
        self.client: SlurmClient = cluster.client(timeout=120)
        self.rng = rng
        self.live = list(cluster.spec.live_hostnames)
        self.idle_hosts = [h for h in cluster.spec.hostnames if h not in set(self.live)]
        self.pinned: dict[int, tuple[str, ...]] = {}   # running pinned job -> its nodes
        self.unpinned: list[int] = []                   # running, placed by Slurm
        self.keep: set[int] = set()                     # running jobs never ended here

    def sbatch(self, *args: str, wrap: str = FOREVER) -> int:
        out = self.client.run("sbatch", "--parsable", "--output=/dev/null",
                              f"--chdir={self.cluster.paths.jobs}", *args, f"--wrap={wrap}")
        return int(out.strip().split(";", 1)[0])

    def many(self, argvs: list[tuple[tuple[str, ...], str]]) -> list[int]:
        with ThreadPoolExecutor(4) as pool:
            return list(pool.map(lambda a: self.sbatch(*a[0], wrap=a[1]), argvs))

    def wait(self, ids: list[int], done, what: str, timeout: float = 900) -> None:
        wanted = set(ids)
        deadline = time.monotonic() + timeout
        while True:
            jobs = {j.job_id: j for j in self.client.jobs() if j.job_id in wanted}
            left = [i for i in wanted if i not in jobs or not done(jobs[i])]
            if not left:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(left)} jobs not {what} after {timeout:g} s")
            time.sleep(2)

    def build(self, total: int) -> dict[str, int]:
        finished, running = int(total * 0.40), int(total * 0.35)
        pending = total - finished - running
        sizes = [RUN_SIZES[i % len(RUN_SIZES)] for i in range(running)]
        if sum(sizes) > 0.9 * len(self.live):
            raise SystemExit(f"{running} running jobs need {sum(sizes)} nodes: "
                             f"raise --max-live above {sum(sizes) / 0.9:.0f}")
        # Finished: completed, failed (exit 3), cancelled while held.
        kinds = [("true", ()), ("true", ()), ("true", ()), ("exit 3", ()),
                 ("true", ()), ("cancel", ())]
        argvs, cancel_at = [], []
        for i in range(finished):
            script, _ = kinds[i % len(kinds)]
            extra = ("--hold",) if script == "cancel" else ()
            argvs.append(((f"--nodes={1 + i % 4}", "--time=60", *extra),
                          "true" if script == "cancel" else script))
            if script == "cancel":
                cancel_at.append(i)
        ids = self.many(argvs)
        held = [ids[i] for i in cancel_at]
        self.client.run("scancel", *map(str, held))
        self.wait(ids, lambda j: j.finished, "finished")
        # Running, pinned: consecutive chunks of the shuffled live nodes.
        order = self.live[:]
        self.rng.shuffle(order)
        pinned_sizes, free_sizes = sizes[: running // 2], sizes[running // 2:]
        chunks, at = [], 0
        for size in pinned_sizes:
            chunks.append(tuple(sorted(order[at:at + size])))
            at += size
        ids = self.many([((f"--nodelist={','.join(c)}", f"--nodes={len(c)}"), FOREVER)
                         for c in chunks])
        self.pinned = dict(zip(ids, chunks, strict=True))
        self.wait(ids, lambda j: j.state == "RUNNING", "running")
        self.unpinned = self.many([((f"--nodes={s}",), FOREVER) for s in free_sizes])
        self.wait(self.unpinned, lambda j: j.state == "RUNNING", "running")
        # Pending: held; pinned to a busy node (of a job never ended here) or to a
        # node without a slurmd; more nodes than are ever free.
        # A large --nice puts them behind the jobs of the small changes, so FIFO
        # scheduling does not hold those back behind jobs that cannot start.
        targets = list(self.pinned)[: pending // 3 + 1]
        self.keep = set(targets)
        # More nodes than are ever free: the kept jobs never end.
        too_large = len(self.live) - sum(len(self.pinned[i]) for i in targets) + 1
        argvs = []
        for i in range(pending):
            kind = i % 3
            if kind == 0:
                argvs.append(((f"--nodes={1 + i % 8}", "--hold"), FOREVER))
            elif kind == 1 and self.idle_hosts and i % 2:
                host = self.idle_hosts[i % len(self.idle_hosts)]
                argvs.append(((f"--nodelist={host}", "--nodes=1", NICE), FOREVER))
            elif kind == 1:
                host = self.pinned[targets[i % len(targets)]][0]
                argvs.append(((f"--nodelist={host}", "--nodes=1", NICE), FOREVER))
            else:
                argvs.append(((f"--nodes={too_large}", NICE), FOREVER))
        ids = self.many(argvs)
        self.wait(ids, lambda j: j.pending and j.reason not in ("", "None"), "pending")
        return self.counts()

    def counts(self) -> dict[str, int]:
        return dict(Counter(("finished" if j.finished else "running" if j.active
                             else "pending") for j in self.client.jobs()))

    def change(self, count: int) -> None:
        """``count`` running jobs end (4 in 5 complete, the rest are cancelled) and
        ``count`` new ones come (half pinned to the freed nodes)."""
        current = {j.job_id: j for j in self.client.jobs()}
        candidates = (set(self.unpinned) | (set(self.pinned) - self.keep))
        ending = self.rng.sample(sorted(i for i in candidates
                                        if i in current and current[i].state == "RUNNING"),
                                 count)
        freed = [h for i in ending for h in current[i].nodes]
        cancel = ending[: count // 5]
        self.client.run("scancel", *map(str, cancel))
        self.end_sleeps(ending[count // 5:])
        self.wait(ending, lambda j: j.finished, "finished")
        for i in ending:
            self.pinned.pop(i, None)
            if i in self.unpinned:
                self.unpinned.remove(i)
        half = count // 2
        argvs = [((f"--nodelist={h}", "--nodes=1"), FOREVER) for h in freed[:half]]
        argvs += [((f"--nodes={1 + i % 2}",), FOREVER) for i in range(count - len(argvs))]
        ids = self.many(argvs)
        for i, (args, _) in zip(ids, argvs, strict=True):
            if args[0].startswith("--nodelist="):
                self.pinned[i] = (args[0].split("=", 1)[1],)
            else:
                self.unpinned.append(i)
        self.wait(ids, lambda j: j.state == "RUNNING", "running", timeout=180)

    def end_sleeps(self, ids: list[int]) -> None:
        """End jobs as if their work finished: their ``sleep`` exits, the script exits 0."""
        wanted = {f"SLURM_JOB_ID={i}".encode() for i in ids}
        for pid in marked_processes(self.cluster.spec.state_dir):
            if comm(pid) != "sleep":
                continue
            if wanted & set(read_bytes(f"/proc/{pid}/environ").split(b"\0")):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass

    def expected(self) -> dict:
        """Slurm's side of the check: jobs by portal status and nodes held."""
        from allocation.slurm.sync_plan import merge_jobs, portal_status

        history = []
        try:
            history = self.client.history(_utc_days_ago(31))
        except Exception:  # noqa: BLE001 - no accounting: squeue alone
            history = []
        jobs = merge_jobs(self.client.jobs(), history)
        status = Counter(portal_status(j) for j in jobs)
        return {"jobs": len(jobs), "status": dict(status),
                "held": sum(len(j.nodes) for j in jobs if j.active)}


def _utc_days_ago(days: int):
    from datetime import UTC, datetime, timedelta
    return datetime.now(UTC) - timedelta(days=days)


# ---------------------------------------------------------------------- portal side
class Child:
    """One portal process (a database and an implementation) that syncs on request."""

    def __init__(self, label: str, env: dict[str, str]) -> None:
        self.label = label
        self.process = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        self.ready = self.read()

    def read(self) -> dict:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("@@"):
                return json.loads(line[2:])
        raise RuntimeError(f"{self.label}: the portal process ended "
                           f"(exit {self.process.wait()})")

    def ask(self, command: str) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.ask("quit")
            except (RuntimeError, BrokenPipeError, OSError):
                pass
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def child_env(args, database_url: str, data_dir: str, conf: str, size: int,
              module: str | None) -> dict[str, str]:
    sides, c = SHAPES[size]
    env = {**os.environ, "DATABASE_URL": database_url, "HX_DATA_DIR": data_dir,
           "DJANGO_SETTINGS_MODULE": "hxportal.settings.local", "HX_SLURM_CONF": conf,
           "HX_SLURM_TIMEOUT": "300", "LOG_LEVEL": "WARNING",
           "HX_SLURM_ACCOUNTING": "auto" if args.accounting else "off",
           "HX_BENCH_SHAPE": json.dumps([list(sides), c])}
    env.pop("HX_BENCH_BASELINE_DIR", None)
    if module:
        env["HX_BENCH_BASELINE_DIR"] = module
    return env


def databases(args, size: int, impl: str, data_dir: str) -> list[tuple[str, str]]:
    out = [("sqlite", f"sqlite:///{data_dir}/{impl}-{size}.sqlite3")]
    if args.database_url:
        own = args.database_url.rsplit("/", 1)[1].split("?")[0] or "hxbench"
        out.append(("postgres", fresh_postgres(args.database_url, f"{own}_sync_{impl}")))
    return out


# ---------------------------------------------------------------------- the run
def check(result: dict, expected: dict, label: str) -> str:
    got = result["state"]
    problems = []
    if got["jobs"] != got["ids"]:
        problems.append(f"{got['jobs'] - got['ids']} duplicate jobs")
    if got["jobs"] != expected["jobs"]:
        problems.append(f"{got['jobs']} jobs, Slurm has {expected['jobs']}")
    if got["held"] != expected["held"]:
        problems.append(f"{got['held']} nodes held, Slurm {expected['held']}")
    if got["status"] != expected["status"]:
        problems.append(f"statuses {got['status']} != Slurm {expected['status']}")
    if result["report"].get("deferred"):
        problems.append(f"{result['report']['deferred']} deferred")
    return f"MISMATCH {label}: " + "; ".join(problems) if problems else ""


def med(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarize(rows: list[dict]) -> dict[str, float]:
    out = {"total": med([r["total"] for r in rows])}
    for name in ("sinfo", "squeue", "sacct"):
        out[name] = med([r["commands"].get(name, 0.0) for r in rows])
    commands = [sum(r["commands"].values()) for r in rows]
    out["commands"] = med(commands)
    out["parse"] = med([r["phases"].get("slurm", 0.0) - c for r, c in zip(rows, commands,
                                                                           strict=True)])
    for name in ("portal", "plan", "write"):
        out[name] = med([r["phases"].get(name, 0.0) for r in rows])
    out["other"] = med([r["total"] - sum(r["phases"].values()) for r in rows])
    return out


HEAD = (f"{'nodes':>5} {'live':>5} {'db':<8} {'code':<8} {'sync':<7} {'n':>2} {'jobs':>5} "
        f"{'sinfo':>6} {'squeue':>6} {'sacct':>6} {'parse':>6} {'portal':>6} {'plan':>6} "
        f"{'write':>6} {'other':>6} {'total s':>8} {'base/new':>8}")


def line(size: int, live: int, db: str, impl: str, kind: str, rows: list[dict],
         ratio: float | None) -> str:
    s = summarize(rows)
    seen = int(med([r["report"]["jobs_seen"] for r in rows]))
    text = (f"{size:>5} {live:>5} {db:<8} {impl:<8} {kind:<7} {len(rows):>2} {seen:>5} "
            f"{s['sinfo']:>6.3f} {s['squeue']:>6.3f} {s['sacct']:>6.3f} {s['parse']:>6.3f} "
            f"{s['portal']:>6.3f} {s['plan']:>6.3f} {s['write']:>6.3f} {s['other']:>6.3f} "
            f"{s['total']:>8.3f}")
    return text + (f" {ratio:>7.2f}x" if ratio else "")


def start_cluster(args, size: int) -> LocalCluster:
    sides, c = SHAPES[size]
    live = min(size, args.max_live)
    low, high = (int(p) for p in os.environ.get("HX_SLURM_TEST_PORTS", "22000-32767")
                 .split("-", 1))
    state_dir = tempfile.mkdtemp(prefix=f"hx-bench-sync-{size}-", dir="/tmp")
    os.chmod(state_dir, 0o755)  # noqa: S103 - munged wants its directories searchable
    spec = ClusterSpec(
        machine=f"bench{size}", sides=sides, concentration=c,
        hostnames=tuple(f"hx{i:04d}" for i in range(1, size + 1)), state_dir=state_dir,
        base_port=args.base_port or find_free_base_port(size, low, high,
                                                        accounting=args.accounting),
        accounting=Accounting() if args.accounting else None,
        cluster_name=f"hxsync{size}_{os.getpid()}", live_nodes=live if live < size else 0)
    return LocalCluster(spec, progress=lambda text: print(f"    {text}", flush=True))


def memory_lines(cluster: LocalCluster) -> list[str]:
    usage = cluster.memory_by_command()
    out = []
    for name in ("slurmd", "slurmstepd", "slurmctld", "slurmdbd", "munged", "sh", "sleep"):
        row = usage.get(name)
        if row and row["count"]:
            out.append(f"{name} x{row['count']}: PSS {row['pss'] / 1024:.0f} MiB "
                       f"({row['pss'] / row['count'] / 1024:.1f} MiB each, RSS "
                       f"{row['rss'] / row['count'] / 1024:.1f} MiB each)")
    return out


def mem_total_gib() -> float:
    for text in Path("/proc/meminfo").read_text().splitlines():
        if text.startswith("MemTotal:"):
            return int(text.split()[1]) / 1024 / 1024
    return 0.0


def prepare(args, cluster: LocalCluster) -> Jobs:
    """Start the cluster, put the job mix in it, print its memory."""
    size, live = cluster.spec.node_count, len(cluster.spec.live_hostnames)
    up = cluster.start(timeout=max(300.0, live / 2))
    print(f"    up in {up:.1f} s", flush=True)
    jobs = Jobs(cluster, random.Random(size))
    started = time.monotonic()
    counts = jobs.build(args.jobs)
    print(f"    jobs in Slurm after {time.monotonic() - started:.0f} s: {counts}", flush=True)
    for text in memory_lines(cluster):
        print(f"    memory: {text}", flush=True)
    slurmd = cluster.memory_by_command().get("slurmd")
    if slurmd and live < size:
        each = slurmd["pss"] / slurmd["count"] / 1024
        print(f"    all {size} slurmd would take about {size * each / 1024:.1f} GiB "
              f"(PSS); this host has {mem_total_gib():.1f} GiB in all", flush=True)
    return jobs


Results = dict[tuple[str, str, str], list[dict]]


def measure(args, children: dict[tuple[str, str], Child], jobs: Jobs,
            size: int) -> tuple[Results, bool]:
    """The rounds: every portal process syncs in turn, each result checked."""
    for child in children.values():   # warm: one untimed first sync each
        child.ask("first")
    results: Results = {}
    ok = True

    def round_(kind: str) -> None:
        nonlocal ok
        expected = jobs.expected()
        for (db, impl), child in children.items():
            result = child.ask("first" if kind == "first" else "sync")
            results.setdefault((db, impl, kind), []).append(result)
            problem = check(result, expected, f"{size} {db}/{impl} {kind}")
            if problem:
                ok = False
                print(f"    {problem}", flush=True)

    for kind, count in (("first", args.repeat), ("repeat", args.repeat)):
        print(f"    {kind}: {count} rounds", flush=True)
        for _ in range(count):
            round_(kind)
    for n in range(args.change_repeat):
        jobs.change(args.change)
        print(f"    change {n + 1}: {jobs.counts()}", flush=True)
        round_("change")
    print(f"    Slurm at the end: {jobs.counts()}", flush=True)
    return results, ok


def table(results: Results, dbs: list[str], size: int, live: int) -> list[str]:
    lines = []
    for kind in ("first", "repeat", "change"):
        for db in dbs:
            mine = results.get((db, "this", kind), [])
            base = results.get((db, "baseline", kind))
            ratio = (med([r["total"] for r in base]) / med([r["total"] for r in mine])
                     if base else None)
            lines.append(line(size, live, db, "this", kind, mine, None))
            if base:
                lines.append(line(size, live, db, "baseline", kind, base, ratio))
    sample = results.get(("sqlite", "this", "change"), [{}])[-1].get("report", {})
    lines.append(f"{'':>5} last change sync: {json.dumps(sample)}")
    return lines


def run_size(args, size: int, baseline: str | None) -> tuple[list[str], bool]:
    cluster = start_cluster(args, size)
    spec = cluster.spec
    live = len(spec.live_hostnames)
    print(f"== {size} nodes in slurm.conf, slurmd for {live}"
          + ("" if live == size else f" (the first {live}; the other {size - live} "
             "never answer: unknown* in Slurm, no job runs there)"), flush=True)
    children: dict[tuple[str, str], Child] = {}
    data_dir = tempfile.mkdtemp(prefix="hxbench-sync-")
    try:
        jobs = prepare(args, cluster)
        impls = [("this", None)] + ([("baseline", baseline)] if baseline else [])
        for impl, module in impls:
            for db, url in databases(args, size, impl, data_dir):
                env = child_env(args, url, data_dir, spec.paths.slurm_conf, size, module)
                children[(db, impl)] = Child(f"{db}/{impl}", env)
        print(f"    portal processes: {', '.join('/'.join(k) for k in children)}", flush=True)
        results, ok = measure(args, children, jobs, size)
    finally:
        for child in children.values():
            child.close()
        cluster.purge()   # stop at once: a large cluster holds gigabytes
        shutil.rmtree(data_dir, ignore_errors=True)
    return table(results, list(dict.fromkeys(d for d, _ in children)), size, live), ok


def baseline_module(rev: str) -> str:
    """A directory with that revision's slurm_sync.py and parse.py (the sync's
    writes and the parsers of Slurm's output)."""
    where = Path(tempfile.mkdtemp(prefix="hxbench-sync-base-"))
    for path in ("allocation/services/slurm_sync.py", "allocation/slurm/parse.py"):
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout
        (where / Path(path).name).write_text(text)
    return str(where)


def _stop(signum, frame):
    raise SystemExit(f"stopped by signal {signum}")


def main() -> int:
    signal.signal(signal.SIGTERM, _stop)
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="512,4096")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--change-repeat", type=int, default=3)
    parser.add_argument("--change", type=int, default=50)
    parser.add_argument("--max-live", type=int, default=512,
                        help="slurmd started at most (the first nodes); the rest never answer")
    parser.add_argument("--database-url", default=None,
                        help="also PostgreSQL: scratch databases <name>_sync_* on its server")
    parser.add_argument("--baseline-rev", default=None,
                        help="also time slurm_sync.py and parse.py of this git revision")
    parser.add_argument("--base-port", type=int, default=None)
    parser.add_argument("--no-accounting", dest="accounting", action="store_false")
    args = parser.parse_args()
    if not all(shutil.which(b) or os.path.exists(f"/usr/sbin/{b}")
               for b in ("slurmctld", "slurmd", "sinfo", "munged")):
        print("slurmctld, slurmd, slurm-client and munge are needed: apt-get install -y "
              "slurmctld slurmd slurm-client munge", file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("the local Slurm cluster runs its daemons as root", file=sys.stderr)
        return 2
    if args.accounting and not (os.path.exists("/usr/sbin/slurmdbd")
                                and os.path.exists(MYSQL_SOCKET)):
        print("accounting needs slurmdbd and MariaDB (apt-get install -y slurmdbd "
              "mariadb-server), or --no-accounting", file=sys.stderr)
        return 2
    baseline = baseline_module(args.baseline_rev) if args.baseline_rev else None
    out, ok = [], True
    for size in (int(s) for s in args.sizes.split(",")):
        lines, good = run_size(args, size, baseline)
        out += lines
        ok = ok and good
    print(f"medians in seconds; {args.jobs} jobs at first; accounting "
          f"{'on (sacct)' if args.accounting else 'off'}; 'other' = lease and link rows")
    print(HEAD)
    for text in out:
        print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
