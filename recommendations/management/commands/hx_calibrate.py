"""``manage.py hx_calibrate MACHINE``: start (or follow) the calibration of a machine's
shape, optionally running its runs in this process.

Operators normally let beat start calibrations and the workers run them; this command
starts one with a chosen grid (``--patterns all2all --sizes 256 1024 --loads 0.5``),
follows it with a progress line (``--wait``) or, on a site without a worker at hand,
simulates its runs here with ``--inline`` (``--processes N`` in parallel).
"""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor

from django import db
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from allocation.models import Machine
from recommendations import services as recommendations
from simulation import services as simulation
from simulation.models import SimulationRun


def _execute(run_id: int) -> str | None:
    db.connections.close_all()  # a forked process opens its own connection
    return simulation.execute_run(run_id)


class Command(BaseCommand):
    help = "Start or follow the calibration of a machine's shape (see the module docstring)."

    def add_arguments(self, parser):
        parser.add_argument("machine")
        parser.add_argument("--patterns", nargs="+")
        parser.add_argument("--sizes", nargs="+", type=int)
        parser.add_argument("--loads", nargs="+", type=float)
        parser.add_argument("--policies", nargs="+")
        parser.add_argument("--seeds", nargs="+", type=int)
        parser.add_argument("--wait", action="store_true",
                            help="follow it until every run has ended")
        parser.add_argument("--inline", action="store_true",
                            help="simulate its pending runs in this process (implies --wait)")
        parser.add_argument("--processes", type=int, default=1,
                            help="with --inline: processes simulating at once")

    def handle(self, *args, **options):
        machine = Machine.objects.filter(name=options["machine"]).first()
        if machine is None:
            raise CommandError(f"machine: no machine named {options['machine']!r}")
        axes = {k: options[k] for k in ("patterns", "sizes", "loads", "policies", "seeds")
                if options[k]}
        try:
            calibration, created = recommendations.start_calibration(machine, axes=axes)
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}"
                                         for k, v in exc.message_dict.items())) from exc
        calibration = recommendations.prepare_calibration(calibration.pk)  # once only
        self.stdout.write(f"calibration {calibration.pk} of {machine.name} ({machine.shape}): "
                          f"{'started' if created else 'already running'}, "
                          f"{calibration.run_count} runs")
        started = time.monotonic()
        if options["inline"]:
            pending = list(SimulationRun.objects.filter(
                sweep_id=calibration.sweep_id, status="pending").order_by("id")
                .values_list("id", flat=True))
            self._run_inline(pending, max(1, options["processes"]), started)
        if options["wait"] or options["inline"]:
            while (calibration := recommendations.refresh_calibration(calibration)).status \
                    == "running":
                progress = recommendations.calibration_progress(calibration)
                self.stdout.write(f"{progress['done']}/{progress['total']} runs, "
                                  f"{time.monotonic() - started:.0f} s")
                time.sleep(5)
        calibration = recommendations.refresh_calibration(calibration)
        self.stdout.write(f"calibration {calibration.pk}: {calibration.status}, "
                          f"{calibration.points_done} runs answer, "
                          f"{calibration.run_seconds:.0f} s of simulation, "
                          f"{time.monotonic() - started:.0f} s wall")

    def _run_inline(self, pending: list[int], processes: int, started: float) -> None:
        """Each pending run through the run machinery (claimed, stored once), here."""
        if processes == 1:
            results = map(simulation.execute_run, pending)
            self._report(results, len(pending), started)
            return
        db.connections.close_all()
        with ProcessPoolExecutor(max_workers=processes) as pool:
            self._report(pool.map(_execute, pending), len(pending), started)

    def _report(self, results, total: int, started: float) -> None:
        for done, _ in enumerate(results, start=1):
            if done % 10 == 0 or done == total:
                self.stdout.write(f"{done}/{total} runs, {time.monotonic() - started:.0f} s")
