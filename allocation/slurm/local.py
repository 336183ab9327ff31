"""A local Slurm cluster on this host: write the configuration, start and stop the daemons.

One munged (own key and socket under the state directory, so the host's munge
is untouched), slurmdbd when the spec has accounting, one slurmctld and one
``slurmd -N <node>`` per node, every daemon daemonising itself. Each daemon is
started with ``HX_SLURM_CLUSTER=<state dir>`` in its environment; that marker,
which slurmstepd inherits, is how :meth:`LocalCluster.stop` finds exactly the
processes this cluster started (the daemons, job steps and the jobs' own
processes below them) and nothing else, even when a pid file is stale.

Used by ``manage.py hx_slurm_cluster`` and the ``slurm`` test layer::

    cluster = LocalCluster(spec, progress=print)
    cluster.start()                 # returns when every node answers
    client = cluster.client()       # an allocation.slurm.SlurmClient on its slurm.conf
    cluster.stop()                  # idempotent
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from allocation.slurm.client import SlurmClient, SlurmError
from allocation.slurm.conf import (
    PORT_LIMIT,
    SERVICE_PORTS,
    ClusterSpec,
    slurm_conf,
    slurmdbd_conf,
    topology_conf,
)
from allocation.slurm.processes import (
    MARKER,
    comm,
    last_error,
    listening,
    marked_processes,
    port_busy,
    read_bytes,
    signal_all,
    wait_gone,
)

DAEMONS = ("munged", "slurmdbd", "slurmctld", "slurmd")
#: slurmd processes started at once (each daemonises and its parent exits).
SPAWN_BATCH = 32
MYSQL_SOCKET = "/run/mysqld/mysqld.sock"
Progress = Callable[[str], None]


class ClusterError(RuntimeError):
    """The local cluster could not be started, stopped or read; one line."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split())[:400])


@dataclass(frozen=True)
class ClusterStatus:
    """What runs for one state directory, and what slurmctld says of the nodes."""

    state_dir: str
    node_count: int
    daemons: dict[str, int] = field(default_factory=dict)
    nodes: dict[str, int] = field(default_factory=dict)
    error: str = ""
    #: Nodes that get a slurmd (``ClusterSpec.live_nodes``; 0: every node).
    live_count: int = 0

    @property
    def running(self) -> bool:
        return any(self.daemons.values())

    @property
    def complete(self) -> bool:
        """munged, slurmctld and every slurmd run."""
        return (self.daemons.get("munged", 0) >= 1 and self.daemons.get("slurmctld", 0) >= 1
                and self.daemons.get("slurmd", 0) == (self.live_count or self.node_count))

    def lines(self) -> list[str]:
        running = ", ".join(f"{name} {count}" for name, count in self.daemons.items() if count)
        nodes = ", ".join(f"{count} {label}" for label, count in sorted(self.nodes.items()))
        out = [f"state dir {self.state_dir}: " + (running or "nothing running")]
        if nodes:
            live = (f", {self.live_count} with a slurmd"
                    if self.live_count and self.live_count < self.node_count else "")
            out.append(f"nodes ({self.node_count}{live}): {nodes}")
        if self.error:
            out.append(f"slurmctld: {self.error}")
        return out


def find_free_base_port(nodes: int, low: int = 22000, high: int = PORT_LIMIT, *,
                   accounting: bool = True, tries: int = 50,
                   rng: random.Random | None = None) -> int:
    """A random base port in [low, high) whose ports for a cluster of ``nodes``
    (slurmctld, slurmdbd, every slurmd) are all free now (tests, benchmarks)."""
    span = SERVICE_PORTS + nodes
    pick = rng or random.Random()
    for _ in range(tries):
        base = pick.randrange(low, min(high, PORT_LIMIT) - span)
        ports = [base, *([base + 1] if accounting else []),
                 *range(base + SERVICE_PORTS, base + span)]
        if not any(port_busy(port) for port in ports):
            return base
    raise ClusterError(f"no free span of {span} ports in {low}-{high}")



