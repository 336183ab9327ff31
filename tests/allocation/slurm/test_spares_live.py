"""Spare nodes on a real Slurm: ``hx-prolog-bench`` inside a running job benchmarks
every node, keeps the fastest N and gives the dropped spares back to Slurm by
shrinking the job, so they are idle while the job still runs; the portal's sync
then shows the job on its kept nodes only. Accepting a recommendation on a machine
linked to Slurm pins it to nodes Slurm has free at that moment."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from allocation.models import Job
from allocation.services import jobs, machines, slurm_sync
from recommendations import services as recommendations
from tests.allocation.slurm.conftest import scratch_dir, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.django_db]

ROOT = Path(__file__).resolve().parents[3]
PROLOG = ROOT / "contrib" / "slurm" / "hx-prolog-bench"
NODES = ["hx033", "hx034", "hx035", "hx036", "hx037", "hx038"]
SLOW = {"hx035", "hx037"}
# Each node reports its own time; two are three times slower (hx033 runs the script).
BENCH = ("sh -c 'case $SLURMD_NODENAME in hx035|hx037) t=0.3;; *) t=0.1;; esac; "
         "echo $SLURMD_NODENAME $t'")


def job_script(out: Path) -> str:
    prolog = " ".join(shlex.quote(str(a)) for a in (
        sys.executable, PROLOG, "--no-upload", "--n-node", "4", "--bench-cmd", BENCH))
    return (f"export HX_PORTAL_URL=http://127.0.0.1:9 HX_LOG={shlex.quote(str(out))}.log\n"
            f'eval "$({prolog})"\n'
            f'echo "released=$HX_RELEASED drop=$HX_DROP nodes=$SLURM_JOB_NODELIST '
            f'n=$SLURM_NNODES" > {shlex.quote(str(out))}\n'
            "sleep 600\n")


def test_dropped_spares_are_idle_in_slurm_while_the_job_runs(slurm_cluster, slurm, settings):
    settings.HX_SLURM_CONF = slurm_cluster.conf
    machine = machines.create_machine(name="hxtest", sides=[4, 4], concentration=4,
                                      hostname_pattern="hx{n:03d}")
    work = Path(scratch_dir("hx-prolog-"))
    out = work / "prolog.out"
    job_id = slurm.submit(["sh", "-c", job_script(out)], nodes=NODES, name="with spares",
                          workdir=str(work))
    try:
        wait_for(out.exists, timeout=90, what="the prolog to finish in the job")
        line = out.read_text().strip()
        assert line == "released=hx[035,037] drop= nodes=hx[033-034,036,038] n=4", (
            line, (work / "prolog.out.log").read_text() if (work / "prolog.out.log").exists()
            else "")
        job = slurm.job(job_id)
        assert job.state == "RUNNING" and job.nodes == ("hx033", "hx034", "hx036", "hx038")
        nodes = {n.name: n for n in slurm.nodes()}
        assert all(nodes[h].idle for h in SLOW)
        # The portal sees the job on its kept nodes only: the spares are free for others.
        slurm_sync.sync_machine(machine)
        row = Job.objects.get(slurm_job_id=job_id)
        assert sorted(row.allocations.filter(released_at__isnull=True).values_list(
            "node__hostname", flat=True)) == ["hx033", "hx034", "hx036", "hx038"]
        available, _ = jobs.occupancy(machine)
        index = dict(machine.nodes.values_list("hostname", "index"))
        assert all(available[index[h]] for h in SLOW)
    finally:
        slurm.cancel(job_id)


def test_an_accepted_recommendation_avoids_nodes_slurm_has_taken(slurm_cluster, slurm, settings,
                                                                 users):
    """The portal's view is stale (a plain sbatch job started after its last sync):
    accepting syncs first and pins the job to nodes Slurm has free."""
    settings.HX_SLURM_CONF = slurm_cluster.conf
    machine = machines.create_machine(name="hxtest", sides=[4, 4], concentration=4,
                                      hostname_pattern="hx{n:03d}")
    slurm_sync.configure(machine, enabled=True)
    slurm_sync.sync_machine(machine)
    rec, _ = recommendations.request_recommendation(
        user=users["operator"], machine=machine, node_count=8, pattern="all2all",
        t_cmpt=100.0, t_comm=50.0, p_abn=0.01, alpha_abn=2.0, t_bench=1.0, simulate=False)
    proposed = set(jobs.propose(machine, rec.recommended["policy"], 8).hostnames)
    blocker = slurm.submit(["sleep", "600"], nodes=sorted(proposed)[:2], name="got there first")
    try:
        wait_for(lambda: (j := slurm.job(blocker)) is not None and j.state == "RUNNING",
                 what="the blocking job to run")
        job = recommendations.accept(rec, users["operator"])
        held = set(job.allocations.values_list("node__hostname", flat=True))
        assert not held & set(sorted(proposed)[:2])
        nodes = {n.name: n for n in slurm.nodes()}
        assert all(nodes[h].idle for h in held)
        assert Job.objects.filter(slurm_job_id=blocker).exists()  # the sync saw it first
    finally:
        slurm.cancel(blocker)
