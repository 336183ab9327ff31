"""``manage.py hx_spares``: how many spare nodes to give a job (docs/domain.md section 4)."""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from allocation.models import Machine
from health import services as health
from hxportal.text import pluralize


def validation_message(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{field}: {' '.join(messages)}"
                         for field, messages in exc.message_dict.items())
    return "; ".join(exc.messages)


class Command(BaseCommand):
    help = ("Recommend N_spare minimising the expected node-time E[C]; print the optimum, "
            "the As-is baseline and the curve. Parameters come from the options or, with "
            "--machine, from the machine's latest stored estimate.")

    def add_arguments(self, parser):
        parser.add_argument("--n-node", type=int, required=True, help="Nodes the job needs.")
        parser.add_argument("--p-abn", type=float, help="Probability a node is abnormal.")
        parser.add_argument("--alpha", "--alpha-abn", dest="alpha_abn", type=float,
                            help="Slowdown of an abnormal node (> 1).")
        parser.add_argument("--t-bench", type=float, help="Benchmark time on a normal node (s).")
        parser.add_argument("--t-cmpt", type=float, help="Compute time slowed by abnormal nodes.")
        parser.add_argument("--t-comm", type=float, help="Time not slowed (default 0).")
        parser.add_argument("--wall-time", type=float, help="Instead of --t-cmpt/--t-comm.")
        parser.add_argument("--compute-fraction", type=float,
                            help="t_cmpt = fraction x wall time (default 0.5).")
        parser.add_argument("--machine", help="Use this machine's latest estimate.")
        parser.add_argument("--benchmark", default="", help="... of this benchmark.")
        parser.add_argument("--max-curve-points", type=int, default=health.MAX_CURVE_POINTS)
        held = parser.add_mutually_exclusive_group()
        held.add_argument("--held", dest="release", action="store_false", default=None,
                          help="Dropped spares stay with the job to its end (the study's "
                               "model).")
        held.add_argument("--released", dest="release", action="store_true",
                          help="Dropped spares go back to Slurm after the benchmark "
                               "(default: the site's HX_SPARES_RELEASED).")
        parser.add_argument("--json", action="store_true", help="Print JSON.")

    def handle(self, *args, **options):
        machine = None
        if options["machine"]:
            machine = Machine.objects.filter(name=options["machine"]).first()
            if machine is None:
                raise CommandError(f"machine: no machine named {options['machine']!r}")
        try:
            result = health.recommend(
                n_node=options["n_node"], t_cmpt=options["t_cmpt"], t_comm=options["t_comm"],
                wall_time=options["wall_time"], compute_fraction=options["compute_fraction"],
                machine=machine, benchmark=options["benchmark"], p_abn=options["p_abn"],
                alpha_abn=options["alpha_abn"], t_bench=options["t_bench"],
                max_curve_points=options["max_curve_points"], release=options["release"])
        except ValidationError as exc:
            raise CommandError(validation_message(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        r = result
        saved = 1 - 1 / r["saving_ratio"]
        source = ("" if r["estimate"] is None else
                  f" (from estimate {r['estimate']['id']} of {r['estimate']['machine']}/"
                  f"{r['estimate']['benchmark']})")
        self.stdout.write(
            f"N_node={r['n_node']}  p_abn={r['p_abn']:.4g}  alpha_abn={r['alpha_abn']:.4g}  "
            f"t_bench={r['t_bench']:.4g} s  t_cmpt={r['t_cmpt']:.4g} s  "
            f"t_comm={r['t_comm']:.4g} s{source}\n"
            f"Recommended N_spare = {r['n_spare']} (allocate {pluralize(r['n_total'], 'node')})\n"
            f"  expected cost E[C]       {r['expected_cost']:.6g} node-s\n"
            f"  expected time E[T_total] {r['expected_time']:.6g} s\n"
            f"As-is (no benchmark, no spares)\n"
            f"  expected cost            {r['as_is_cost']:.6g} node-s\n"
            f"  expected time            {r['as_is_time']:.6g} s\n"
            f"Saving ratio {r['saving_ratio']:.4g}: "
            + (f"the method saves {saved:.1%} of the expected node-time."
               if saved > 0 else "the method does not pay off for this job.")
            + ("\nDropped spares go back to Slurm after the benchmark (they cost only its "
               "time)." if r["release"] else "\nDropped spares stay with the job to its end.")
            + f"\nCurve: {r['curve_points']} points ({r['curve_note']}); use --json to print it.")
