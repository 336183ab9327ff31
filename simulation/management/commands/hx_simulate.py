"""``manage.py hx_simulate``: one network simulation in this process (no database)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from simulation import services


class Command(BaseCommand):
    help = ("Run one packet-level simulation from a JSON config (README 'Simulation config') "
            "in this process and print the result. Touches no database.")
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--config", required=True,
                            help="JSON file with configuration keys, or - for stdin.")
        parser.add_argument("--json", action="store_true",
                            help="Print the full result as JSON.")
        parser.add_argument("--checkpoint", type=Path, default=None, metavar="FILE",
                            help="Save the run's state to FILE every --checkpoint-seconds, "
                                 "and resume from FILE when it is there (the same command, "
                                 "stopped before its end); FILE is removed at the end.")
        parser.add_argument("--checkpoint-seconds", type=float, default=None, metavar="S",
                            help="Seconds between saves (default HX_SIM_CHECKPOINT_SECONDS).")

    def handle(self, *args, **options):
        source = options["config"]
        try:
            text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"config: cannot read {source}: {exc}") from exc
        try:
            config = json.loads(text)
        except ValueError as exc:
            raise CommandError(f"config: not JSON: {exc}") from exc
        every = options["checkpoint_seconds"]
        if every is not None and every <= 0:
            raise CommandError("--checkpoint-seconds: must be above 0")
        try:
            result = services.simulate_inline(config, options["checkpoint"], every,
                                              log=self.stderr.write)
        except ValueError as exc:  # the engine's validation, AllocationError, a bad checkpoint
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        cfg = result["config"]
        self.stdout.write(services.describe(cfg))
        makespan = result["makespan_cycles"]
        self.stdout.write(f"makespan: {makespan if makespan is not None else 'not finished'} "
                          f"cycles ({result['cycles']} simulated, completed: "
                          f"{result['completed']})")
        lat = result["latency_mean"]
        p99 = result["latency_p99"]
        self.stdout.write(f"throughput: {result['throughput']:.4f} phits/cycle/endpoint, "
                          f"latency mean {lat if lat is None else f'{lat:.1f}'}, "
                          f"p99 {p99 if p99 is None else f'{p99:.0f}'} cycles")
        for i, app in enumerate(result["apps"]):
            self.stdout.write(f"  app {i} ({app['role']}, {app['policy']}, {app['ranks']} "
                              f"ranks): completion {app['completion_cycles']}")
        self.stdout.write(f"wall time: {result['wall_seconds']:.2f} s")
