"""The client against a real Slurm 22.05 (the session's 64-node local cluster).

Each test uses nodes of its own and leaves them idle, so the order does not
matter, except the last test, which stops slurmctld and starts it again.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from allocation.slurm import SlurmClient, SlurmError
from tests.allocation.slurm.conftest import wait_for, wait_state_saved
from tests.conftest import skip_or_fail

pytestmark = pytest.mark.slurm

SLEEP = ["sleep", "600"]


def running(client: SlurmClient, job_id: int):
    job = client.job(job_id)
    return job if job is not None and job.state == "RUNNING" else None


def finished(client: SlurmClient, job_id: int):
    job = client.job(job_id)
    return job if job is not None and job.finished else None


def idle(client: SlurmClient, names: set[str]) -> bool:
    return all(n.idle for n in client.nodes() if n.name in names)


def test_the_cluster_comes_up_with_every_node_idle(slurm_cluster, slurm):
    nodes = slurm.nodes()
    assert [n.name for n in nodes] == list(slurm_cluster.spec.hostnames)
    assert all(n.idle and n.partitions == ("batch",) for n in nodes)
    status = slurm_cluster.status()
    assert status.complete and status.nodes == {"idle": 64}
    slurm.ping()
    topology = Path(slurm_cluster.paths.topology_conf).read_text()
    assert "SwitchName=hxtest_s0_0 Nodes=hx[001-004]" in topology


def test_pinned_and_unpinned_jobs_run_on_exactly_their_nodes(slurm):
    pinned = slurm.submit(SLEEP, nodes=["hx005", "hx007"], name="pinned")
    free = slurm.submit(SLEEP, num_nodes=3, name="anywhere")
    try:
        job = wait_for(lambda: running(slurm, pinned), what="the pinned job to run")
        other = wait_for(lambda: running(slurm, free), what="the unpinned job to run")
        assert job.nodes == ("hx005", "hx007") and job.num_nodes == 2
        assert job.name == "pinned" and job.user == "root" and job.partition == "batch"
        assert job.start_time is not None and job.end_time is None and job.exit_code is None
        assert len(other.nodes) == 3 and not set(other.nodes) & {"hx005", "hx007"}
        states = {n.name: n.state for n in slurm.nodes()}
        assert {states[name] for name in job.nodes + other.nodes} == {"allocated"}
        assert {j.job_id for j in slurm.jobs() if j.active} >= {pinned, free}
    finally:
        slurm.cancel(pinned)
        slurm.cancel(free)
    done = wait_for(lambda: finished(slurm, pinned), what="the cancel")
    assert done.state == "CANCELLED" and done.end_time is not None
    slurm.cancel(pinned)  # cancelling a finished job is not an error


def test_a_failed_job_keeps_its_exit_code_and_times(slurm):
    job_id = slurm.submit(["sh", "-c", "exit 3"], nodes=["hx009"], name="fails; rm -rf /")
    job = wait_for(lambda: finished(slurm, job_id), what="the job to end")
    assert (job.state, job.exit_code, job.exit_signal) == ("FAILED", 3, 0)
    assert job.name == "fails; rm -rf /" and job.nodes == ("hx009",)
    assert job.submit_time <= job.start_time <= job.end_time


def test_drain_shows_in_sinfo_with_its_reason_and_resume_undoes_it(slurm):
    slurm.drain(["hx010", "hx011"], "ECC errors (test)")
    listed = slurm.run("sinfo", "-R", "--noheader", "--format=%E|%N").strip()
    assert listed == "ECC errors (test)|hx[010-011]"
    nodes = {n.name: n for n in slurm.nodes()}
    assert nodes["hx010"].drain and nodes["hx010"].label == "drained"
    assert nodes["hx010"].reason == "ECC errors (test)" and nodes["hx010"].reason_set_by == "root"
    assert not nodes["hx012"].drain
    pinned = slurm.submit(["true"], nodes=["hx010"], name="on a drained node")
    assert slurm.job(pinned).pending
    slurm.cancel(pinned)
    slurm.resume(["hx010", "hx011", "hx012"])  # hx012 was never drained
    assert slurm.run("sinfo", "-R", "--noheader").strip() == ""
    wait_for(lambda: idle(slurm, {"hx010", "hx011"}), what="the resumed nodes to be idle")


def test_shrinking_a_running_job_frees_its_other_nodes(slurm):
    job_id = slurm.submit(SLEEP, nodes=["hx020", "hx021", "hx022", "hx023"], name="shrinks")
    try:
        wait_for(lambda: running(slurm, job_id), what="the job to run")
        slurm.shrink(job_id, ["hx020"])
        job = slurm.job(job_id)
        assert job.state == "RUNNING" and job.nodes == ("hx020",) and job.num_nodes == 1
        wait_for(lambda: idle(slurm, {"hx021", "hx022", "hx023"}),
                 what="the released nodes to be idle")
        assert running(slurm, job_id) is not None
        assert {n.name: n.state for n in slurm.nodes()}["hx020"] == "allocated"
    finally:
        slurm.cancel(job_id)


def test_switches_keep_a_job_under_one_leaf_switch(slurm):
    job_id = slurm.submit(SLEEP, num_nodes=4, switches=1, name="one switch")
    try:
        job = wait_for(lambda: running(slurm, job_id), what="the job to run")
        first = int(job.nodes[0][2:]) - 1
        assert first % 4 == 0
        assert job.nodes == tuple(f"hx{first + k + 1:03d}" for k in range(4))
    finally:
        slurm.cancel(job_id)


def test_refusals_are_one_line_errors(slurm):
    with pytest.raises(SlurmError) as caught:
        slurm.submit(["true"], nodes=["hx999"])
    assert caught.value.kind == "refused"
    assert str(caught.value) == "sbatch: Batch job submission failed: Invalid node name specified"
    with pytest.raises(SlurmError, match=r"^scontrol: Invalid node name specified$"):
        slurm.drain(["hx999"], "no such node")


def test_history_comes_from_accounting_with_exact_times(slurm_cluster, slurm):
    if slurm_cluster.spec.accounting is None:
        skip_or_fail("no accounting: slurmdbd or MariaDB is not installed here")
    since = datetime.now(UTC) - timedelta(hours=1)
    job_id = slurm.submit(["sh", "-c", "sleep 1; exit 4"], nodes=["hx030"], name="history")
    live = wait_for(lambda: finished(slurm, job_id), what="the job to end")
    job = wait_for(lambda: next((j for j in slurm.history(since) if j.job_id == job_id
                                 and j.finished), None), what="the job in sacct")
    assert (job.state, job.exit_code, job.nodes, job.name) == ("FAILED", 4, ("hx030",), "history")
    assert (job.start_time, job.end_time) == (live.start_time, live.end_time)
    assert job.end_time - job.start_time >= timedelta(seconds=1)


def test_a_dead_controller_is_one_error_within_the_timeout_and_a_restart_recovers(
        slurm_cluster, slurm):
    before = {j.job_id for j in slurm.jobs()}
    port = slurm_cluster.spec.slurmctld_port
    wait_state_saved(slurm_cluster, slurm)
    slurm_cluster.stop_slurmctld()
    try:
        client = slurm_cluster.client(timeout=20)
        # A JSON read (exit 0 with "errors"), an action (exit 1, stderr) and a ping.
        for call in (client.jobs, lambda: client.drain(["hx040"], "x"), client.ping):
            started = time.monotonic()
            with pytest.raises(SlurmError) as caught:
                call()
            assert time.monotonic() - started < 20 + 5
            assert caught.value.kind == "unreachable"
            assert str(caught.value).startswith(f"slurmctld unreachable at localhost:{port} (")
            assert "\n" not in str(caught.value)
        impatient = slurm_cluster.client(timeout=2)
        with pytest.raises(SlurmError, match=r"^squeue did not answer within 2 s$"):
            impatient.jobs()
    finally:
        slurm_cluster.start_slurmctld()
    slurm_cluster.wait_for_nodes(60)
    assert {j.job_id for j in slurm.jobs()} >= before
    job_id = slurm.submit(["true"], nodes=["hx040"], name="after restart")
    assert wait_for(lambda: finished(slurm, job_id), what="a job after the restart").state == (
        "COMPLETED")
