"""``manage.py hx_simulate``: one network simulation in this process (no database).

With ``--checkpoint``, Ctrl+C or SIGTERM does not lose the run: it saves after the
chunk of cycles it is in, says where, and exits with 128 + the signal's number; the
same command resumes it. A second signal stops at once, as without the option.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from django.core.management.base import BaseCommand, CommandError

from simulation import services
from simulation.engine import Suspended

#: Signals that make a checkpointed run save and stop.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signal(say) -> Iterator[list[int]]:
    """While the block runs, the first SIGINT or SIGTERM is noted (the list yielded gets
    its number) instead of stopping the process; Python's defaults come back after it,
    so a second one stops at once."""
    received: list[int] = []
    previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}

    def note(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        say(f"{signal.Signals(signum).name}: saving at the end of this chunk of cycles, "
            "then stopping (again to stop at once, without saving)")

    for sig in STOP_SIGNALS:
        signal.signal(sig, note)
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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
        checkpoint = options["checkpoint"]
        try:
            if checkpoint is None:
                result = services.simulate_inline(config, log=self.stderr.write)
            else:
                with stop_on_signal(self.stderr.write) as received:
                    result = services.simulate_inline(config, checkpoint, every,
                                                      log=self.stderr.write,
                                                      stop_requested=lambda: bool(received))
        except ValueError as exc:  # the engine's validation, AllocationError, a bad checkpoint
            raise CommandError(str(exc)) from exc
        except Suspended as stop:
            raise CommandError(f"stopped at cycle {stop.cycle:,}; its state is in {checkpoint}: "
                               "run the same command to go on",
                               returncode=128 + received[0]) from None
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
