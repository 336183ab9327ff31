"""What the submit filter (contrib/slurm/hxportal_filter.lua) adds to each sbatch.

Usage: .venv/bin/python benchmarks/bench_slurm_filter.py [--count 20] [--nodes 8]
       [--base-port N (default: a free span in 22000-32767)] [--workers 2]

Starts the portal (gunicorn, production settings over plain HTTP, a scratch
SQLite database with a 4x4, c = 4 machine on hx[001-064]) and a 64-node local
Slurm cluster with the filter as its cli_filter/lua, partitions ``batch``
(opted in) and ``debug`` (not). Then times ``sbatch --hold -N <nodes>``
``--count`` times per case and prints the median, p90 and max wall time of one
sbatch, and the median added to the baseline (the same sbatch through a
slurm.conf without CliFilterPlugins):

* not opted in: the filter loads, reads its config and leaves the job alone;
* portal up, cached: the same question each time (the portal's stored answer);
* portal up, fresh: a new question each time (another -t; analytic, Simulate=no);
* portal down: a closed port (connection refused).

A silent portal costs the filter's Timeout (5 s by default) plus the baseline;
it is not timed here. Needs root, Debian's Slurm 22.05 packages, lua-socket
and lua-cjson; exits 2 without them. Nothing is left running.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from allocation.slurm import ClusterSpec, LocalCluster, Partition  # noqa: E402
from allocation.slurm.local import find_free_base_port  # noqa: E402

SCRIPT = ROOT / "contrib" / "slurm" / "hxportal_filter.lua"
HOSTS = tuple(f"hx{i:03d}" for i in range(1, 65))
SETUP = r"""
import django; django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from allocation.services import machines
from hxportal import services as accounts
machines.create_machine(name="bench", sides=[4, 4], concentration=4, hostlist="hx[001-064]")
u, _ = accounts.upsert_user("bench", "operator")
print(accounts.issue_token(u, "bench"))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def missing() -> str:
    if os.geteuid() != 0:
        return "run as root (the local cluster's daemons)"
    for name in ("slurmctld", "slurmd", "munged", "sbatch"):
        if not (shutil.which(name) or os.path.exists(f"/usr/sbin/{name}")):
            return f"{name} not found: apt-get install -y slurmctld slurmd slurm-client munge"
    if not Path("/usr/share/lua/5.1/socket/http.lua").exists():
        return "lua-socket not installed: apt-get install -y lua-socket lua-cjson"
    return ""


def start_portal(data_dir: Path, workers: int) -> tuple[subprocess.Popen, str, str]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.production",
           "HX_DATA_DIR": str(data_dir), "SECRET_KEY": "bench-" + "x9Y" * 20,
           "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0", "LOG_LEVEL": "WARNING",
           "DATABASE_URL": f"sqlite:///{data_dir}/bench.sqlite3",
           "STATIC_ROOT": f"{data_dir}/static"}
    (data_dir / "static").mkdir()
    token = subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True,
                           capture_output=True, text=True).stdout.split()[-1]
    port = free_port()
    server = subprocess.Popen([str(Path(sys.executable).with_name("gunicorn")),
                               "hxportal.wsgi:application", "--bind", f"127.0.0.1:{port}",
                               "--workers", str(workers), "--log-level", "warning"],
                              cwd=ROOT, env=env)
    return server, f"http://127.0.0.1:{port}", token


