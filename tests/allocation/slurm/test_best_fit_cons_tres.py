"""The calibration's aged machine places other jobs as the real slurmctld does.

``recommendations.calibration.occupancy.slurm_best_fit`` models Slurm's node
selection without a topology plugin (select/cons_tres, whole-node jobs). A cluster
of its own (4x4 switches, c = 4, 64 nodes, topology none) runs a churn of jobs of
Lublin and Feitelson's sizes, arriving and ending at random
(``benchmarks/slurm_best_fit_check.py``, whose loop this runs); every placement
must be the model's, on the nodes free at that moment.
"""

from __future__ import annotations

import pytest

from allocation.slurm import ClusterSpec, LocalCluster
from tests.allocation.slurm.conftest import free_base_port, require_slurm, scratch_dir
from tests.benchmark_scripts import load_benchmark

pytestmark = pytest.mark.slurm

HOSTS = [f"fit{i:03d}" for i in range(1, 65)]


def test_every_placement_of_a_churn_is_the_models():
    require_slurm()
    check = load_benchmark("slurm_best_fit_check")
    spec = ClusterSpec(machine="hxfit", sides=(4, 4), concentration=4, hostnames=tuple(HOSTS),
                       state_dir=scratch_dir("hx-slurm-fit-"), topology="none",
                       select="cons_tres", scheduler_parameters="sched_interval=1",
                       base_port=free_base_port(len(HOSTS), accounting=False))
    cluster = LocalCluster(spec)
    try:
        cluster.start(timeout=180)
        agree, placed, lines = check.churn(cluster.client(timeout=60), HOSTS, events=60,
                                           load=0.6, seed=5, select="cons_tres")
    finally:
        cluster.purge()
    assert placed >= 30 and agree == placed, lines
