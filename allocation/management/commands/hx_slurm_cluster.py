"""``manage.py hx_slurm_cluster start|stop|status MACHINE``: a portal machine as a
real Slurm cluster on this host (development, tests, demos).

    python manage.py hx_slurm_cluster start hx [--dir DIR] [--base-port 17000]
        [--accounting] [--topology tree-nested|tree-diagonal|tree|none] [--timeout S]
        [--live-nodes N]
    eval "$(python manage.py hx_slurm_cluster env hx)"     # export SLURM_CONF=...
    python manage.py hx_slurm_cluster status hx
    python manage.py hx_slurm_cluster stop hx [--purge]

``start`` writes slurm.conf and topology.conf from the machine's shape and
hostnames into DIR (default ``$HX_DATA_DIR/slurm/<machine>``), starts munged,
slurmctld (slurmdbd with ``--accounting``) and one slurmd per node, waits until
every node answers and prints the ``export SLURM_CONF=...`` line. ``--live-nodes N``
starts a slurmd for the first N nodes only (a machine whose slurmd do not all fit
in this host's memory); the others are configured but never answer. ``stop``
and ``status`` read DIR only, so they work when the machine is gone.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from allocation.models import Machine
from allocation.slurm import Accounting, ClusterError, ClusterSpec, LocalCluster, SpecError
from allocation.slurm.conf import DEFAULT_BASE_PORT, TOPOLOGIES
from allocation.slurm_topology import DEFAULT_KIND

ACTIONS = ("start", "stop", "status", "env")


def default_dir(machine: str) -> Path:
    return Path(settings.DATA_DIR) / "slurm" / machine


class Command(BaseCommand):
    help = "Start, stop or show a local Slurm cluster that runs a portal machine on this host."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=ACTIONS)
        parser.add_argument("machine", help="the portal machine's name")
        parser.add_argument("--dir", help="state directory (default $HX_DATA_DIR/slurm/<machine>)")
        parser.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT,
                            help="slurmctld's port; slurmd ports follow from base + 10 "
                                 f"(default {DEFAULT_BASE_PORT})")
        parser.add_argument("--topology", choices=TOPOLOGIES, default=DEFAULT_KIND,
                            help=f"topology/tree grouping (default {DEFAULT_KIND}; see "
                                 "allocation/slurm_topology.py) or none")
        parser.add_argument("--accounting", action="store_true",
                            help="also run slurmdbd on the local MariaDB, for sacct")
        parser.add_argument("--db-host", default="localhost",
                            help="MariaDB host for --accounting (localhost: its Unix socket)")
        parser.add_argument("--db-user", default="root")
        parser.add_argument("--min-job-age", type=int, default=3600,
                            help="seconds a finished job stays visible in squeue")
        parser.add_argument("--live-nodes", type=int, default=0,
                            help="start a slurmd for the first N nodes only (default: all)")
        parser.add_argument("--timeout", type=float, default=None,
                            help="seconds to wait for every node (default: 60, or N/8)")
        parser.add_argument("--purge", action="store_true",
                            help="stop: also delete DIR and drop the accounting database")

    def handle(self, *args, **options):
        state_dir = Path(options["dir"] or default_dir(options["machine"])).resolve()
        try:
            if options["action"] == "start":
                self._start(options, state_dir)
            elif options["action"] == "env":
                self._env(state_dir)
            else:
                cluster = LocalCluster.from_dir(state_dir, progress=self._say)
                if options["action"] == "stop":
                    cluster.purge() if options["purge"] else cluster.stop()
                else:
                    for line in cluster.status().lines():
                        self.stdout.write(line)
        except (ClusterError, SpecError) as exc:
            raise CommandError(str(exc)) from exc

    def _say(self, line: str) -> None:
        self.stderr.write(line)

    def _spec(self, options, state_dir: Path) -> ClusterSpec:
        machine = Machine.objects.filter(name=options["machine"]).first()
        if machine is None:
            raise CommandError(f"no machine named {options['machine']!r}")
        hostnames = tuple(machine.nodes.order_by("index").values_list("hostname", flat=True))
        accounting = (Accounting(db_host=options["db_host"], db_user=options["db_user"])
                      if options["accounting"] else None)
        return ClusterSpec(machine=machine.name, sides=tuple(machine.sides),
                           concentration=machine.concentration, hostnames=hostnames,
                           state_dir=str(state_dir), base_port=options["base_port"],
                           topology=options["topology"], accounting=accounting,
                           min_job_age=options["min_job_age"],
                           live_nodes=options["live_nodes"])

    def _start(self, options, state_dir: Path) -> None:
        cluster = LocalCluster(self._spec(options, state_dir), progress=self._say)
        cluster.start(timeout=options["timeout"])
        self._env(state_dir)

    def _env(self, state_dir: Path) -> None:
        cluster = LocalCluster.from_dir(state_dir)
        for key, value in cluster.environment().items():
            self.stdout.write(f"export {key}={shlex.quote(value)}")
