"""A seeded synthetic job history for the demo machine (pure).

When no Slurm feeds the demo machine, ``hx_demo`` records a week of finished jobs
made here, so the board's charts have something true to its shape to show. The
jobs come from a small first-come-first-served queue over the machine's nodes:
Poisson arrivals (busier in working hours), power-of-two sizes, log-normal run
times capped by a wall time, and Slurm's usual outcomes. The queue starts
``warmup`` seconds before ``start`` so the machine is already busy when the window
opens. Every job is finished by ``end``: those still running or waiting then are
cancelled at ``end`` (the moment ``hx_demo`` ran), so no node is held by a job that
never existed and the machine's present state stays the portal's own.

Same seed, same history (``random.Random(seed)``, no global state).
"""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from dataclasses import dataclass

USERS = ("alice", "bob", "chen", "dana", "emre", "farah")
KINDS = ("cfd", "lammps", "gromacs", "wrf", "hpl", "train", "post")
#: Sizes as powers of two and how often each is asked for.
SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)
SIZE_WEIGHTS = (14, 12, 14, 16, 16, 12, 9, 5, 2)
#: (state, exit code, probability) of a finished job.
OUTCOMES = (("COMPLETED", 0, 0.86), ("FAILED", 1, 0.07), ("TIMEOUT", 0, 0.04),
            ("CANCELLED", 0, 0.03))


@dataclass(frozen=True)
class SyntheticJob:
    """One finished job; times are seconds since the epoch; ``start`` is None for a
    job cancelled while it waited."""

    name: str
    user: str
    nodes: int
    submit: float
    start: float | None
    end: float
    wall_time: float
    state: str
    exit_code: int


def _arrival_rate(t: float, per_hour: float) -> float:
    """Jobs per second at time ``t``: twice as many in working hours (UTC 8-18)."""
    hour = (t % 86_400) / 3_600
    return per_hour / 3_600 * (1.4 if 8 <= hour < 18 else 0.7)


def _outcome(rng: random.Random) -> tuple[str, int]:
    roll, acc = rng.random(), 0.0
    for state, code, p in OUTCOMES:
        acc += p
        if roll < acc:
            return state, code
    return OUTCOMES[0][0], OUTCOMES[0][1]


def _arrivals(rng: random.Random, start: float, end: float, per_hour: float,
              max_nodes: int) -> list[tuple[float, int, float, float]]:
    """(submit, nodes, run time, wall time) of each arrival, by thinning."""
    peak = _arrival_rate(36_000, per_hour)
    sizes = [s for s in SIZES if s <= max_nodes] or [1]
    weights = SIZE_WEIGHTS[:len(sizes)]
    out, t = [], start
    while True:
        t += rng.expovariate(peak)
        if t >= end:
            return out
        if rng.random() > _arrival_rate(t, per_hour) / peak:
            continue
        nodes = rng.choices(sizes, weights)[0]
        wall = rng.choice((1, 2, 4, 8, 12)) * 3_600.0
        run = min(rng.lognormvariate(math.log(wall * 0.35), 0.8), wall)
        out.append((t, nodes, max(run, 60.0), wall))


def synthetic_history(total_nodes: int, start: float, end: float, *, seed: int = 1,
                      jobs_per_hour: float = 5.0, warmup: float = 2 * 86_400
                      ) -> list[SyntheticJob]:
    """Jobs on ``total_nodes`` nodes, served first come first served, that waited or
    ran in [start, end), all finished by ``end``; sorted by submission.

    >>> jobs = synthetic_history(512, 0, 7 * 86_400, seed=1)
    >>> 600 < len(jobs) < 1_400, jobs == synthetic_history(512, 0, 7 * 86_400, seed=1)
    (True, True)
    >>> all(j.end > 0 and j.end <= 7 * 86_400 and j.nodes <= 512 for j in jobs)
    True
    >>> all(j.submit <= j.start < j.end for j in jobs if j.start is not None)
    True
    >>> sorted({j.state for j in jobs if j.end == 7 * 86_400})
    ['CANCELLED']
    """
    if total_nodes < 1 or end <= start:
        return []
    rng = random.Random(seed)
    arrivals = _arrivals(rng, start - warmup, end, jobs_per_hour, total_nodes)
    queue: deque[int] = deque()
    running: list[tuple[float, int]] = []  # (end, nodes) heap
    free = total_nodes
    starts: dict[int, float] = {}
    nxt = 0
    while nxt < len(arrivals) or queue:
        # the next event: an arrival or a job ending
        t_arrive = arrivals[nxt][0] if nxt < len(arrivals) else math.inf
        t_end = running[0][0] if running else math.inf
        clock = min(t_arrive, t_end)
        if clock >= end or clock == math.inf:
            break
        if t_end <= t_arrive:
            free += heapq.heappop(running)[1]
        else:
            queue.append(nxt)
            nxt += 1
        while queue and arrivals[queue[0]][1] <= free:
            i = queue.popleft()
            _, nodes, run, _ = arrivals[i]
            starts[i] = clock
            free -= nodes
            heapq.heappush(running, (clock + run, nodes))
    out = []
    for i, (submit, nodes, run, wall) in enumerate(arrivals):
        began = starts.get(i)
        finish = began + run if began is not None else end
        if finish <= start:
            continue  # over before the window opened
        if finish > end or began is None:
            state, code, finish = "CANCELLED", 0, end
        else:
            state, code = _outcome(rng)
        out.append(SyntheticJob(
            name=f"{rng.choice(KINDS)}-{i + 1}", user=rng.choice(USERS), nodes=nodes,
            submit=round(submit, 3), start=round(began, 3) if began is not None else None,
            end=round(finish, 3), wall_time=wall, state=state, exit_code=code))
    return out
