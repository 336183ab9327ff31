"""What the cycle loop does per simulated cycle, counted, and what a wake-up
rule could still save.

The speed rows of bench_simulation.py say how fast the loop runs; this says
how much work it does for each row, which is what a change of algorithm must
reduce.  It builds a *counting copy* of the engine: ``simulation/engine`` is
copied to a temporary package, counters are written into the copy's cycle
loop by anchored edits (each anchor must match exactly once, so a changed loop
fails loudly instead of counting the wrong thing), and each row runs in the
copy and in the engine itself, which must give the same cycles and phit-hops
(the counters change no state and draw nothing).

Counted per simulated cycle:

- switch allocations (crossbar stages run) and input-port visits, split into
  those due by time (a head arrives, a crossbar port frees, a recorded wake-up)
  and those woken because an output port their blocked heads watch changed;
- *useless* watch-woken visits: every head looked at was a check (see
  ``loop.route``) that stayed certain to fail and left its tied set as it was,
  with no grant and no full evaluation.  A wake-up rule that knew each blocked
  head's threshold exactly could skip them: the ceiling of "wake a head only
  when a watched port can beat its recorded choice";
- of those, the visits a *port-level bound* would skip (no changed port in the
  union of the port's tied sets, and every changed port's lowest cost, its
  emptiest VC's occupancy plus the port's, plus the deroute penalty unless it
  is minimal for one of the heads, above the largest recorded cost), and how
  often that bound would have skipped a visit that mattered (must be 0);
- route calls: checks (and the useless ones), full evaluations (and those a
  check asked for, and how many of them failed); heads evaluated for the
  first time and at their recorded wake-up (and how many failed again);
  grants; random draws;
- output-port changes by kind: a credit returned, an output slot freed, a
  packet sent on the link (a downstream credit consumed: it can only raise
  the port's cost), a grant (an output slot filled);
- what a *link-send rule* would skip (no wake-up for a link send on a port
  outside the head's tied set, whose cost only rises): the checks whose
  changed ports all changed by link sends only, and the woken visits in which
  every head is such a check or certain without one (and how often either
  mattered: must be 0).

The port-level bound is what a cheap rule could do; the useless share is what
any rule could do at most.

Usage: python benchmarks/count_loop_work.py [--rows ref,sat,interf] [--cycles 50000]
       [--big-cycles 600]
(rows as in bench_simulation.py; ``big`` is slow in the copy, about a minute.)
The copy is compiled into its temporary directory (numba caches beside the
source), about a minute; the engine's own cache is used as it is.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "simulation" / "engine"
COPY_NAME = "hx_counting_engine"

#: counters after the loop's own ``N_ST`` counters (indices into ``st``)
COUNTERS = ("switch", "visit", "visit_watch", "visit_useless", "bound_skip", "bound_wrong",
            "check", "check_useless", "full", "full_redo", "full_redo_failed", "new", "wake",
            "wake_failed", "grant", "touch_credit", "touch_freed", "touch_send", "touch_grant",
            "send_skip", "send_wrong", "visit_send", "visit_send_wrong")

#: the loop's four kinds of output-port change (``_touch`` calls), each counted: its
#: kind, its switch and local port (as the loop names them there), the call
_TOUCHES = (
    ("credit", "su", "lu", "                _touch(uo, su, lu, pt, st, port_stamp, swst)\n"),
    ("freed", "so", "go - so * pt",
     "            _touch(go, so, go - so * pt, pt, st, port_stamp, swst)\n"),
    ("send", "s", "lp", "                        _touch(g, s, lp, pt, st, port_stamp, swst)\n"),
    ("grant", "s", "olp", "                    _touch(go, s, olp, pt, st, port_stamp, swst)\n"),
)

_VISIT = """\
                _vc_order(vorder, vt, ip[g, IP_RR], rr_alloc, rng)
"""
_VISIT_COUNTED = """\
                _vc_order(vorder, vt, ip[g, IP_RR], rr_alloc, rng)
                st[N_ST0 + K_VISIT] += 1
                by_watch = ip[g, IP_WAKE] > t
                all_send = True  # every head looked at is one the link-send rule skips
                useful = False
                bound_skip = False
                if by_watch:
                    st[N_ST0 + K_VISIT_WATCH] += 1
                    bound_skip = _bound_skips(g, s, t, vt, pt, chg | swst[s, SW_CHG], ip, hq,
                                              head, out_used, credits, out_down_in, port_occ,
                                              bin_cap, phits, prm)
