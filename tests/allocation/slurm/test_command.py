"""``manage.py hx_slurm_cluster``: a portal machine becomes a running Slurm and stops again."""

from __future__ import annotations

import io
import shutil

import pytest
from django.core.management import CommandError, call_command

from allocation.services import machines
from allocation.slurm import SlurmClient
from tests.allocation.slurm.conftest import free_base_port, require_slurm, scratch_dir, wait_for

pytestmark = pytest.mark.django_db


def run(*args, **options) -> str:
    out = io.StringIO()
    call_command("hx_slurm_cluster", *args, stdout=out, stderr=io.StringIO(), **options)
    return out.getvalue()


@pytest.mark.slurm
def test_start_status_and_stop_a_machine_with_its_own_hostnames():
    require_slurm()
    machines.create_machine(name="cmd-test", sides=[2, 2], concentration=2,
                            hostlist="cn[101-108]")
    state_dir = scratch_dir("hx-slurm-cmd-")
    try:
        out = run("start", "cmd-test", dir=state_dir, base_port=free_base_port(8, False))
        assert out == f"export SLURM_CONF={state_dir}/etc/slurm.conf\n"
        client = SlurmClient(f"{state_dir}/etc/slurm.conf", timeout=30)
        assert [(n.name, n.idle) for n in client.nodes()] == [
            (f"cn{i}", True) for i in range(101, 109)]
        status = run("status", "cmd-test", dir=state_dir)
        assert "munged 1, slurmctld 1, slurmd 8" in status and "nodes (8): 8 idle" in status
        assert run("env", "cmd-test", dir=state_dir) == out
        with pytest.raises(CommandError, match="already running"):
            run("start", "cmd-test", dir=state_dir, base_port=free_base_port(8, False))
        client.submit(["sleep", "600"], nodes=["cn105"])
        run("stop", "cmd-test", dir=state_dir)
        assert run("status", "cmd-test", dir=state_dir).endswith(": nothing running\n")
        run("stop", "cmd-test", dir=state_dir)  # idempotent
    finally:
        run("stop", "cmd-test", dir=state_dir, purge=True)
        shutil.rmtree(state_dir, ignore_errors=True)


def test_an_unknown_machine_or_an_empty_directory_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no machine named 'nope'"):
        run("start", "nope", dir=str(tmp_path))
    with pytest.raises(CommandError, match=r"no cluster in .* \(cluster\.json missing\)"):
        run("stop", "nope", dir=str(tmp_path))


def test_ports_beyond_the_ephemeral_range_are_refused_before_starting(tmp_path):
    machines.create_machine(name="big", sides=[8, 8], concentration=8)
    with pytest.raises(CommandError, match=r"ports 32500-33021 must lie in 1024-32767"):
        run("start", "big", dir=str(tmp_path), base_port=32500)


@pytest.mark.slurm
def test_live_nodes_configure_every_node_but_start_a_slurmd_for_the_first_only():
    """A machine too large for this host's memory: every node in Slurm, a slurmd for
    the first N; the others never answer and run nothing."""
    require_slurm()
    machines.create_machine(name="cmd-live", sides=[2, 2], concentration=2,
                            hostlist="cn[101-108]")
    state_dir = scratch_dir("hx-slurm-live-")
    try:
        run("start", "cmd-live", dir=state_dir, base_port=free_base_port(8, False),
            live_nodes=3)
        client = SlurmClient(f"{state_dir}/etc/slurm.conf", timeout=30)
        nodes = {n.name: n for n in client.nodes()}
        assert sorted(nodes) == [f"cn{i}" for i in range(101, 109)]
        assert [h for h, n in sorted(nodes.items()) if n.idle] == ["cn101", "cn102", "cn103"]
        assert {nodes[f"cn{i}"].state for i in range(104, 109)} == {"unknown"}
        status = run("status", "cmd-live", dir=state_dir)
        assert "slurmd 3" in status and "nodes (8, 3 with a slurmd)" in status
        stuck = client.submit(["sleep", "600"], nodes=["cn107"])
        runs = client.submit(["sleep", "600"], nodes=["cn102"])
        wait_for(lambda: (j := client.job(runs)) is not None and j.state == "RUNNING",
                 what="the job on a live node to run")
        assert client.job(stuck).state == "PENDING"
    finally:
        run("stop", "cmd-live", dir=state_dir, purge=True)
        shutil.rmtree(state_dir, ignore_errors=True)
