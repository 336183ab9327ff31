"""The ``slurm`` test layer: one real local Slurm cluster for the session.

The 4x4, c = 4 test machine (64 nodes, hx001..hx064) runs as munged, slurmctld,
slurmdbd (when MariaDB is there) and 64 slurmd in a scratch directory, on ports
picked from a range nothing else here uses and checked free. It is stopped and
its accounting database dropped at the end. Outside CI, missing Slurm packages,
MariaDB or root skip with the reason; in CI (CI=true) they fail.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable

import pytest

from allocation.slurm import Accounting, ClusterError, ClusterSpec, LocalCluster
from allocation.slurm.local import MYSQL_SOCKET, find_free_base_port
from tests.conftest import IN_CI, skip_or_fail

DAEMONS = ("munged", "slurmctld", "slurmd", "sinfo", "squeue", "sbatch", "scontrol", "scancel")
PACKAGES = "apt-get install -y slurmctld slurmd slurm-client munge slurmdbd"
#: Test clusters take ports from here (below the ephemeral range, above the usual
#: services and the demo's default 17000 + nodes). HX_SLURM_TEST_PORTS=LOW-HIGH
#: narrows it, so checkouts testing on one host at once keep apart.
PORT_RANGE = tuple(int(p) for p in os.environ.get("HX_SLURM_TEST_PORTS", "22000-31000")
                   .split("-", 1))


def installed(name: str) -> bool:
    return bool(shutil.which(name)) or any(
        os.access(f"{d}/{name}", os.X_OK) for d in ("/usr/sbin", "/usr/bin"))


def require_slurm() -> None:
    missing = [name for name in DAEMONS if not installed(name)]
    if missing:
        skip_or_fail(f"Slurm is not installed ({', '.join(missing)} missing): {PACKAGES}")
    if os.geteuid() != 0:
        skip_or_fail("the local Slurm cluster runs its daemons as root")


def accounting_available() -> bool:
    """slurmdbd and MariaDB are here; in CI they must be."""
    if installed("slurmdbd") and os.path.exists(MYSQL_SOCKET):
        return True
    if IN_CI:
        pytest.fail(f"required in CI: slurmdbd and MariaDB ({PACKAGES} mariadb-server)")
    return False


def free_base_port(nodes: int, accounting: bool = True) -> int:
    """A base port whose whole span (services and every slurmd) is free now."""
    try:
        return find_free_base_port(nodes, *PORT_RANGE, accounting=accounting)
    except ClusterError as exc:
        pytest.fail(str(exc))


def scratch_dir(prefix: str) -> str:
    """Under /tmp with mode 0755: munged refuses a socket in a directory that not
    everyone can search (pytest's tmp_path is 0700)."""
    path = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(path, 0o755)  # noqa: S103
    return path


def wait_for(predicate: Callable[[], object], timeout: float = 90.0,
             interval: float = 0.5, what: str = "condition"):
    """Poll until ``predicate()`` is truthy; return its value or fail naming ``what``.

    The bound is generous: slurmctld after a restart can take tens of seconds to
    carry out a cancel on a loaded 2-core machine (it waited over 30 s once)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def wait_state_saved(cluster: LocalCluster, client) -> None:
    """Wait until slurmctld has saved its job state since the latest job change it
    reports (it saves a few seconds after a change). A test that kills slurmctld
    sooner makes Slurm forget the newest jobs and hand out their ids again."""
    times = [t for j in client.jobs() for t in (j.submit_time, j.start_time, j.end_time) if t]
    since = max(times).timestamp() if times else 0.0
    path = os.path.join(cluster.paths.state, "job_state")
    wait_for(lambda: os.path.exists(path) and os.path.getmtime(path) >= since, timeout=30,
             interval=0.2, what="slurmctld to save its job state")


@pytest.fixture(scope="session")
def slurm_cluster():
    require_slurm()
    accounting = accounting_available()
    state_dir = scratch_dir("hx-slurm-test-")
    hostnames = tuple(f"hx{i:03d}" for i in range(1, 65))
    spec = ClusterSpec(
        machine="hxtest", sides=(4, 4), concentration=4, hostnames=hostnames,
        state_dir=state_dir, base_port=free_base_port(len(hostnames), accounting),
        accounting=Accounting() if accounting else None,
        cluster_name=f"hxtest{os.getpid()}")
    cluster = LocalCluster(spec)
    try:
        cluster.start(timeout=180)
        yield cluster
    finally:
        cluster.purge()


@pytest.fixture
def slurm(slurm_cluster):
    """A client on the session's cluster."""
    return slurm_cluster.client(timeout=30)