"""
_HEAD = """\
                    if he >= 0:
                        timed = t >= head[ivc, H_WAKE]
"""
_HEAD_COUNTED = """\
                    timed = False
                    send_only = False
                    if he < 0:
                        useful = True
                        all_send = False
                        st[N_ST0 + K_NEW] += 1
                    if he >= 0:
                        timed = t >= head[ivc, H_WAKE]
                        if timed:
                            useful = True
                            all_send = False
                            st[N_ST0 + K_WAKE] += 1
"""
_ROUTE = """\
                    while True:
                        olp, ov, der = route(
"""
_ROUTE_COUNTED = """\
                    redone = False
                    is_check = head[ivc, H_EVT] >= 0 and head[ivc, H_VCS] >= 0
                    tied0 = head[ivc, H_TIED]
                    while True:
                        olp, ov, der = route(
"""
_ROUTED = """\
                        if olp != -2:
                            break
                        head[ivc, H_EVT] = -1
"""
_ROUTED_COUNTED = """\
                        if olp != -2:
                            break
                        useful = True
                        st[N_ST0 + K_FULL] += 1
                        st[N_ST0 + K_FULL_REDO] += 1
                        redone = True
                        head[ivc, H_EVT] = -1
                    if timed and olp < 0:
                        st[N_ST0 + K_WAKE_FAILED] += 1
                    if redone and olp < 0:
                        st[N_ST0 + K_FULL_REDO_FAILED] += 1
                    if is_check:
                        st[N_ST0 + K_CHECK] += 1
                        if olp == -1 and (tied0 & cm) == 0 and head[ivc, H_TIED] == tied0:
                            st[N_ST0 + K_CHECK_USELESS] += 1
                        else:
                            useful = True
                    else:
                        useful = True
                        st[N_ST0 + K_FULL] += 1
                    if olp >= 0:
                        st[N_ST0 + K_GRANT] += 1
                    if send_only:
                        st[N_ST0 + K_SEND_SKIP] += 1
                        if not (olp == -1 and is_check and head[ivc, H_TIED] == tied0):
                            st[N_ST0 + K_SEND_WRONG] += 1
                    else:
                        all_send = False
"""
_VISITED = """\
                ip[g, IP_WAKE] = w_g
                ip[g, IP_WATCH] = m_g
"""
_VISITED_COUNTED = """\
                if by_watch and not useful:
                    st[N_ST0 + K_VISIT_USELESS] += 1
                if by_watch and all_send:
                    st[N_ST0 + K_VISIT_SEND] += 1
                    if useful:
                        st[N_ST0 + K_VISIT_SEND_WRONG] += 1
                if bound_skip:
                    st[N_ST0 + K_BOUND_SKIP] += 1
                    if useful:
                        st[N_ST0 + K_BOUND_WRONG] += 1
                ip[g, IP_WAKE] = w_g
                ip[g, IP_WATCH] = m_g
"""
_SWITCH = """\
            chg = swst[s, SW_CHG]
"""
_SWITCH_COUNTED = """\
            chg = swst[s, SW_CHG]
            st[N_ST0 + K_SWITCH] += 1
            nchg = swst[s, SW_NSEND]
            swst[s, SW_NSEND] = 0
"""
# The link-send rule (counted, not built): a head skips a check whose changed ports
# are outside its tied set and changed by link sends only (their costs only rose).
_N_SW = "N_SW = 9\n"
_N_SW_COUNTED = ("SW_NSEND = 9  # ports changed by other than a link send since the last "
                 "allocation\nN_SW = 10\n")
_CM = """\
                                    cm = head[ivc, H_WATCH] & (chg | swst[s, SW_CHG])
"""
_CM_COUNTED = """\
                                    cm = head[ivc, H_WATCH] & (chg | swst[s, SW_CHG])
                                    send_only = (not timed and cm != 0
                                                 and (cm & head[ivc, H_TIED]) == 0
                                                 and (cm & (nchg | swst[s, SW_NSEND])) == 0)
"""
_N_ST = "N_ST = 16\n"
_DRAW = """\
    x = state[0]
    x ^= x >> _S12
"""
_DRAW_COUNTED = """\
    state[1] += np.uint64(1)
    x = state[0]
    x ^= x >> _S12
"""
_BOUND = '''

@njit(cache=True, inline="always")
def _bound_skips(g, s, t, vt, pt, changed_any, ip, hq, head, out_used, credits, out_down_in,
                 port_occ, bin_cap, phits, prm):
    """Would a port-level lower bound skip this watch-woken visit?"""
    changed = ip[g, IP_WATCH] & changed_any
    tied = np.int64(0)
    minimal = np.int64(0)
    b_max = np.int64(-1)
    for v in range(vt):
        ivc = g * vt + v
        rdy = hq[ivc, Q_RDY]
        if rdy < 0 or rdy > t:
            continue
        if head[ivc, H_EVT] < 0 or head[ivc, H_VCS] < 0 or t >= head[ivc, H_WAKE]:
            return False
        tied |= head[ivc, H_TIED]
        minimal |= head[ivc, H_MIN]
        b_max = max(b_max, head[ivc, H_COST])
    if changed & tied != 0:
        return False
    m = changed
    while m != 0:
        lp = _ctz(m)
        m &= m - 1
        go = s * pt + lp
        low = np.int64(1) << 40
        for v in range(vt):
            low = min(low, out_used[go * vt + v] + bin_cap - credits[out_down_in[go] * vt + v])
        if prm[PRM_OCCUPANCY] == 1:
            low += port_occ[go]
        low *= phits
        if (minimal >> lp) & 1 == 0:
            low += DEROUTE_PENALTY
        if low <= b_max:
            return False
    return True
'''


def _replace_once(text: str, old: str, new: str, where: str) -> str:
    count = text.count(old)
    if count != 1:
        raise LookupError(f"{where}: anchor found {count} times, expected once:\n{old}")
    return text.replace(old, new)


def counting_sources(loop: str, rng: str, simulator: str) -> tuple[str, str, str]:
    """The three edited sources of the counting copy (loop.py, rng.py, simulator.py)."""
    loop = _replace_once(loop, _N_ST, "N_ST0 = 16\n" + "".join(
        f"K_{name.upper()} = {i}\n" for i, name in enumerate(COUNTERS))
        + f"N_ST = N_ST0 + {len(COUNTERS)}\n", "loop.py N_ST")
    for old, new in ((_VISIT, _VISIT_COUNTED), (_HEAD, _HEAD_COUNTED), (_ROUTE, _ROUTE_COUNTED),
                     (_ROUTED, _ROUTED_COUNTED), (_VISITED, _VISITED_COUNTED),
                     (_SWITCH, _SWITCH_COUNTED), (_DRAW, _DRAW_COUNTED)):
        loop = _replace_once(loop, old, new, "loop.py")
    for kind, switch, local, call in _TOUCHES:
        indent = call[: len(call) - len(call.lstrip())]
        counted = f"{call}{indent}st[N_ST0 + K_TOUCH_{kind.upper()}] += 1\n"
        if kind != "send":  # a change that may lower a cost or free a slot
            counted += f"{indent}swst[{switch}, SW_NSEND] |= _bit({local}, pt)\n"
        loop = _replace_once(loop, call, counted, f"loop.py _touch ({kind})")
    for old, new in ((_N_SW, _N_SW_COUNTED), (_CM, _CM_COUNTED)):
        loop = _replace_once(loop, old, new, "loop.py (link-send rule)")
    loop += _BOUND
    rng = _replace_once(rng, "return np.array([val], dtype=np.uint64)",
                        "return np.array([val, 0], dtype=np.uint64)", "rng.py")
    simulator = _replace_once(
        simulator, "    total_work = int(tr.app_total[finite].sum())\n",
        "    LAST_POOL.clear()\n    LAST_POOL.update(pool)\n"
        "    total_work = int(tr.app_total[finite].sum())\n", "simulator.py")
    simulator += "\n\nLAST_POOL: dict = {}\n"
    return loop, rng, simulator


def build_copy(dest: Path) -> None:
    """The counting copy of the engine as package ``COPY_NAME`` under ``dest``."""
    pkg = dest / COPY_NAME
    shutil.copytree(ENGINE, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    loop, rng, simulator = counting_sources(*(
        (ENGINE / name).read_text(encoding="utf-8")
        for name in ("loop.py", "rng.py", "simulator.py")))
    (pkg / "loop.py").write_text(loop, encoding="utf-8")
    (pkg / "rng.py").write_text(rng, encoding="utf-8")
    (pkg / "simulator.py").write_text(simulator, encoding="utf-8")


class Counts(NamedTuple):
    """One row's counters over its run."""

    row: str
    cycles: int
    phit_hops: int
    values: dict[str, int]
    draws: int

    def per_cycle(self, name: str) -> float:
        return self.values[name] / max(self.cycles, 1)

    def describe(self) -> str:
        v = self.values
        pc = self.per_cycle
        useless = v["visit_useless"]
        return (
            f"{self.row}: {self.cycles} cycles; per cycle: {pc('switch'):.1f} switch allocations, "
            f"{pc('visit'):.1f} input-port visits ({pc('visit') - pc('visit_watch'):.1f} due by "
            f"time, {pc('visit_watch'):.1f} woken by a watched port), "
            f"{pc('visit_useless'):.1f} of the woken useless "
            f"({useless / max(v['visit_watch'], 1):.0%} of them, "
            f"{useless / max(v['visit'], 1):.0%} of all visits); a port-level bound skips "
            f"{pc('bound_skip'):.1f} ({v['bound_skip'] / max(useless, 1):.0%} of the useless), "
            f"wrongly {v['bound_wrong']} times; route: {pc('check'):.1f} checks "
            f"({pc('check_useless'):.1f} useless), {pc('full'):.1f} full evaluations "
            f"({pc('full_redo'):.1f} asked for by a check, {pc('full_redo_failed'):.1f} of them "
            f"failed); heads: {pc('new'):.1f} new, {pc('wake'):.1f} at their wake-up "
            f"({pc('wake_failed'):.1f} failed again); "
            f"{pc('grant'):.1f} grants; {self.draws / max(self.cycles, 1):.0f} random draws; "
            f"output-port changes: {pc('touch_credit'):.1f} credits returned, "
            f"{pc('touch_freed'):.1f} slots freed, {pc('touch_send'):.1f} link sends, "
            f"{pc('touch_grant'):.1f} grants; a link-send rule (no wake-up for a link send on "
            f"a port outside the tied set) skips {pc('send_skip'):.1f} checks (wrongly "
            f"{v['send_wrong']} times) and {pc('visit_send'):.1f} woken visits (wrongly "
            f"{v['visit_send_wrong']} times)")


def count_row(copy, engine, row: str, cycles: int, big_cycles: int) -> Counts:
    """Run ``row`` in the counting copy and in the engine; their runs must agree."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_simulation import _config

    from simulation.engine.scenarios import build_partitions

    kw, parts = _config(row, cycles, big_cycles)
    results = []
    for package in (copy, engine):
        cfg = package.SimConfig(**kw)
        partitions = [np.arange(cfg.endpoints)] if parts == "all" else build_partitions(cfg)
        results.append(package.simulate(cfg, partitions))
    counted, real = results
    if (counted.cycles, counted.phit_hops) != (real.cycles, real.phit_hops):
        raise RuntimeError(f"{row}: the counting copy ran differently: "
                           f"{counted.cycles, counted.phit_hops} against "
                           f"{real.cycles, real.phit_hops}")
    pool = copy.simulator.LAST_POOL
    n_st0 = copy.loop.N_ST0
    st = pool["st"]
    values = {name: int(st[n_st0 + i]) for i, name in enumerate(COUNTERS)}
    return Counts(row, counted.cycles, counted.phit_hops, values, int(pool["rng"][1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="ref,sat,interf")
    ap.add_argument("--cycles", type=int, default=50_000, help="ref row (sat: a quarter)")
    ap.add_argument("--big-cycles", type=int, default=600)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hx_counting_") as tmp:
        build_copy(Path(tmp))
        sys.path.insert(0, tmp)
        sys.path.insert(0, str(ROOT))
        copy = importlib.import_module(COPY_NAME)
        engine = importlib.import_module("simulation.engine")
        for row in (r for r in args.rows.split(",") if r):
            print(count_row(copy, engine, row, args.cycles, args.big_cycles).describe(),
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
