"""``manage.py hx_whatif``: replay a job log on a stored machine under each policy
and spare rule, in this process.

    python manage.py hx_whatif MACHINE --workload FILE --format swf|sacct|history \\
        --policy P [--policy P2 ...] --spares none|N|recommended [--seeds K] [--ideal] --json

``--format history`` reads the machine's synced Slurm jobs (``--workload`` is
then not needed); ``--format synthetic`` draws a month from the Lublin &
Feitelson model. ``--held`` keeps dropped spares to the end of the job (default:
released after the benchmark). ``--spares`` may be given more than once.
"""

from __future__ import annotations

import json
import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from allocation.hyperx import ONLINE_POLICIES
from allocation.models import Machine
from whatif import constants, services
from whatif.choices import WorkloadFormat


class Command(BaseCommand):
    help = "Replay a job log (SWF, sacct, the synced history or a synthetic month) per policy."

    def add_arguments(self, parser):
        parser.add_argument("machine")
        parser.add_argument("--workload", help="the log file ('-' reads standard input)")
        parser.add_argument("--format", required=True, choices=WorkloadFormat.values)
        parser.add_argument("--policy", action="append", required=True,
                            choices=ONLINE_POLICIES, dest="policies")
        parser.add_argument("--spares", action="append", dest="spares",
                            help="none, a whole number N, or recommended (repeatable)")
        parser.add_argument("--seeds", type=int, default=1)
        parser.add_argument("--ideal", action="store_true",
                            help="every adjustment off: recorded run times, no slow nodes, "
                                 "no benchmark")
        parser.add_argument("--held", action="store_true",
                            help="dropped spares stay with the job to its end")
        parser.add_argument("--days", type=float, default=constants.SYNTHETIC_DAYS,
                            help="days of the synthetic workload")
        parser.add_argument("--load", type=float, default=constants.SYNTHETIC_LOAD,
                            help="load factor of the synthetic workload")
        parser.add_argument("--json", action="store_true", help="print the results as JSON")

    def handle(self, *args, **opts):
        machine = Machine.objects.filter(name=opts["machine"]).first()
        if machine is None:
            raise CommandError(f"no machine named {opts['machine']!r}")
        if not 1 <= opts["seeds"] <= constants.MAX_SEEDS:
            raise CommandError(f"--seeds must be between 1 and {constants.MAX_SEEDS}")
        try:
            workload = self._workload(machine, opts)
            jobs, info = services.prepare(workload, machine)
            out = services.run_inline(machine, jobs, info, fmt=opts["format"],
                                      policies=opts["policies"],
                                      spares=opts["spares"] or ["none"], seeds=opts["seeds"],
                                      ideal=opts["ideal"], release=not opts["held"])
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        if opts["json"]:
            self.stdout.write(json.dumps(out))
            return
        self._table(out)

    def _workload(self, machine: Machine, opts):
        fmt = opts["format"]
        if fmt == WorkloadFormat.HISTORY:
            return services.history_workload(machine)
        if fmt == WorkloadFormat.SYNTHETIC:
            return services.synthetic(machine, days=opts["days"], load=opts["load"])
        path = opts["workload"]
        if not path:
            raise CommandError(f"--format {fmt} needs --workload FILE")
        if path == "-":
            return services.parse_upload(fmt, sys.stdin)
        try:
            with open(path, encoding="utf-8") as handle:
                return services.parse_upload(fmt, handle)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from exc

    def _table(self, out) -> None:
        self.stdout.write(f"{out['machine']}: {len(out['scenarios'][0]['jobs']):,} jobs "
                          f"replayed, {out['left_out']} left out (larger than the machine); "
                          f"model: {out['model']['source']}")
        header = f"{'policy':24} {'spares':12} {'util':>6} {'wait':>9} {'p95 wait':>9} " \
                 f"{'bsld':>7} {'locality':>8}"
        self.stdout.write(header)
        for e in out["scenarios"]:
            s = e["summary"]
            self.stdout.write(f"{e['policy']:24} {e['spares']:12} {s['utilisation']:6.3f} "
                              f"{s['mean_wait_s']:9.0f} {s['p95_wait_s']:9.0f} "
                              f"{s['mean_bounded_slowdown']:7.2f} {s['locality_share']:8.3f}")
