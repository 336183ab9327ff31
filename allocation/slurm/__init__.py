"""Slurm in the loop: a client for a real Slurm and a local Slurm cluster per machine.

No Django here (an import-linter contract keeps it so); the portal's services
pass in what they read from the database and the settings.

* :mod:`allocation.slurm.client`: :class:`SlurmClient` runs Slurm's commands
  (``sinfo``, ``squeue``, ``sacct``, ``scontrol``, ``sbatch``, ``scancel``) and
  returns :class:`SlurmNode` / :class:`SlurmJob` records; every failure is one
  :class:`SlurmError` with a one-line message and a ``kind``.
* :mod:`allocation.slurm.parse`: the parsers of 22.05's ``--json`` and ``sacct``
  output (pure).
* :mod:`allocation.slurm.conf`: :class:`ClusterSpec` and the text of
  ``slurm.conf``, ``topology.conf`` and ``slurmdbd.conf`` for a machine (pure).
* :mod:`allocation.slurm.local`: :class:`LocalCluster` writes those files and
  starts munged, slurmdbd, slurmctld and one slurmd per node on this host
  (``manage.py hx_slurm_cluster``); :mod:`allocation.slurm.processes` finds
  exactly the processes a cluster started.
"""

from allocation.slurm.client import ERROR_KINDS, SlurmClient, SlurmError
from allocation.slurm.conf import Accounting, ClusterSpec, Partition, SpecError
from allocation.slurm.local import ClusterError, ClusterStatus, LocalCluster
from allocation.slurm.records import FINISHED_STATES, SlurmJob, SlurmNode

__all__ = [
    "ERROR_KINDS",
    "FINISHED_STATES",
    "Accounting",
    "ClusterError",
    "ClusterSpec",
    "ClusterStatus",
    "LocalCluster",
    "Partition",
    "SlurmClient",
    "SlurmError",
    "SlurmJob",
    "SlurmNode",
    "SpecError",
]
