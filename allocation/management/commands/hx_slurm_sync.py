"""``manage.py hx_slurm_sync MACHINE [--json]``: sync a machine with Slurm now.

    python manage.py hx_slurm_sync hx                 # one sync, a summary line
    python manage.py hx_slurm_sync hx --json          # the report as JSON
    python manage.py hx_slurm_sync hx --link --partition batch --interval 60
    python manage.py hx_slurm_sync hx --unlink        # beat stops syncing it

Slurm is reached through ``HX_SLURM_CONF`` (else ``SLURM_CONF``). When Slurm
cannot be read the command prints one line and exits 1; nothing synced before is
lost, and the next sync catches up.
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from allocation.models import Machine
from allocation.services import slurm_sync


class Command(BaseCommand):
    help = "Sync a machine's nodes and jobs with Slurm (and link it for beat)."

    def add_arguments(self, parser):
        parser.add_argument("machine")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        link = parser.add_mutually_exclusive_group()
        link.add_argument("--link", action="store_true",
                          help="link the machine: beat syncs it on its interval")
        link.add_argument("--unlink", action="store_true", help="beat stops syncing it")
        parser.add_argument("--partition", help="sync only this Slurm partition ('' for all)")
        parser.add_argument("--interval", type=int, help="seconds between beat syncs (>= 5)")
        parser.add_argument("--no-sync", action="store_true",
                            help="only change the link settings")

    def handle(self, *args, **options):
        machine = Machine.objects.filter(name=options["machine"]).first()
        if machine is None:
            raise CommandError(f"no machine named {options['machine']!r}")
        enabled = True if options["link"] else False if options["unlink"] else None
        if enabled is not None or options["partition"] is not None or options["interval"]:
            slurm_sync.configure(machine, enabled=enabled, partition=options["partition"],
                                 interval_seconds=options["interval"])
        if options["no_sync"]:
            return
        try:
            report = slurm_sync.sync_machine(machine)
        except slurm_sync.SyncFailed as exc:
            raise CommandError(f"sync of {machine.name} failed: {exc}") from exc
        if options["json"]:
            self.stdout.write(json.dumps(report.as_dict(), indent=2, default=str))
            return
        self.stdout.write(
            f"{machine.name}: {report.status} in {report.seconds:.2f} s; {report.nodes} nodes "
            f"({report.node_changes} changed), {report.jobs_seen} jobs "
            f"({report.jobs_created} new, {report.jobs_updated} updated, "
            f"{report.jobs_finished} finished), {report.allocations_added} allocations added, "
            f"{report.allocations_released} released"
            + (f", {report.deferred} left for the next sync" if report.deferred else "")
            + ("" if report.accounting else "; accounting not read"))
        for warning in report.warnings:
            self.stderr.write(f"warning: {warning}")
