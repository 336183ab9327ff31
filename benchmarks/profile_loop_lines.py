"""Where the cycle loop spends its time, line by line, without hardware counters.

The hosts this project is measured on are virtual machines without
performance counters (``perf stat`` reports cache events as not supported),
and a numba function is one opaque block to Python's profilers.  This script
samples the running process with ``perf``'s software clock (``cpu-clock``,
which needs no counter) and maps every sample that falls inside
``run_cycles`` to a line of ``simulation/engine/loop.py`` through the DWARF
line table of the loop's own object code, compiled for the occasion with
``NUMBA_DEBUGINFO=1`` into a temporary numba cache (the project's cache is
left alone).  A sample lands on the instruction that waits, so on a machine
whose state outgrows the cache the top lines are the loads that miss.

It is a diagnosis, not a benchmark: the shares are of the samples inside the
loop (the line table of the debug build, whose code is the optimised code
with line records added), and compiling the debug build takes a minute or two.

``--case interf`` profiles the ``interf`` row of bench_simulation.py instead
(8 x 8, c = 8: a 64-rank all-to-all beside a background permutation at 1.0,
Omni-WAR, run to the end; ``--machine``, ``--rate`` and ``--cycles`` do not
apply).

Usage: python benchmarks/profile_loop_lines.py [--case uniform|interf]
       [--machine 16x16x16c16] [--rate 0.5] [--cycles 600] [--top 30] [--frequency 4000]
Needs ``perf`` (Debian: linux-perf), ``nm`` and ``objdump`` (binutils).
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "simulation" / "engine" / "loop.py"
_LINE_ROW = re.compile(r"^loop\.py\s+(\d+)\s+(0x[0-9a-f]+|\d+)")


def _parse_machine(machine: str) -> tuple[tuple[int, ...], int]:
    """``'16x16x16c16'`` -> ``((16, 16, 16), 16)``."""
    sides, _, conc = machine.partition("c")
    return tuple(int(s) for s in sides.split("x")), int(conc)


def line_table(decoded: str) -> list[tuple[int, int]]:
    """``(address, line)`` rows of loop.py from ``objdump --dwarf=decodedline``,
    sorted by address (line 0: code the compiler made, attributed to the row
    before it)."""
    rows = []
    for text in decoded.splitlines():
        m = _LINE_ROW.match(text)
        if m:
            rows.append((int(m.group(2), 0), int(m.group(1))))
    rows.sort()
    return rows


def function_span(nm_output: str, prefix: str) -> tuple[int, int]:
    """Offset and size of the first defined symbol starting with ``prefix``
    in ``nm -S`` output."""
    for text in nm_output.splitlines():
        parts = text.split()
        if len(parts) == 4 and parts[3].startswith(prefix):
            return int(parts[0], 16), int(parts[1], 16)
    raise LookupError(f"no symbol starting with {prefix!r}")


def attribute(samples: list[int], base: int, size: int,
              table: list[tuple[int, int]]) -> tuple[Counter, int]:
    """Samples (instruction addresses) inside ``[base, base + size)`` counted
    per source line; also how many fell inside."""
    addresses = [a for a, _ in table]
    lines: Counter = Counter()
    inside = 0
    for ip in samples:
        off = ip - base
        if not 0 <= off < size:
            continue
        inside += 1
        i = bisect.bisect_right(addresses, off) - 1
        while i > 0 and table[i][1] == 0:
            i -= 1
        if i >= 0:
            lines[table[i][1]] += 1
    return lines, inside


def report(lines: Counter, inside: int, total: int, source: list[str], top: int) -> str:
    out = [f"samples: {total:,} in the process, {inside:,} in run_cycles "
           f"({100 * inside / max(total, 1):.0f} %)", "share  line  source"]
    for line, n in lines.most_common(top):
        text = source[line - 1].strip() if 0 < line <= len(source) else ""
        out.append(f"{100 * n / max(inside, 1):5.1f}%  {line:4d}  {text[:88]}")
    return "\n".join(out)


def _child(case: str, machine: str, rate: float, cycles: int, out_dir: Path) -> None:
    """Runs under perf: warm the loop on a small machine, run the case, then
    write the loop's object code and its address in this process."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from simulation.engine import SimConfig, simulate
    from simulation.engine import loop as engine_loop

    def run(sides: tuple[int, ...], conc: int, n: int) -> None:
        cfg = SimConfig(sides=sides, concentration=conc, routing="min", pattern="uniform",
                        rate=rate, seed=1, max_cycles=n, warmup_cycles=n // 2)
        simulate(cfg, [np.arange(cfg.endpoints)])

    run((4, 4), 4, 200)
    if case == "interf":
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_simulation import INTERF_JSON

        from simulation.engine.scenarios import build_partitions

        cfg = SimConfig(**dict(INTERF_JSON, sides=tuple(INTERF_JSON["sides"])))
        simulate(cfg, build_partitions(cfg))
    else:
        run(*_parse_machine(machine), cycles)
    compiled = next(iter(engine_loop.run_cycles.overloads.values()))
    name = compiled.fndesc.llvm_func_name
    (out_dir / "loop.o").write_bytes(compiled.library._get_compiled_object())
    address = compiled.library.get_pointer_to_function(name)
    (out_dir / "loop.json").write_text(json.dumps({"address": address, "symbol": name}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=("uniform", "interf"), default="uniform")
    ap.add_argument("--machine", default="16x16x16c16")
    ap.add_argument("--rate", type=float, default=0.5)
    ap.add_argument("--cycles", type=int, default=600)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--frequency", type=int, default=4000, help="samples per second")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.case, args.machine, args.rate, args.cycles, Path(args.child))
        return 0
    missing = [tool for tool in ("perf", "nm", "objdump") if shutil.which(tool) is None]
    if missing:
        print(f"needs {', '.join(missing)} (Debian: linux-perf, binutils)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hx_loop_lines_") as tmp:
        work = Path(tmp)
        env = dict(os.environ, NUMBA_DEBUGINFO="1", NUMBA_CACHE_DIR=str(work / "numba"))
        data = work / "perf.data"
        subprocess.run(
            ["perf", "record", "-q", "-e", "cpu-clock", "-F", str(args.frequency), "-o",
             str(data), sys.executable, __file__, "--child", str(work), "--case", args.case,
             "--machine",
             args.machine, "--rate", str(args.rate), "--cycles", str(args.cycles)],
            env=env, check=True,
        )
        meta = json.loads((work / "loop.json").read_text())
        obj = str(work / "loop.o")
        nm = subprocess.run(["nm", "-S", obj], capture_output=True, text=True, check=True)
        start, size = function_span(nm.stdout, meta["symbol"])
        decoded = subprocess.run(["objdump", "--dwarf=decodedline", obj], capture_output=True,
                                 text=True, check=True).stdout
        table = [(a - start, line) for a, line in line_table(decoded)]
        script = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip"],
                                capture_output=True, text=True, check=True).stdout
        samples = [int(x, 16) for x in script.split()]
        lines, inside = attribute(samples, meta["address"], size, table)
    if args.case == "interf":
        print("interf: 8x8 c8, 64-rank all-to-all (diagonal) beside a permutation at 1.0, "
              "Omni-WAR")
    else:
        print(f"{args.machine}, uniform {args.rate}, MIN, {args.cycles} cycles")
    print(report(lines, inside, len(samples), LOOP.read_text().splitlines(), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
