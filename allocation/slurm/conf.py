"""Configuration text for a local Slurm cluster that runs a HyperX machine on one host.

Pure text generation (no I/O, no Django): :class:`ClusterSpec` holds the
machine's shape, its hostnames in endpoint order, a state directory and a base
port; :func:`slurm_conf`, :func:`topology_conf` and :func:`slurmdbd_conf`
render the files that :mod:`allocation.slurm.local` writes and starts.

Every node is ``NodeHostname=localhost NodeAddr=127.0.0.1`` with a port of its
own, so one ``slurmd -N <node>`` per node runs the whole machine on this host.
Ports (all below Linux's ephemeral range, which starts at 32768, so no client
socket can take a daemon's port):

========================  ==========================
``base_port``             slurmctld
``base_port + 1``         slurmdbd (with accounting)
``base_port + 2``         reserved (slurmrestd)
``base_port + 10 + i``    slurmd of node ``i`` (endpoint order)
========================  ==========================

>>> spec = ClusterSpec(machine="hx", sides=(2, 2), concentration=2,
...                    hostnames=tuple(f"hx{i:03d}" for i in range(1, 9)),
...                    state_dir="/srv/slurm/hx", base_port=20000, topology="tree")
>>> spec.ports()
{'slurmctld': 20000, 'slurmdbd': 20001, 'slurmrestd': 20002, 'slurmd': (20010, 20017)}
>>> [line.split()[:2] for line in slurm_conf(spec).splitlines()
...  if line.startswith("NodeName=")]  # doctest: +NORMALIZE_WHITESPACE
[['NodeName=hx[001-002]', 'Port=[20010-20011]'], ['NodeName=hx[003-004]', 'Port=[20012-20013]'],
 ['NodeName=hx[005-006]', 'Port=[20014-20015]'], ['NodeName=hx[007-008]', 'Port=[20016-20017]']]
>>> print(topology_conf(spec), end="")
# topology.conf (topology/tree) for HyperX hx: 2x2 switches, c = 2
SwitchName=hx_s0_0 Nodes=hx[001-002]
SwitchName=hx_s0_1 Nodes=hx[003-004]
SwitchName=hx_s1_0 Nodes=hx[005-006]
SwitchName=hx_s1_1 Nodes=hx[007-008]
SwitchName=hx_row0 Switches=hx_s0_[0-1]
SwitchName=hx_row1 Switches=hx_s1_[0-1]
SwitchName=hx_root Switches=hx_row[0-1]
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath

from allocation import slurm_topology
from hxportal.hostlists import compress, expand

#: First port of Linux's default ephemeral range (net.ipv4.ip_local_port_range).
PORT_LIMIT = 32768
#: Ports kept for the services before the first slurmd's.
SERVICE_PORTS = 10
DEFAULT_BASE_PORT = 17000
#: topology/block arrived in Slurm 23.11; 22.05 has topology/tree, with the
#: portal's groupings (``allocation.slurm_topology.TREE_KINDS``), or none.
TOPOLOGIES = (*slurm_topology.TREE_KINDS, "none")
SELECT_TYPES = {"linear": "select/linear", "cons_tres": "select/cons_tres"}
#: A Unix socket path holds at most 107 bytes (sun_path).
MAX_SOCKET_PATH = 107
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}\Z")
PARTITION = "batch"
PARTITION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
#: Plugin names as in ``CliFilterPlugins=cli_filter/lua`` (the part after the slash).
PLUGIN_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")
SCHEDULER_PARAMETERS = re.compile(r"([a-z_]+(=[A-Za-z0-9_:.]+)?(,[a-z_]+(=[A-Za-z0-9_:.]+)?)*)?\Z")


class SpecError(ValueError):
    """A cluster that cannot be written as asked (one line, names the setting)."""


@dataclass(frozen=True)
class Accounting:
    """slurmdbd on MySQL/MariaDB, so ``sacct`` keeps finished jobs with exact times.

    ``db_host="localhost"`` makes the MariaDB client use the server's Unix
    socket, where Debian's ``root`` signs in without a password.
    """

    db_host: str = "localhost"
    db_port: int = 3306
    db_user: str = "root"
    db_password: str = ""
    db_name: str = ""


@dataclass(frozen=True)
class Partition:
    """One Slurm partition: a name, its nodes (``ALL`` or a hostlist of the
    cluster's hostnames) and whether jobs without ``-p`` go there."""

    name: str
    nodes: str = "ALL"
    default: bool = False


#: The one partition a cluster has unless told otherwise.
DEFAULT_PARTITIONS = (Partition(PARTITION, default=True),)


@dataclass(frozen=True)
class ClusterPaths:
    """Where each file of a cluster lives under its state directory."""

    root: str

    def _join(self, *parts: str) -> str:
        return str(PurePosixPath(self.root, *parts))

    @property
    def slurm_conf(self) -> str:
        return self._join("etc", "slurm.conf")

    @property
    def topology_conf(self) -> str:
        return self._join("etc", "topology.conf")

    @property
    def slurmdbd_conf(self) -> str:
        # slurmdbd has no -f: it reads slurmdbd.conf next to $SLURM_CONF.
        return self._join("etc", "slurmdbd.conf")

    @property
    def spec_json(self) -> str:
        return self._join("cluster.json")

    @property
    def munge_dir(self) -> str:
        return self._join("munge")

    @property
    def munge_socket(self) -> str:
        return self._join("munge", "munge.socket")

    @property
    def munge_key(self) -> str:
        return self._join("munge", "munge.key")

    @property
    def munge_pid(self) -> str:
        return self._join("munge", "munged.pid")

    @property
    def state(self) -> str:
        return self._join("state")

    @property
    def spool(self) -> str:
        return self._join("spool")

    @property
    def run(self) -> str:
        return self._join("run")

    @property
    def log(self) -> str:
        return self._join("log")

    @property
    def jobs(self) -> str:
        """Default working directory and output place of jobs submitted here."""
        return self._join("jobs")

    def pid_file(self, daemon: str, node: str = "") -> str:
        return self._join("run", f"{daemon}.{node}.pid" if node else f"{daemon}.pid")

    def log_file(self, daemon: str, node: str = "") -> str:
        return self._join("log", f"{daemon}.{node}.log" if node else f"{daemon}.log")


def cluster_name_for(machine: str) -> str:
    """Slurm's ClusterName for a machine: lower case, ``[a-z0-9_]``, at most 40.

    >>> cluster_name_for("HX-2.test")
    'hx_2_test'
    """
    name = re.sub(r"[^a-z0-9_]", "_", machine.lower())[:40]
    return name if name and name[0].isalpha() else f"hx{name}"[:40]


@dataclass(frozen=True)
class ClusterSpec:
    """A portal machine as a local Slurm cluster. Checked when made.

    ``hostnames`` are in endpoint order (switch index x c + port), as the
    portal's nodes are. ``min_job_age`` is how long (seconds) a finished job stays
    in ``squeue``/``scontrol`` (Slurm's MinJobAge): a sync must look at least
    that often, or use accounting (``sacct``) for older jobs. ``partitions``:
    one ``batch`` over every node unless given (at most one default).
    """

    machine: str
    sides: tuple[int, ...]
    concentration: int
    hostnames: tuple[str, ...]
    state_dir: str
    base_port: int = DEFAULT_BASE_PORT
    topology: str = slurm_topology.DEFAULT_KIND
    select: str = "linear"
    accounting: Accounting | None = None
    cluster_name: str = ""
    slurm_user: str = "root"
    real_memory_mb: int = 1000
    min_job_age: int = 3600
    partitions: tuple[Partition, ...] = DEFAULT_PARTITIONS
    #: Start a slurmd for the first ``live_nodes`` nodes only (endpoint order; 0:
    #: every node). The others are in slurm.conf and sinfo like any node, but
    #: never answer: Slurm shows them ``unknown*`` and runs no job there.
    #: For machines whose slurmd do not all fit in this host's memory.
    live_nodes: int = 0
    #: ``CliFilterPlugins`` / ``JobSubmitPlugins`` by plugin name (``("lua",)``);
    #: cli_filter/lua reads ``cli_filter.lua`` next to slurm.conf.
    cli_filter_plugins: tuple[str, ...] = ()
    job_submit_plugins: tuple[str, ...] = ()
    #: ``SchedulerParameters`` (``key=value`` items, comma-separated), e.g.
    #: ``sched_interval=2`` so a benchmark need not wait a minute for a retry.
    scheduler_parameters: str = ""
    paths: ClusterPaths = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sides", tuple(int(s) for s in self.sides))
        object.__setattr__(self, "hostnames", tuple(self.hostnames))
        object.__setattr__(self, "partitions", tuple(
            Partition(**p) if isinstance(p, dict) else p for p in self.partitions))
        for name in ("cli_filter_plugins", "job_submit_plugins"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.cluster_name:
            object.__setattr__(self, "cluster_name", cluster_name_for(self.machine))
        if isinstance(self.accounting, dict):
            object.__setattr__(self, "accounting", Accounting(**self.accounting))
        if self.accounting is not None and not self.accounting.db_name:
            object.__setattr__(self, "accounting", Accounting(
                **{**asdict(self.accounting), "db_name": f"slurm_acct_{self.cluster_name}"}))
        object.__setattr__(self, "paths", ClusterPaths(self.state_dir))
        self._check()

    def _check(self) -> None:
        if not self.sides or min(self.sides) < 1 or self.concentration < 1:
            raise SpecError("sides and concentration must be positive")
        self._check_hostnames()
        if not PurePosixPath(self.state_dir).is_absolute():
            raise SpecError("state_dir must be an absolute path")
        if len(self.paths.munge_socket) > MAX_SOCKET_PATH:
            raise SpecError(f"state_dir is too long for a Unix socket path "
                            f"(at most {MAX_SOCKET_PATH - 19} characters)")
        self._check_choices()
        if not 1024 <= self.base_port or self.last_port >= PORT_LIMIT:
            raise SpecError(f"ports {self.base_port}-{self.last_port} must lie in "
                            f"1024-{PORT_LIMIT - 1} (below the ephemeral range): "
                            f"choose a base port <= {PORT_LIMIT - SERVICE_PORTS - self.node_count}")
        if self.min_job_age < 0 or self.real_memory_mb < 1:
            raise SpecError("min_job_age must be >= 0 and real_memory_mb >= 1")
        if not 0 <= self.live_nodes <= self.node_count:
            raise SpecError(f"live_nodes must lie in 0-{self.node_count} (0: every node)")
        self._check_partitions()
        if not SCHEDULER_PARAMETERS.match(self.scheduler_parameters):
            raise SpecError("scheduler_parameters must be comma-separated key[=value] items")
        bad = next((p for p in (*self.cli_filter_plugins, *self.job_submit_plugins)
                    if not PLUGIN_NAME.match(p)), None)
        if bad is not None:
            raise SpecError(f"plugin {bad[:40]!r} is not a plugin name (such as lua)")

    def _check_choices(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise SpecError(f"topology must be one of {', '.join(TOPOLOGIES)}")
        if self.select not in SELECT_TYPES:
            raise SpecError(f"select must be one of {', '.join(SELECT_TYPES)}")

    def _check_partitions(self) -> None:
        if not self.partitions:
            raise SpecError("need at least one partition")
        names = [p.name for p in self.partitions]
        bad = next((n for n in names if not PARTITION_NAME.match(n)), None)
        if bad is not None:
            raise SpecError(f"partition name {bad[:64]!r} is not valid ([A-Za-z0-9_-])")
        if len(set(names)) != len(names):
            raise SpecError("partition names must be unique")
        if sum(1 for p in self.partitions if p.default) > 1:
            raise SpecError("at most one partition can be the default")
        known = set(self.hostnames)
        for part in self.partitions:
            if part.nodes == "ALL":
                continue
            try:
                nodes = expand(part.nodes, max_nodes=len(self.hostnames))
            except ValueError:
                nodes = []
            if not nodes or not set(nodes) <= known:
                raise SpecError(f"partition {part.name}: nodes must be ALL or a hostlist "
                                "of this cluster's hostnames")

    def _check_hostnames(self) -> None:
        if len(self.hostnames) != self.node_count:
            raise SpecError(f"need {self.node_count} hostnames (one per endpoint), "
                            f"got {len(self.hostnames)}")
        bad = next((h for h in self.hostnames if not NODE_NAME.match(h)), None)
        if bad is not None:
            raise SpecError(f"hostname {bad[:64]!r} is not a valid Slurm NodeName")
        if len(set(self.hostnames)) != len(self.hostnames):
            raise SpecError("hostnames must be unique")

    @property
    def node_count(self) -> int:
        return math.prod(self.sides) * self.concentration

    @property
    def live_hostnames(self) -> tuple[str, ...]:
        """The nodes that get a slurmd (every node unless ``live_nodes`` is set)."""
        return self.hostnames[:self.live_nodes] if self.live_nodes else self.hostnames

    @property
    def partial(self) -> bool:
        """Some configured nodes get no slurmd."""
        return len(self.live_hostnames) < self.node_count

    @property
    def slurmctld_port(self) -> int:
        return self.base_port

    @property
    def slurmdbd_port(self) -> int:
        return self.base_port + 1

    def node_port(self, index: int) -> int:
        return self.base_port + SERVICE_PORTS + index

    @property
    def last_port(self) -> int:
        return self.node_port(self.node_count - 1)

    def ports(self) -> dict[str, int | tuple[int, int]]:
        return {"slurmctld": self.slurmctld_port, "slurmdbd": self.slurmdbd_port,
                "slurmrestd": self.base_port + 2,
                "slurmd": (self.node_port(0), self.last_port)}

    def daemon_ports(self) -> list[int]:
        """Every port a daemon of this cluster listens on (the live nodes' slurmd)."""
        service = [self.slurmctld_port] + ([self.slurmdbd_port] if self.accounting else [])
        return service + [self.node_port(i) for i in range(len(self.live_hostnames))]

    def to_json(self) -> str:
        data = asdict(self)
        data.pop("paths", None)
        return json.dumps(data, indent=1)

    @classmethod
    def from_json(cls, text: str) -> ClusterSpec:
        data = json.loads(text)
        data.pop("paths", None)
        return cls(**data)


def _header(spec: ClusterSpec, what: str) -> list[str]:
    shape = "x".join(str(s) for s in spec.sides)
    return [f"# {what} of the local Slurm cluster {spec.cluster_name} for hxportal machine "
            f"{spec.machine} ({shape} switches, c = {spec.concentration}, "
            f"{spec.node_count} nodes);",
            "# written by allocation.slurm.conf: edit the portal's machine, not this file."]


def _daemon_lines(spec: ClusterSpec) -> list[str]:
    p = spec.paths
    return [
        f"ClusterName={spec.cluster_name}",
        "SlurmctldHost=localhost",
        f"SlurmctldPort={spec.slurmctld_port}",
        f"SlurmdPort={spec.node_port(0)}",
        # The daemons run as root so that one host can start every node's slurmd and
        # run jobs as their submitters; a local development cluster only.
        f"SlurmUser={spec.slurm_user}",
        f"SlurmdUser={spec.slurm_user}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        # Our own munged, not the host's /run/munge: no clash with a site's Slurm.
        f"AuthInfo=socket={p.munge_socket}",
        f"StateSaveLocation={p.state}",
        f"SlurmdSpoolDir={p.spool}/%n",
        f"SlurmctldPidFile={p.pid_file('slurmctld')}",
        f"SlurmdPidFile={p.run}/slurmd.%n.pid",
        f"SlurmctldLogFile={p.log_file('slurmctld')}",
        f"SlurmdLogFile={p.log}/slurmd.%n.log",
        "SlurmctldDebug=info",
        "SlurmdDebug=error",
        # Every slurmd of the host reports the host's CPUs and memory: trust this file.
        "SlurmdParameters=config_overrides",
    ]


def _scheduling_lines(spec: ClusterSpec) -> list[str]:
    lines = [
        # No cgroups in containers or CI: track processes by parentage.
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "MpiDefault=none",
        # Whole nodes: select/linear allocates nodes, never cores, honours
        # topology/tree (--switches) and lets a running job shrink.
        f"SelectType={SELECT_TYPES[spec.select]}",
    ]
    if spec.select == "cons_tres":
        lines.append("SelectTypeParameters=CR_CPU")
    lines += [
        "SchedulerType=sched/backfill",
        *([f"SchedulerParameters={spec.scheduler_parameters}"] if spec.scheduler_parameters
          else []),
        "TopologyPlugin=topology/" + ("none" if spec.topology == "none" else "tree"),
        "ReturnToService=2",
        # A finished job stays in squeue/scontrol this long (seconds) for a sync to see.
        f"MinJobAge={spec.min_job_age}",
        "KillWait=5",
        "InactiveLimit=0",
    ]
    return lines


def _accounting_lines(spec: ClusterSpec) -> list[str]:
    if spec.accounting is None:
        return ["AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none"]
    return [
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageHost=localhost",
        f"AccountingStoragePort={spec.slurmdbd_port}",
        # With munge, this names the munged socket used to reach slurmdbd.
        f"AccountingStoragePass={spec.paths.munge_socket}",
        "JobCompType=jobcomp/none",
    ]


def _node_lines(spec: ClusterSpec) -> list[str]:
    """One line per switch (a hostlist with a port range) where the switch's hostnames
    fold into a hostlist that expands in the same order, else one line per node.
    Every slurmd parses the whole file, so fewer lines start a large machine faster."""
    c = spec.concentration
    lines = []
    for switch in range(len(spec.hostnames) // c):
        names = spec.hostnames[switch * c:(switch + 1) * c]
        first = switch * c
        features = ",".join(slurm_topology.switch_features(spec.sides, switch))
        common = (f"NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=1 "
                  f"RealMemory={spec.real_memory_mb} Features={features}")
        folded = compress(names)
        if c > 1 and expand(folded) == list(names):
            lines.append(f"NodeName={folded} Port=[{spec.node_port(first)}-"
                         f"{spec.node_port(first + c - 1)}] {common}")
        else:
            lines += [f"NodeName={host} Port={spec.node_port(first + k)} {common}"
                      for k, host in enumerate(names)]
    return lines


def _plugin_lines(spec: ClusterSpec) -> list[str]:
    lines = []
    for key, kind, names in (("CliFilterPlugins", "cli_filter", spec.cli_filter_plugins),
                             ("JobSubmitPlugins", "job_submit", spec.job_submit_plugins)):
        if names:
            lines.append(f"{key}=" + ",".join(f"{kind}/{name}" for name in names))
    return lines


def _partition_lines(spec: ClusterSpec) -> list[str]:
    return [f"PartitionName={p.name} Nodes={p.nodes}" + (" Default=YES" if p.default else "")
            + " MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE" for p in spec.partitions]


def slurm_conf(spec: ClusterSpec) -> str:
    """``slurm.conf``: daemons, scheduling, accounting, plugins, one line per node,
    the partitions."""
    lines = (_header(spec, "slurm.conf") + _daemon_lines(spec) + _scheduling_lines(spec)
             + _accounting_lines(spec) + _plugin_lines(spec) + _node_lines(spec)
             + _partition_lines(spec))
    return "\n".join(lines) + "\n"


def topology_conf(spec: ClusterSpec) -> str:
    """``topology.conf`` for topology/tree in the spec's grouping
    (``allocation.slurm_topology``); a comment only for none."""
    if spec.topology == "none":
        return "# no topology plugin\n"
    return slurm_topology.render(spec.topology, spec.machine, spec.sides, spec.concentration,
                                 spec.hostnames)


def slurmdbd_conf(spec: ClusterSpec) -> str:
    """``slurmdbd.conf`` (mode 0600: it may hold the database password)."""
    acct = spec.accounting
    if acct is None:
        raise SpecError("slurmdbd.conf needs accounting")
    p = spec.paths
    lines = [
        *_header(spec, "slurmdbd.conf"),
        "AuthType=auth/munge",
        f"AuthInfo=socket={p.munge_socket}",
        "DbdHost=localhost",
        f"DbdPort={spec.slurmdbd_port}",
        f"SlurmUser={spec.slurm_user}",
        f"LogFile={p.log_file('slurmdbd')}",
        f"PidFile={p.pid_file('slurmdbd')}",
        "StorageType=accounting_storage/mysql",
        f"StorageHost={acct.db_host}",
        f"StoragePort={acct.db_port}",
        f"StorageUser={acct.db_user}",
        f"StorageLoc={acct.db_name}",
    ]
    if acct.db_password:
        lines.append(f"StoragePass={acct.db_password}")
    return "\n".join(lines) + "\n"
