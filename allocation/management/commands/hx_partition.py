"""``manage.py hx_partition``: the static partition of an allocation formula and its
properties, offline (no database, no server).

    python manage.py hx_partition --sides 8,8 --concentration 8 --policy diagonal \\
        --index 0 [--blocks 1] [--seed S] [--exact auto|yes|no] --json
    python manage.py hx_partition --sides 8,8 --concentration 8 --policy all
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from allocation.hyperx import POLICIES, HyperX, partition_properties, static_partition

EXACT = {"auto": None, "yes": True, "no": False}
COLUMNS = ["size", "switches", "avg_distance", "max_distance", "convexity", "switch_locality",
           "hull_links", "pb_bound", "pb_exact"]


def _sides(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.replace("x", ",").split(",") if part.strip())
    except ValueError as exc:
        raise CommandError(f"--sides: use integers separated by commas, not {text!r}") from exc


class Command(BaseCommand):
    help = "Print a static allocation formula's partition and its properties."
    requires_system_checks: list = []

    def add_arguments(self, parser):
        parser.add_argument("--sides", required=True, help="e.g. 8,8")
        parser.add_argument("--concentration", type=int, required=True)
        parser.add_argument("--policy", required=True, help=f"{', '.join(POLICIES)} or all")
        parser.add_argument("--index", type=int, default=0, help="partition index p")
        parser.add_argument("--blocks", type=int, default=1, help="k consecutive partitions")
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--exact", choices=list(EXACT), default="auto",
                            help="exact partition bandwidth (LP): auto = when cheap")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        sides = _sides(options["sides"])
        c = options["concentration"]
        if len(sides) != 2 or sides[0] != sides[1] or c != sides[0]:
            raise CommandError("the allocation formulas are defined for a 2D n x n machine with "
                               f"c = n; got sides {list(sides)} and c = {c}")
        n = sides[0]
        policies = list(POLICIES) if options["policy"] == "all" else [options["policy"]]
        rows = []
        for policy in policies:
            try:
                endpoints = static_partition(policy, n, options["index"], options["blocks"],
                                             options["seed"])
                props = partition_properties(HyperX(sides, c), endpoints,
                                             exact=EXACT[options["exact"]])
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            rows.append({"policy": policy, "sides": list(sides), "concentration": c,
                         "index": options["index"], "blocks": options["blocks"],
                         "seed": options["seed"], "endpoints": [int(e) for e in endpoints],
                         **props.as_dict()})
        if options["json"]:
            self.stdout.write(json.dumps(rows[0] if len(rows) == 1 else rows))
            return
        self.stdout.write(f"{'policy':<16}" + "".join(f"{c:>16}" for c in COLUMNS))
        for row in rows:
            cells = []
            for column in COLUMNS:
                value = row[column]
                cells.append(f"{value:>16.4f}" if isinstance(value, float) else f"{value!s:>16}")
            self.stdout.write(f"{row['policy']:<16}" + "".join(cells))
