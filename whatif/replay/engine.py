"""The discrete-event replay: FCFS with EASY backfill on the HyperX model.

Events are job ends, spare releases and arrivals. At each event time, first
every end and release at that time frees its nodes, then the jobs submitted at
that time join the queue, then one scheduling pass runs:

1. Jobs start in queue (submit) order while the head fits in the free nodes.
2. When the head does not fit, its *shadow time* is when enough nodes are
   free by the running jobs' requested limits (start + benchmark + time
   limit; released spares by start + benchmark), and the *extra* nodes are
   those free then beyond the head's need.
3. Backfill: every later job (in queue order) that fits in the free nodes now
   starts if its requested limit ends by the shadow time, or if it fits in the
   extra nodes (which it then uses up). This is Slurm's ``sched/backfill``
   reservation for the first job only (EASY).

Whether a job fits depends only on the free node count: every online policy
places any job that is not larger than the free nodes. The policy decides
*where* (hence switch locality, whole free switches, and with the adjustments
on, run times).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom

from allocation.hyperx import HyperX, allocate

from .model import ModelParameters, SpareRule, recommended_spares
from .placement import analytic_factor, has_switch_locality
from .workload import Job

__all__ = ["ReplayResult", "replay"]

_END, _RELEASE = 1, 0


@dataclass
class ReplayResult:
    """What one scenario and seed produced (plain Python numbers)."""

    policy: str
    spares: str
    seed: int
    n_nodes: int
    starts: np.ndarray
    ends: np.ndarray
    totals: np.ndarray
    node_seconds_useful: float
    node_seconds_spares: float
    node_seconds_lost_slow: float
    locality_jobs: int
    locality_eligible: int
    timeouts: int
    series: dict[str, list[float]]
    factor_source: str


class _Machine:
    """Free endpoints and whole free switches, updated per start and release."""

    def __init__(self, topology: HyperX) -> None:
        self.hx = topology
        self.c = topology.concentration
        self.size = topology.n_endpoints
        self.free = np.ones(self.size, dtype=np.bool_)
        self.per_switch = np.full(topology.n_switches, self.c, dtype=np.int64)
        self.n_free = self.size

    def take(self, eps: np.ndarray) -> None:
        self.free[eps] = False
        self.per_switch -= np.bincount(eps // self.c, minlength=self.per_switch.size)
        self.n_free -= eps.size

    def give(self, eps: np.ndarray) -> None:
        self.free[eps] = True
        self.per_switch += np.bincount(eps // self.c, minlength=self.per_switch.size)
        self.n_free += eps.size

    def whole_free_switches(self) -> int:
        return int(np.count_nonzero(self.per_switch == self.c))


def _spare_counts(jobs: Sequence[Job], rule: SpareRule, model: ModelParameters,
                  n_nodes: int) -> np.ndarray:
    if rule.kind == "none":
        return np.zeros(len(jobs), dtype=np.int64)
    if rule.kind == "fixed":
        wanted = np.full(len(jobs), rule.count, dtype=np.int64)
    else:
        wanted = np.array([recommended_spares(j.nodes, float(j.timelimit),
                                              model.share(j.pattern), model.p_abn,
                                              model.alpha_abn, model.t_bench, rule.release)
                           for j in jobs], dtype=np.int64)
    sizes = np.array([j.nodes for j in jobs], dtype=np.int64)
    return np.minimum(wanted, n_nodes - sizes)


class _Replay:
    def __init__(self, jobs: Sequence[Job], topology: HyperX, policy: str, rule: SpareRule,
                 model: ModelParameters, seed: int) -> None:
        self.jobs, self.hx, self.policy, self.rule, self.model = jobs, topology, policy, rule, model
        self.seed = seed
        n = len(jobs)
        self.m = _Machine(topology)
        self.sizes = np.array([j.nodes for j in jobs], dtype=np.int64)
        self.spares = _spare_counts(jobs, rule, model, topology.n_endpoints)
        self.totals = self.sizes + self.spares
        self.limits = np.array([j.timelimit for j in jobs], dtype=float)
        self.runtimes = np.array([j.runtime for j in jobs], dtype=float)
        bench_on = model.benchmark and rule.kind != "none"
        self.bench_nominal = np.where(self.spares > 0, model.t_bench, 0.0) if bench_on \
            else np.zeros(n)
        rng = np.random.default_rng([seed, 0x51_0E])
        u_count, u_where = rng.random(n), rng.random(n)
        if model.slow_nodes and model.p_abn > 0:
            self.abnormal = binom.ppf(u_count, self.totals, model.p_abn).astype(np.int64)
        else:
            self.abnormal = np.zeros(n, dtype=np.int64)
        self.where = u_where
        self.starts = np.full(n, np.nan)
        self.ends = np.full(n, np.nan)
        self.useful = self.spare_cost = self.lost = 0.0
        self.locality = self.eligible = self.timeouts = 0
        self.events: list[tuple[float, int, int, int]] = []
        self.pending: dict[tuple[int, int], tuple[float, int]] = {}
        self.held: dict[tuple[int, int], np.ndarray] = {}
        self.seq = 0
        self.queue: list[int] = []

    # ---------------------------------------------------------------- starts
    def _split(self, j: int, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Kept and dropped endpoints, and how many kept ones are abnormal.

        Abnormal nodes sit at evenly spaced positions from a drawn offset; the
        benchmark finds them, so the spares drop them first, then the last
        nodes in rank order."""
        total, spare, n_abn = int(self.totals[j]), int(self.spares[j]), int(self.abnormal[j])
        if n_abn == 0 and spare == 0:
            return eps, eps[:0], 0
        bad = np.zeros(total, dtype=np.bool_)
        if n_abn:
            step = total / n_abn
            offset = self.where[j] * step
            bad[(np.floor(offset + step * np.arange(n_abn)).astype(np.int64)) % total] = True
        dropped_bad = min(spare, n_abn)
        order = np.concatenate([np.nonzero(bad)[0], np.nonzero(~bad)[0][::-1]])
        drop = np.zeros(total, dtype=np.bool_)
        drop[order[:spare]] = True
        return eps[~drop], eps[drop], n_abn - dropped_bad

    def _start(self, j: int, t: float) -> None:
        m, model, total = self.m, self.model, int(self.totals[j])
        held_fraction = 1.0 - m.n_free / m.size
        eps = allocate(self.hx, m.free, self.policy, total,
                       seed=(self.seed * 1_000_003 + j) % (2**32))
        m.take(eps)
        kept, dropped, bad_kept = self._split(j, eps)
        if self.sizes[j] >= m.c:
            self.eligible += 1
            self.locality += has_switch_locality(self.hx, kept)
        base = self.runtimes[j]
        share = model.share(self.jobs[j].pattern)
        factor = 1.0
        if model.placement:
            factor = (model.calibration.get(self.policy, 1.0) if model.calibration
                      else analytic_factor(self.hx, kept, held_fraction))
        compute = base * (1.0 - share)
        app = compute + base * share * factor
        actual = app + (model.alpha_abn - 1.0) * compute if bad_kept > 0 else app
        limit = self.limits[j]
        if actual > limit:
            actual = limit
            self.timeouts += 1
        bench = 0.0
        if self.bench_nominal[j] > 0:
            bench = model.t_bench * (model.alpha_abn if self.abnormal[j] > 0 else 1.0)
        end = t + bench + actual
        spare = int(self.spares[j])
        useful = min(app, limit)
        self.useful += self.sizes[j] * useful
        self.lost += self.sizes[j] * (actual - useful)
        self.spare_cost += total * bench
        est_end = t + self.bench_nominal[j] + limit
        if spare and self.rule.release:
            self._push(t + bench, _RELEASE, j, dropped, t + self.bench_nominal[j])
            self._push(end, _END, j, kept, est_end)
        else:
            self.spare_cost += spare * actual
            self._push(end, _END, j, eps, est_end)
        self.starts[j], self.ends[j] = t, end

    def _push(self, when: float, kind: int, j: int, eps: np.ndarray, estimate: float) -> None:
        heapq.heappush(self.events, (when, self.seq, kind, j))
        self.seq += 1
        self.pending[(j, kind)] = (estimate, int(eps.size))
        self.held[(j, kind)] = eps

    def release_until(self, t: float) -> None:
        while self.events and self.events[0][0] <= t:
            _, _, kind, j = heapq.heappop(self.events)
            del self.pending[(j, kind)]
            self.m.give(self.held.pop((j, kind)))

    # ------------------------------------------------------------ scheduling
    def schedule(self, t: float) -> None:
        queue, m = self.queue, self.m
        while queue and self.totals[queue[0]] <= m.n_free:
            self._start(queue.pop(0), t)
        if len(queue) < 2 or m.n_free == 0:
            return
        shadow, extra = self._shadow(t, int(self.totals[queue[0]]))
        waiting = np.fromiter(queue[1:], dtype=np.int64, count=len(queue) - 1)
        # only jobs that fit the free nodes now can start (in queue order)
        for j in waiting[self.totals[waiting] <= m.n_free].tolist():
            need = int(self.totals[j])
            if need > m.n_free:
                if m.n_free == 0:
                    break
                continue
            ends_in_time = t + self.bench_nominal[j] + self.limits[j] <= shadow
            if ends_in_time or need <= extra:
                extra -= 0 if ends_in_time else need
                queue.remove(j)
                self._start(j, t)

    def _shadow(self, t: float, need: int) -> tuple[float, int]:
        free = self.m.n_free
        releases = sorted(self.pending.values())
        k = 0
        while k < len(releases):
            when = releases[k][0]
            while k < len(releases) and releases[k][0] == when:
                free += releases[k][1]
                k += 1
            if free >= need:
                return max(when, t), free - need
        return math.inf, 0  # pragma: no cover - every job fits the empty machine


