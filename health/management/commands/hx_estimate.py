"""``manage.py hx_estimate``: p_abn, alpha_abn and t_bench from a CSV history, offline."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from health import services as health
from health.management.commands.hx_spares import validation_message

MAX_OFFLINE_ROWS = 20_000_000


class Command(BaseCommand):
    help = ("Estimate p_abn (with a 95% interval), alpha_abn and t_bench from a CSV in the "
            "upload format (job,benchmark,node,seconds[,measured_at]). Touches no database. "
            "With one benchmark (or --benchmark) prints one estimate; otherwise "
            "{\"benchmarks\": {name: estimate}}.")
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--input", required=True, help="CSV file, or - for stdin.")
        parser.add_argument("--benchmark", help="Estimate only this benchmark.")
        parser.add_argument("--json", action="store_true", help="Print JSON.")

    def handle(self, *args, **options):
        source = options["input"]
        try:
            text = sys.stdin.read() if source == "-" else Path(source).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"input: cannot read {source}: {exc}") from exc
        try:
            rows = health.parse_csv(text, max_rows=MAX_OFFLINE_ROWS)
            health.check_units(rows)
            estimates = health.estimate_history(rows, options["benchmark"])
        except ValidationError as exc:
            raise CommandError(validation_message(exc)) from exc
        result = (next(iter(estimates.values())) if len(estimates) == 1
                  else {"benchmarks": estimates})
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        for name, e in estimates.items():
            lo, hi = e["p_abn_interval"]
            alpha = "none (no abnormal run)" if e["alpha_abn"] is None else f"{e['alpha_abn']:.4g}"
            threshold = e["rule"]["thresholds"][name]["ratio_threshold"]
            self.stdout.write(
                f"{name}: {e['runs']} node-runs in {e['jobs']} jobs on {e['nodes']} nodes, "
                f"{e['abnormal_runs']} abnormal\n"
                f"  t_bench   = {e['t_bench']:.6g} s\n"
                f"  alpha_abn = {alpha}\n"
                f"  p_abn     = {e['p_abn']:.4g}  ({e['confidence']:.0%} interval "
                f"{lo:.4g} .. {hi:.4g}, {e['interval_method']})\n"
                f"  rule      = {e['rule']['name']}: abnormal above {threshold:.3g}x the "
                f"job median")
