"""The demo machine's synthetic history (allocation.usage.workload): seeded, never more
nodes busy than the machine has, busy when the window opens, all finished by its end."""

from __future__ import annotations

from allocation.usage import JobSpan, range_bins, synthetic_history, usage_series

DAY = 86_400.0
WEEK = 7 * DAY


def _busy_peak(jobs) -> int:
    events = sorted([(j.start, j.nodes) for j in jobs if j.start is not None]
                    + [(j.end, -j.nodes) for j in jobs if j.start is not None],
                    key=lambda e: (e[0], e[1]))
    busy = peak = 0
    for _, delta in events:
        busy += delta
        peak = max(peak, busy)
    return peak


def test_same_seed_same_history_other_seed_another():
    assert synthetic_history(512, 0, WEEK, seed=3) == synthetic_history(512, 0, WEEK, seed=3)
    assert synthetic_history(512, 0, WEEK, seed=3) != synthetic_history(512, 0, WEEK, seed=4)


def test_a_week_on_512_nodes_is_about_a_thousand_jobs_within_capacity():
    jobs = synthetic_history(512, 0, WEEK, seed=1)
    assert 600 < len(jobs) < 1400
    assert _busy_peak(jobs) <= 512
    assert all(0 < j.end <= WEEK for j in jobs)
    assert all(j.submit <= j.start <= j.end for j in jobs if j.start is not None)
    assert {j.state for j in jobs} <= {"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"}


def test_the_machine_is_busy_when_the_window_opens_and_free_at_its_end():
    now = 1_700_000_000.0
    jobs = synthetic_history(512, now - WEEK, now, seed=1)
    series = usage_series([JobSpan(j.submit, j.start if j.start is not None else j.end,
                                   j.end, j.nodes) for j in jobs],
                          range_bins("week", now), now)
    first_day = [v for v in series.busy_nodes[:24] if v is not None]
    assert sum(first_day) / len(first_day) > 100, "warmed up before the window"
    cut = [j for j in jobs if j.end == now]
    assert cut and {j.state for j in cut} == {"CANCELLED"}, "nothing left running"


def test_small_machines_get_jobs_that_fit():
    jobs = synthetic_history(16, 0, DAY, seed=2)
    assert jobs and max(j.nodes for j in jobs) <= 16 and _busy_peak(jobs) <= 16


def test_nothing_for_an_empty_window_or_machine():
    assert synthetic_history(512, 10, 10) == [] and synthetic_history(0, 0, DAY) == []