def warm_up(url: str, token: str, workers: int) -> float:
    """Wait for gunicorn; ask a few questions so every worker has compiled the
    allocator. Returns the seconds of the first answer."""
    body = json.dumps({"machine": "bench", "node_count": 8, "pattern": "unknown",
                       "wall_time": 60, "simulate": False}).encode()
    first = 0.0
    for attempt in range(4 * workers + 100):
        request = urllib.request.Request(  # noqa: S310 - the portal on loopback
            f"{url}/api/v1/recommendations/", data=body, method="POST",
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"})
        started = time.monotonic()
        try:
            urllib.request.urlopen(request, timeout=60).read()  # noqa: S310 - loopback
        except OSError:
            time.sleep(0.2)
            continue
        first = first or time.monotonic() - started
        if attempt > 4 * workers:
            break
    return first


def start_cluster(base_port: int | None) -> LocalCluster:
    spec = ClusterSpec(
        machine="bench", sides=(4, 4), concentration=4, hostnames=HOSTS,
        state_dir=tempfile.mkdtemp(prefix="hx-bench-filter-", dir="/tmp"),
        base_port=base_port or find_free_base_port(len(HOSTS), accounting=False),
        partitions=(Partition("batch", default=True), Partition("debug")),
        cli_filter_plugins=("lua",))
    os.chmod(spec.state_dir, 0o755)  # noqa: S103 - munged needs it searchable
    cluster = LocalCluster(spec)
    cluster.start(timeout=120)
    etc = Path(cluster.conf).parent
    shutil.copy(SCRIPT, etc / "cli_filter.lua")
    text = Path(cluster.conf).read_text()
    (etc / "nofilter.conf").write_text("\n".join(
        line for line in text.splitlines() if not line.startswith("CliFilterPlugins=")) + "\n")
    return cluster


def configure(cluster: LocalCluster, portal_url: str, token_file: Path) -> None:
    Path(cluster.conf).with_name("hxportal_filter.conf").write_text(
        f"PortalURL={portal_url}\nMachine=bench\nTokenFile={token_file}\nPartitions=batch\n"
        "DefaultPartition=batch\nTimeout=5\nSimulate=no\n")


def timed_sbatch(conf: str, args: list[str], script: Path) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_"))}
    started = time.monotonic()
    done = subprocess.run(["sbatch", "--hold", "--parsable", "--output=/dev/null", *args,
                           str(script)], env={**env, "SLURM_CONF": conf},
                          capture_output=True, text=True, timeout=60, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"sbatch failed: {done.stderr.strip()}")
    return seconds


def row(label: str, seconds: list[float], baseline: float | None) -> float:
    ms = sorted(s * 1000 for s in seconds)
    median = statistics.median(ms)
    p90 = ms[max(0, round(0.9 * len(ms)) - 1)]
    added = "" if baseline is None else f"{median - baseline:>+10.1f}"
    print(f"{label:<34}{median:>9.1f}{p90:>9.1f}{ms[-1]:>9.1f}{added:>10}", flush=True)
    return median


def measure(cluster: LocalCluster, url: str, token_file: Path, work: Path, count: int,
            nodes: int) -> None:
    script = work / "job.sh"
    script.write_text("#!/bin/bash\nhostname\n")
    conf, plain = cluster.conf, str(Path(cluster.conf).with_name("nofilter.conf"))
    base_args = ["-N", str(nodes), "-t", "30"]
    print(f"{count} x sbatch --hold -N {nodes} per case; milliseconds of one sbatch")
    print(f"{'case':<34}{'median':>9}{'p90':>9}{'max':>9}{'added':>10}")
    configure(cluster, url, token_file)
    baseline = row("no filter (baseline)",
                   [timed_sbatch(plain, base_args, script) for _ in range(count)], None)
    row("filter, partition not opted in",
        [timed_sbatch(conf, [*base_args, "-p", "debug"], script) for _ in range(count)],
        baseline)
    row("filter, portal up, cached answer",
        [timed_sbatch(conf, base_args, script) for _ in range(count)], baseline)
    row("filter, portal up, fresh question",
        [timed_sbatch(conf, ["-N", str(nodes), "-t", str(31 + i)], script)
         for i in range(count)], baseline)
    configure(cluster, f"http://127.0.0.1:{free_port()}", token_file)
    row("filter, portal down (refused)",
        [timed_sbatch(conf, base_args, script) for _ in range(count)], baseline)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=20, help="sbatch runs per case")
    parser.add_argument("--nodes", type=int, default=8, help="-N of each job")
    parser.add_argument("--base-port", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    args = parser.parse_args()
    problem = missing()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="hx-bench-filter-data-"))
    server, url, token = start_portal(work, args.workers)
    cluster = None
    try:
        first = warm_up(url, token, args.workers)
        print(f"portal: gunicorn, {args.workers} workers; first recommendation "
              f"{first * 1000:.0f} ms (compiles the allocator; not in the rows)")
        token_file = work / "token"
        token_file.write_text(token + "\n")
        cluster = start_cluster(args.base_port)
        measure(cluster, url, token_file, work, args.count, args.nodes)
    finally:
        if cluster is not None:
            cluster.purge()
        server.terminate()
        server.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