# ---------------------------------------------------------------------- cluster
class LocalCluster:
    """Start, stop and inspect the local cluster of one :class:`ClusterSpec`."""

    def __init__(self, spec: ClusterSpec, *, bin_dir: str | None = None,
                 progress: Progress | None = None) -> None:
        self.spec = spec
        self.paths = spec.paths
        self.bin_dir = bin_dir
        self.progress = progress or (lambda message: None)

    @classmethod
    def from_dir(cls, state_dir: str | os.PathLike, **kwargs) -> LocalCluster:
        """The cluster whose ``cluster.json`` is in ``state_dir`` (written by start)."""
        path = Path(state_dir).resolve() / "cluster.json"
        try:
            spec = ClusterSpec.from_json(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ClusterError(f"no cluster in {path.parent} ({path.name} missing)") from exc
        except (ValueError, TypeError) as exc:
            raise ClusterError(f"{path} is unreadable: {exc}") from exc
        return cls(spec, **kwargs)

    # ------------------------------------------------------------------ helpers
    @property
    def conf(self) -> str:
        return self.paths.slurm_conf

    def environment(self) -> dict[str, str]:
        """What a shell needs to use this cluster's commands."""
        return {"SLURM_CONF": self.conf}

    def client(self, timeout: float = 30.0) -> SlurmClient:
        return SlurmClient(self.conf, timeout=timeout, bin_dir=self.bin_dir)

    def _binary(self, name: str) -> str:
        found = (os.path.join(self.bin_dir, name) if self.bin_dir else None) or shutil.which(
            name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}")
                           if os.access(p, os.X_OK)), None)
        if not found or not os.access(found, os.X_OK):
            package = {"munged": "munge", "slurm": "slurm-client"}.get(name, name)
            raise ClusterError(f"{name} not found: apt-get install -y {package}")
        return found

    def _daemon_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env.update({"SLURM_CONF": self.conf, MARKER: self.spec.state_dir, "LC_ALL": "C"})
        return env

    def _spawn(self, argv: list[str]) -> subprocess.Popen:
        with open(Path(self.paths.log) / "spawn.stderr", "ab") as errors:
            return subprocess.Popen(argv, env=self._daemon_env(), stdin=subprocess.DEVNULL,  # noqa: S603
                                    stdout=errors, stderr=errors, cwd=self.paths.log,
                                    start_new_session=True)

    def _run_daemon(self, argv: list[str], what: str, log_file: str) -> None:
        """Start a self-daemonising daemon and wait for its parent to return."""
        try:
            code = self._spawn(argv).wait(timeout=30)
        except subprocess.TimeoutExpired as exc:
            raise ClusterError(f"{what} did not daemonise within 30 s") from exc
        if code != 0:
            raise ClusterError(f"{what} failed to start (exit {code}): "
                               f"{last_error(log_file) or 'see ' + log_file}")

    def _wait_port(self, port: int, what: str, log_file: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not listening(port):
            if time.monotonic() > deadline:
                raise ClusterError(f"{what} is not listening on port {port} after {timeout:g} s: "
                                   f"{last_error(log_file) or 'see ' + log_file}")
            time.sleep(0.2)

    # ------------------------------------------------------------------ configuration
    def write_configs(self) -> None:
        """Create the state directory and write slurm.conf, topology.conf, the spec
        (cluster.json), slurmdbd.conf (0600) and a munge key (0600, kept)."""
        p = self.paths
        for directory in (p.root, str(Path(p.slurm_conf).parent), p.munge_dir, p.state,
                          p.spool, p.run, p.log, p.jobs):
            Path(directory).mkdir(parents=True, exist_ok=True)
        # munged wants its socket directory searchable by all, and the root too.
        for directory in (p.root, p.munge_dir):
            os.chmod(directory, 0o755)  # noqa: S103  # nosec B103 - munged needs it searchable
        for host in self.spec.live_hostnames:
            Path(p.spool, host).mkdir(exist_ok=True)
        Path(p.slurm_conf).write_text(slurm_conf(self.spec), encoding="utf-8")
        Path(p.topology_conf).write_text(topology_conf(self.spec), encoding="utf-8")
        Path(p.spec_json).write_text(self.spec.to_json() + "\n", encoding="utf-8")
        if self.spec.accounting is not None:
            _write_private(p.slurmdbd_conf, slurmdbd_conf(self.spec).encode())
        if not os.path.exists(p.munge_key):
            _write_private(p.munge_key, os.urandom(128))

    def check_ports(self) -> None:
        busy = [port for port in self.spec.daemon_ports() if port_busy(port)]
        if busy:
            raise ClusterError(f"{len(busy)} port(s) of this cluster are in use, first {busy[0]} "
                               f"(another cluster or service?): choose another base port "
                               f"(now {self.spec.base_port})")

    # ------------------------------------------------------------------ start
    def start(self, timeout: float | None = None) -> float:
        """Write the configuration and start every daemon; return the seconds it
        took for every node to answer. Raises :class:`ClusterError`."""
        started = time.monotonic()
        binaries = {name: self._binary(name) for name in DAEMONS
                    if name != "slurmdbd" or self.spec.accounting}
        self._binary("sinfo")
        running = marked_processes(self.spec.state_dir)
        if running:
            raise ClusterError(f"a cluster is already running in {self.spec.state_dir} "
                               f"({len(running)} processes): stop it first")
        self.check_ports()
        self.write_configs()
        self._start_munged(binaries["munged"])
        if self.spec.accounting:
            self._start_slurmdbd(binaries["slurmdbd"])
        self.start_slurmctld()
        self._start_slurmds(binaries["slurmd"])
        limit = timeout if timeout is not None else max(60.0, len(self.spec.live_hostnames) / 8)
        self.wait_for_nodes(limit)
        elapsed = time.monotonic() - started
        self.progress(f"cluster {self.spec.cluster_name} up in {elapsed:.1f} s")
        return elapsed

    def _start_munged(self, binary: str) -> None:
        p = self.paths
        log_file = p.log_file("munged")
        self._run_daemon([binary, "--force", f"--socket={p.munge_socket}",
                          f"--key-file={p.munge_key}", f"--pid-file={p.munge_pid}",
                          f"--seed-file={p.munge_dir}/munged.seed", f"--log-file={log_file}"],
                         "munged", log_file)
        deadline = time.monotonic() + 10
        while not os.path.exists(p.munge_socket):
            if time.monotonic() > deadline:
                raise ClusterError(f"munged made no socket within 10 s: {last_error(log_file)}")
            time.sleep(0.1)
        self.progress(f"munged: {p.munge_socket}")

    def _start_slurmdbd(self, binary: str) -> None:
        acct = self.spec.accounting
        assert acct is not None
        if not _database_reachable(acct.db_host, acct.db_port):
            raise ClusterError(f"MariaDB/MySQL is not reachable at {acct.db_host}:{acct.db_port} "
                               "(accounting needs it: apt-get install -y mariadb-server, or "
                               "start without accounting)")
        log_file = self.paths.log_file("slurmdbd")
        self._run_daemon([binary], "slurmdbd", log_file)
        self._wait_port(self.spec.slurmdbd_port, "slurmdbd", log_file, 90)
        self.progress(f"slurmdbd: port {self.spec.slurmdbd_port}, database {acct.db_name}")

    def start_slurmctld(self, timeout: float = 30) -> None:
        """Start slurmctld (again) and wait for its port; state is recovered from
        StateSaveLocation."""
        log_file = self.paths.log_file("slurmctld")
        self._run_daemon([self._binary("slurmctld"), "-f", self.conf], "slurmctld", log_file)
        self._wait_port(self.spec.slurmctld_port, "slurmctld", log_file, timeout)
        self.progress(f"slurmctld: port {self.spec.slurmctld_port}")

    def _start_slurmds(self, binary: str) -> None:
        hosts = self.spec.live_hostnames
        for first in range(0, len(hosts), SPAWN_BATCH):
            batch = [(host, self._spawn([binary, "-f", self.conf, "-N", host]))
                     for host in hosts[first:first + SPAWN_BATCH]]
            for host, process in batch:
                try:
                    code = process.wait(timeout=60)
                except subprocess.TimeoutExpired as exc:
                    raise ClusterError(f"slurmd -N {host} did not daemonise within 60 s") from exc
                if code != 0:
                    log_file = self.paths.log_file("slurmd", host)
                    raise ClusterError(f"slurmd -N {host} failed to start (exit {code}): "
                                       f"{last_error(log_file) or 'see ' + log_file}")
            done = min(first + SPAWN_BATCH, len(hosts))
            if done == len(hosts) or done % 256 == 0:
                self.progress(f"slurmd: {done}/{len(hosts)} started")

    def wait_for_nodes(self, timeout: float) -> dict[str, int]:
        """Wait until slurmctld sees every node answer (every live node, when only
        some get a slurmd); return node counts by label."""
        client = self.client(timeout=min(30.0, timeout))
        deadline = time.monotonic() + timeout
        live = set(self.spec.live_hostnames)
        shown = ""
        while True:
            try:
                nodes = client.nodes()
            except SlurmError as exc:
                nodes, error = [], str(exc)
            else:
                error = ""
            labels = Counter(node.label for node in nodes)
            answering = sum(1 for node in nodes if node.responding and node.name in live)
            line = f"nodes answering: {answering}/{len(live)}"
            if line != shown:
                self.progress(line)
                shown = line
            if answering == len(live):
                return dict(labels)
            if time.monotonic() > deadline:
                raise ClusterError(
                    f"only {answering} of {len(live)} nodes answer after "
                    f"{timeout:g} s ({dict(labels) or error}); logs in {self.paths.log}")
            time.sleep(1.0)

    # ------------------------------------------------------------------ stop
    def stop_slurmctld(self, sig: int = signal.SIGKILL) -> None:
        """Stop only slurmctld (tests: the controller goes away, the nodes stay)."""
        pids = [p for p in marked_processes(self.spec.state_dir) if comm(p) == "slurmctld"]
        signal_all(pids, sig)
        left = wait_gone(pids, time.monotonic() + 15)
        if left:
            raise ClusterError(f"slurmctld (pid {left[0]}) did not stop")

    def _cancel_jobs(self) -> None:
        if not listening(self.spec.slurmctld_port):
            return
        client = self.client(timeout=15)
        try:
            ids = [str(j.job_id) for j in client.jobs() if j.active or j.pending]
            if ids:
                self.progress(f"cancelling {len(ids)} job(s)")
                client.run("scancel", *ids)
                deadline = time.monotonic() + 15
                while time.monotonic() < deadline and any(j.active for j in client.jobs()):
                    time.sleep(0.5)
        except SlurmError as exc:
            self.progress(f"could not cancel jobs first ({exc}); stopping anyway")

    def stop(self, timeout: float = 30.0) -> int:
        """Cancel the jobs, stop every process of this cluster (SIGTERM, then SIGKILL),
        munged last. Idempotent; returns the number of processes stopped."""
        pids = marked_processes(self.spec.state_dir)
        if not pids:
            self.progress(f"nothing running for {self.spec.state_dir}")
            return 0
        self._cancel_jobs()
        pids = marked_processes(self.spec.state_dir)
        munged = [p for p in pids if comm(p) == "munged"]
        others = [p for p in pids if p not in munged]
        self.progress(f"stopping {len(others)} process(es)")
        for group in (others, munged):
            signal_all(group, signal.SIGTERM)
            left = wait_gone(group, time.monotonic() + timeout / 2)
            signal_all(left, signal.SIGKILL)
            left = wait_gone(left, time.monotonic() + 10)
            if left:
                raise ClusterError(f"{len(left)} process(es) did not stop, first pid {left[0]}")
        # Whatever was started below them meanwhile (a job's last child).
        rest = marked_processes(self.spec.state_dir)
        signal_all(rest, signal.SIGKILL)
        for pid_file in Path(self.paths.run).glob("*.pid"):
            pid_file.unlink(missing_ok=True)
        self.progress(f"stopped {len(pids)} process(es)")
        return len(pids)

    def purge(self) -> None:
        """Stop, drop the accounting database (if any) and remove the state directory."""
        self.stop()
        if self.spec.accounting is not None:
            drop_database(self.spec)
        shutil.rmtree(self.spec.state_dir, ignore_errors=True)

    # ------------------------------------------------------------------ status
    def status(self) -> ClusterStatus:
        pids = marked_processes(self.spec.state_dir)
        counts = Counter(comm(p) for p in pids)
        daemons = {name: counts.get(name, 0) for name in (*DAEMONS, "slurmstepd")}
        nodes: dict[str, int] = {}
        error = ""
        if daemons["slurmctld"]:
            try:
                nodes = dict(Counter(n.label for n in self.client(timeout=15).nodes()))
            except SlurmError as exc:
                error = str(exc)
        return ClusterStatus(self.spec.state_dir, self.spec.node_count, daemons, nodes, error,
                             live_count=len(self.spec.live_hostnames))

    def memory_kib(self) -> dict[str, int]:
        """Resident (RSS) and proportional (PSS) memory of every process of the cluster."""
        total: Counter = Counter()
        for usage in self.memory_by_command().values():
            total.update({"rss": usage["rss"], "pss": usage["pss"]})
        return dict(total)

    def memory_by_command(self) -> dict[str, dict[str, int]]:
        """Per command name (``slurmd``, ``slurmstepd``, ``sleep``...): how many
        processes of the cluster run it and their RSS and PSS in KiB."""
        usage: dict[str, Counter] = {}
        for pid in marked_processes(self.spec.state_dir):
            rollup = read_bytes(f"/proc/{pid}/smaps_rollup").decode(errors="replace")
            row = usage.setdefault(comm(pid) or "?", Counter())
            row["count"] += 1
            for line in rollup.splitlines():
                key, _, value = line.partition(":")
                if key in ("Rss", "Pss"):
                    row[key.lower()] += int(value.split()[0])
        return {name: {"count": row["count"], "rss": row["rss"], "pss": row["pss"]}
                for name, row in usage.items()}


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, 0o600)


def _database_reachable(host: str, port: int) -> bool:
    if host == "localhost" and os.path.exists(MYSQL_SOCKET):
        return True
    target = "127.0.0.1" if host == "localhost" else host
    try:
        socket.create_connection((target, port), timeout=3).close()
    except OSError:
        return False
    return True


def drop_database(spec: ClusterSpec) -> None:
    """DROP the cluster's accounting database with the ``mysql`` client (if installed)."""
    acct = spec.accounting
    mysql = shutil.which("mysql")
    if acct is None or mysql is None or not re.fullmatch(r"[A-Za-z0-9_]+", acct.db_name):
        return
    env = {**os.environ, "MYSQL_PWD": acct.db_password} if acct.db_password else None
    subprocess.run([mysql, "-h", acct.db_host, "-P", str(acct.db_port), "-u", acct.db_user,  # noqa: S603
                    "-e", f"DROP DATABASE IF EXISTS `{acct.db_name}`"],
                   capture_output=True, timeout=60, check=False, env=env)
