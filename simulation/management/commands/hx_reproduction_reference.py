"""``manage.py hx_reproduction_reference``: compute the stored reference reproduction.

The reproduction page shows the latest finished reproduction sweep; before any has
finished it shows this stored reference instead (``simulation/reproduction_reference.json``),
labelled with the engine and placement versions it was computed with. Runs every point of the
reproduction preset in this process (no database, no worker), so it takes a while:
about 30 minutes for 8 seeds on 2 processes. Recompute it whenever
``ENGINE_VERSION`` or ``PLACEMENT_VERSION`` changes (``--reuse`` keeps the runs
whose configuration hash, which holds both, still matches).
"""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from simulation import reproduction_preset, reproduction_report, services
from simulation.engine import ENGINE_VERSION
from simulation.services import PLACEMENT_VERSION


def _record(item: tuple[int, dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    """One point simulated, as the record the report aggregates."""
    number, point, config = item
    summary = services.summarise(services.simulate_inline(config))
    return {"run": number, "point": point, "config_hash": _hash(config),
            "status": "succeeded", "error": "",
            "completion_cycles": summary.get("target_cycles"),
            "makespan_cycles": summary.get("makespan_cycles")}


def _hash(config: dict[str, Any]) -> str:
    return services.config_hash(services.canonical_config(services.validate_config(config)))


def _key(point: dict[str, Any]) -> str:
    return json.dumps(point, sort_keys=True)


def _reusable(path: Path) -> dict[str, dict[str, Any]]:
    """Records of an earlier reference made by this engine version, by point: the
    engine is deterministic, so the same point and configuration give the same run.
    A record with a configuration hash is reused only when the hash still matches."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if body.get("engine_version") != ENGINE_VERSION:
        return {}
    return {_key(r["point"]): r for r in body.get("records", [])
            if r.get("status") == "succeeded"}


class Command(BaseCommand):
    help = ("Simulate every run of the reproduction preset in this process and write the "
            "stored reference report the reproduction page shows before any reproduction "
            "sweep has finished.")
    requires_system_checks = []
    requires_migrations_checks = False

    def add_arguments(self, parser):
        parser.add_argument("--seeds", type=int, default=2,
                            help="Seeds of Table 4, and of the ordering parts unless "
                                 "--ordering-seeds (default 2; the stored reference has 8: "
                                 "docs/domain.md 6.8).")
        parser.add_argument("--ordering-seeds", type=int, default=None,
                            help="Seeds of the two ordering parts, 1..32 (default: --seeds; "
                                 "the stored reference has 32).")
        parser.add_argument("--processes", type=int, default=1)
        parser.add_argument("--output", default=str(reproduction_report.REFERENCE_PATH))
        parser.add_argument("--reuse", action="store_true",
                            help="keep the runs of the existing reference (same engine "
                                 "version, point and configuration) and simulate only the "
                                 "others, e.g. the seeds added by a larger --seeds")

    def handle(self, *args, **options):
        try:
            items = reproduction_preset.reproduction_configs(options["seeds"],
                                                             options["ordering_seeds"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        known = _reusable(Path(options["output"])) if options["reuse"] else {}
        records: dict[int, dict[str, Any]] = {}
        work = []
        for i, (point, config) in enumerate(items):
            old = known.get(_key(point))
            if old is not None and old.get("config_hash", _hash(config)) == _hash(config):
                records[i + 1] = {**old, "run": i + 1, "config_hash": _hash(config)}
            else:
                work.append((i + 1, point, config))
        self.stdout.write(f"{len(records)} runs reused, {len(work)} to simulate")
        with ProcessPoolExecutor(max_workers=max(1, options["processes"])) as pool:
            for done, record in enumerate(pool.map(_record, work), start=1):
                records[record["run"]] = record
                self.stdout.write(f"{done}/{len(work)} {record['point']}")
        records = [records[n] for n in sorted(records)]
        body = {"engine_version": ENGINE_VERSION, "placement_version": PLACEMENT_VERSION,
                "seeds": options["seeds"],
                "ordering_seeds": options["ordering_seeds"] or options["seeds"],
                "computed_at": timezone.now().isoformat(timespec="seconds"),
                "run_count": len(records), "records": records}
        Path(options["output"]).write_text(json.dumps(body, separators=(",", ":")) + "\n",
                                           encoding="utf-8")
        self.stdout.write(f"wrote {options['output']}: {len(records)} runs, engine "
                          f"{body['engine_version']}, placement {body['placement_version']}")