def _resample(times: list[float], values: list[float], t0: float, t1: float,
              points: int) -> list[float]:
    """Time-weighted means of a step function over ``points`` equal bins."""
    if t1 <= t0 or not times:
        return [float(values[-1]) if values else 0.0] * points
    edges = np.linspace(t0, t1, points + 1)
    tt = np.asarray(times, dtype=float)
    vv = np.asarray(values, dtype=float)
    # integral of the step function up to each edge
    seg = np.diff(np.append(tt, t1))
    cum = np.concatenate([[0.0], np.cumsum(vv * seg)])
    idx = np.clip(np.searchsorted(tt, edges, side="right") - 1, 0, tt.size - 1)
    at_edge = cum[idx] + vv[idx] * (edges - tt[idx])
    return (np.diff(at_edge) / np.diff(edges)).tolist()


def replay(jobs: Sequence[Job], topology: HyperX, policy: str,
           spares: SpareRule | None = None, model: ModelParameters | None = None,
           seed: int = 0, progress: Callable[[float], None] | None = None,
           series_points: int = 200) -> ReplayResult:
    """Replay ``jobs`` (in submit order, each no larger than the machine).

    Examples
    --------
    >>> from .model import IDEAL
    >>> hx = HyperX((2, 2), 2)                       # 8 nodes
    >>> jobs = [Job(1, 0, 0, 100, 6, 100), Job(2, 1, 1, 51, 4, 200),
    ...         Job(3, 2, 2, 52, 2, 50)]             # 3 ends before 2 can start: backfilled
    >>> r = replay(jobs, hx, "row", model=IDEAL)
    >>> r.starts.tolist(), r.ends.tolist()
    ([0.0, 100.0, 2.0], [100.0, 150.0, 52.0])
    """
    spares = spares or SpareRule()
    model = model or ModelParameters()
    order = sorted(range(len(jobs)), key=lambda i: jobs[i].submit)
    if order != list(range(len(jobs))):
        raise ValueError("jobs must be in submit order")
    too_big = [j.id for j in jobs if j.nodes > topology.n_endpoints or j.nodes < 1]
    if too_big:
        raise ValueError(f"jobs {too_big[:5]} do not fit the machine; leave them out first")
    r = _Replay(jobs, topology, policy, spares, model, seed)
    submits = np.array([j.submit for j in jobs], dtype=float)
    n, nxt, started, size = len(jobs), 0, 0, topology.n_endpoints
    times: list[float] = []
    busy: list[float] = []
    queued: list[float] = []
    whole: list[float] = []
    while nxt < n or r.events:
        t = min(r.events[0][0] if r.events else math.inf,
                submits[nxt] if nxt < n else math.inf)
        r.release_until(t)
        while nxt < n and submits[nxt] <= t:
            r.queue.append(nxt)
            nxt += 1
        before = len(r.queue)
        r.schedule(t)
        started += before - len(r.queue)
        times.append(t)
        busy.append(size - r.m.n_free)
        queued.append(len(r.queue))
        whole.append(r.m.whole_free_switches())
        if progress is not None and started and started % 2000 == 0:
            progress(started / n)
    t0 = float(submits[0]) if n else 0.0
    t1 = float(np.nanmax(r.ends)) if n else 0.0
    series = {
        "t0": t0, "t1": t1,
        "utilisation": [b / topology.n_endpoints
                        for b in _resample(times, busy, t0, t1, series_points)],
        "queue": _resample(times, queued, t0, t1, series_points),
        "whole_free_switches": _resample(times, whole, t0, t1, series_points),
    }
    return ReplayResult(
        policy=policy, spares=spares.label, seed=seed, n_nodes=topology.n_endpoints,
        starts=r.starts, ends=r.ends, totals=r.totals,
        node_seconds_useful=float(r.useful), node_seconds_spares=float(r.spare_cost),
        node_seconds_lost_slow=float(r.lost), locality_jobs=r.locality,
        locality_eligible=r.eligible, timeouts=r.timeouts, series=series,
        factor_source=model.factor_source)
