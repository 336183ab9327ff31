"""The default topology steers plain ``sbatch`` jobs on the real slurmctld.

A cluster of its own (4x4 switches, c = 4, hx001..hx064, so no other test's job
or controller restart is in the way) runs with the default grouping,
``tree-nested``: switch ``s`` holds hx[4s+1 .. 4s+4]; diagonal 0 is switches 0,
5, 10, 15 (pairs {0, 5} and {10, 15}), diagonal 1 is 1, 6, 11, 12. With the row
tree the same jobs would take row 0's switches instead. Each placement is also
what the best-fit model (``allocation.slurm_bestfit``) predicts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from allocation.slurm import ClusterSpec, LocalCluster, SlurmClient
from allocation.slurm_bestfit import best_fit, parse_tree
from allocation.slurm_topology import DEFAULT_KIND
from tests.allocation.slurm.conftest import free_base_port, require_slurm, scratch_dir, wait_for

pytestmark = pytest.mark.slurm

SLEEP = ["sleep", "600"]
HOSTS = tuple(f"hx{i:03d}" for i in range(1, 65))


@pytest.fixture(scope="module")
def nested_cluster():
    require_slurm()
    spec = ClusterSpec(machine="hxtopo", sides=(4, 4), concentration=4, hostnames=HOSTS,
                       state_dir=scratch_dir("hx-slurm-topology-"),
                       base_port=free_base_port(len(HOSTS), accounting=False))
    cluster = LocalCluster(spec)
    try:
        cluster.start(timeout=180)
        yield cluster
    finally:
        cluster.purge()


def switch_nodes(*switches: int) -> tuple[str, ...]:
    return tuple(f"hx{4 * s + k + 1:03d}" for s in sorted(switches) for k in range(4))


def placed(client: SlurmClient, job_id: int) -> tuple[str, ...]:
    job = wait_for(lambda: (j if (j := client.job(job_id)) and j.state == "RUNNING" else None),
                   what=f"job {job_id} to run")
    return job.nodes


def all_idle(client: SlurmClient) -> bool:
    return all(node.idle for node in client.nodes())


def predicted(cluster, client: SlurmClient, size: int) -> tuple[str, ...]:
    """What the best-fit model says Slurm will do on the nodes idle now."""
    tree = parse_tree(Path(cluster.paths.topology_conf).read_text())
    free = [node.name for node in client.nodes() if node.idle]
    return tuple(best_fit(tree, free, size))


def test_unpinned_jobs_fill_whole_free_diagonal_groups(nested_cluster):
    slurm_cluster, slurm = nested_cluster, nested_cluster.client(timeout=30)
    assert slurm_cluster.spec.topology == DEFAULT_KIND == "tree-nested"
    assert "SwitchName=hxtopo_diag0_l1_0 Switches=hxtopo_s0_0,hxtopo_s1_1" in Path(
        slurm_cluster.paths.topology_conf).read_text()
    wait_for(lambda: all_idle(slurm), what="every node idle before the test")
    jobs = []
    try:
        # Empty machine: 8 nodes are exactly the first pair of diagonal 0.
        assert predicted(slurm_cluster, slurm, 8) == switch_nodes(0, 5)
        jobs.append(slurm.submit(SLEEP, num_nodes=8, name="pair"))
        assert placed(slurm, jobs[-1]) == switch_nodes(0, 5)
        slurm.cancel(jobs[-1])
        wait_for(lambda: all_idle(slurm), what="the pair's nodes to be idle")
        # One node of switch 0 busy: the pair {0, 5} has 7 free nodes, so an
        # 8-node job takes the next whole pair, {10, 15}, not the broken switch.
        jobs.append(slurm.submit(SLEEP, nodes=["hx001"], name="blocker"))
        assert placed(slurm, jobs[-1]) == ("hx001",)
        assert predicted(slurm_cluster, slurm, 8) == switch_nodes(10, 15)
        jobs.append(slurm.submit(SLEEP, num_nodes=8, name="pair"))
        assert placed(slurm, jobs[-1]) == switch_nodes(10, 15)
        # Diagonal 0 is no longer whole: 16 nodes take all of diagonal 1.
        assert predicted(slurm_cluster, slurm, 16) == switch_nodes(1, 6, 11, 12)
        jobs.append(slurm.submit(SLEEP, num_nodes=16, name="diagonal"))
        assert placed(slurm, jobs[-1]) == switch_nodes(1, 6, 11, 12)
    finally:
        for job_id in jobs:
            slurm.cancel(job_id)
    wait_for(lambda: all_idle(slurm), what="every node idle after the test")
