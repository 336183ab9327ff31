"""An independent, deliberately plain EASY backfill scheduler on node counts.

Written apart from ``whatif.replay.engine`` (no heap, no allocator, quadratic
loops) so that the replay with every adjustment off can be checked against it.
Semantics it shares with the reference behaviour (Slurm ``sched/backfill``
with one reservation): at each instant, ends first, then arrivals, then start
in FCFS order while the head fits; then reserve for the head at the earliest
time enough nodes are free by the running jobs' limits, and start any later
job that fits now and either ends by that time or fits in the nodes the
reservation leaves over.
"""

from __future__ import annotations


def easy_schedule(jobs, n_nodes):
    """Start times of ``jobs`` (objects with submit, runtime, timelimit, nodes)."""
    n = len(jobs)
    starts = [None] * n
    running = []  # (end, limit_end, nodes)
    waiting = []
    free = n_nodes
    nxt = 0

    def begin(k, now):
        nonlocal free
        starts[k] = now
        free -= jobs[k].nodes
        running.append((now + jobs[k].runtime, now + jobs[k].timelimit, jobs[k].nodes))

    while nxt < n or waiting or running:
        moments = [r[0] for r in running]
        if nxt < n:
            moments.append(jobs[nxt].submit)
        now = min(moments)
        done = [r for r in running if r[0] <= now]
        running[:] = [r for r in running if r[0] > now]
        free += sum(r[2] for r in done)
        while nxt < n and jobs[nxt].submit <= now:
            waiting.append(nxt)
            nxt += 1
        while waiting and jobs[waiting[0]].nodes <= free:
            begin(waiting.pop(0), now)
        if len(waiting) < 2:
            continue
        shadow, spare = _reservation(running, free, jobs[waiting[0]].nodes, now)
        for k in list(waiting[1:]):
            size = jobs[k].nodes
            if size > free:
                continue
            ends_in_time = now + jobs[k].timelimit <= shadow
            if ends_in_time or size <= spare:
                spare -= 0 if ends_in_time else size
                waiting.remove(k)
                begin(k, now)
    return starts


def _reservation(running, free, need, now):
    """When the head can start by the limits, and the nodes left over then."""
    for moment in sorted({r[1] for r in running}):
        total = free + sum(r[2] for r in running if r[1] <= moment)
        if total >= need:
            return max(moment, now), total - need
    raise AssertionError("the head fits the empty machine")
