"""LocalCluster's bookkeeping without Slurm: which processes it stops, port checks."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from allocation.slurm import ClusterError, ClusterSpec, LocalCluster
from allocation.slurm.processes import MARKER, last_error, marked_processes


@pytest.fixture
def cluster(tmp_path):
    spec = ClusterSpec(machine="t", sides=(1,), concentration=2, hostnames=("t1", "t2"),
                       state_dir=str(tmp_path), base_port=29500)
    return LocalCluster(spec)


def spawn(argv: list[str], marker: str | None) -> subprocess.Popen:
    env = {**os.environ, **({MARKER: marker} if marker else {})}
    return subprocess.Popen(argv, env=env)


def test_stop_ends_exactly_the_marked_processes_and_their_children(cluster, tmp_path):
    state_dir = cluster.spec.state_dir
    daemon = spawn(["sleep", "120"], state_dir)
    # A child with an empty environment, as a job's process may be: found by parentage.
    parent = spawn(["sh", "-c", "env -i sleep 121 & wait"], state_dir)
    other_cluster = spawn(["sleep", "122"], state_dir + "-other")
    stranger = spawn(["sleep", "123"], None)
    try:
        found = set()
        for _ in range(50):
            found = set(marked_processes(state_dir))
            if len(found) >= 3:
                break
            subprocess.run(["sleep", "0.1"], check=True)
        assert {daemon.pid, parent.pid} <= found and len(found) == 3
        assert other_cluster.pid not in found and stranger.pid not in found
        assert cluster.stop(timeout=10) == 3
        assert daemon.wait(timeout=10) is not None and parent.wait(timeout=10) is not None
        assert other_cluster.poll() is None and stranger.poll() is None
        assert marked_processes(state_dir) == []
        assert cluster.stop() == 0  # idempotent
    finally:
        for process in (daemon, parent, other_cluster, stranger):
            process.kill()
            process.wait()


def test_status_of_a_stopped_cluster(cluster):
    status = cluster.status()
    assert not status.running and not status.complete
    assert status.lines() == [f"state dir {cluster.spec.state_dir}: nothing running"]


def test_status_counts_only_live_nodes_as_needing_a_slurmd():
    from allocation.slurm import ClusterStatus

    status = ClusterStatus("/x", 4096, {"munged": 1, "slurmctld": 1, "slurmd": 512},
                           {"idle": 512, "unknown*": 3584}, live_count=512)
    assert status.complete
    assert status.lines()[1] == "nodes (4096, 512 with a slurmd): 512 idle, 3584 unknown*"
    everyone = ClusterStatus("/x", 4096, {"munged": 1, "slurmctld": 1, "slurmd": 512})
    assert not everyone.complete


def test_a_busy_port_is_named_before_anything_starts(cluster):
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        busy.bind(("127.0.0.1", 29511))
        busy.listen()
        with pytest.raises(ClusterError, match=r"1 port\(s\) .* in use, first 29511 .* "
                                               r"another base port \(now 29500\)"):
            cluster.check_ports()


def test_from_dir_needs_a_started_cluster(tmp_path, cluster):
    with pytest.raises(ClusterError, match=r"no cluster in .*nothing \(cluster\.json missing\)"):
        LocalCluster.from_dir(tmp_path / "nothing")
    cluster.write_configs()
    again = LocalCluster.from_dir(cluster.spec.state_dir)
    assert again.spec == cluster.spec
    assert oct(os.stat(cluster.paths.munge_key).st_mode & 0o777) == "0o600"
    assert again.environment() == {"SLURM_CONF": f"{cluster.spec.state_dir}/etc/slurm.conf"}


def test_last_error_finds_the_reason_in_a_log(tmp_path):
    log = tmp_path / "slurmctld.log"
    log.write_text("[2026-12-01T10:00:00.000] started\n"
                   "[2026-12-01T10:00:01.000] error: Bad config line\n"
                   "[2026-12-01T10:00:02.000] done\n")
    assert last_error(str(log)) == "error: Bad config line"
    assert last_error(str(tmp_path / "none.log")) == ""
