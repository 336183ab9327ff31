"""Binning busy and waiting nodes from job intervals (allocation.usage.series): hand-
checked bins, the partial newest bin, and node-time conserved for any set of jobs."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allocation.usage import RANGES, JobSpan, range_bins, usage_series

HOUR = 3600.0
EDGES = [0.0, HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR]


def test_a_job_counts_for_its_share_of_each_bin():
    # 8 nodes waiting 0:30-1:00, running 1:00-2:45: bins of an hour.
    s = usage_series([JobSpan(1800, 3600, 9900, 8)], EDGES, now=4 * HOUR)
    assert s.waiting_nodes == [4.0, 0.0, 0.0, 0.0]
    assert s.waiting_jobs == [0.5, 0.0, 0.0, 0.0]
    assert s.busy_nodes == [0.0, 8.0, 6.0, 0.0]


def test_running_and_pending_jobs_count_up_to_now_and_later_bins_are_gaps():
    jobs = [JobSpan(0, 0, None, 4), JobSpan(0, None, None, 2)]
    s = usage_series(jobs, EDGES, now=2.5 * HOUR)
    # The bin holding now is averaged over its elapsed half: no sag at the end.
    assert s.busy_nodes == [4.0, 4.0, 4.0, None]
    assert s.waiting_nodes == [2.0, 2.0, 2.0, None]
    assert s.waiting_jobs == [1.0, 1.0, 1.0, None]
    assert s.mean_busy() == 4.0 and s.peak_waiting_jobs() == 1.0


def test_jobs_outside_the_range_count_nothing():
    s = usage_series([JobSpan(-5 * HOUR, -4 * HOUR, -HOUR, 16),
                      JobSpan(5 * HOUR, 6 * HOUR, 7 * HOUR, 16)], EDGES, now=4 * HOUR)
    assert s.busy_nodes == [0.0] * 4 and s.waiting_nodes == [0.0] * 4


def test_a_job_over_the_whole_range_fills_every_bin():
    s = usage_series([JobSpan(-HOUR, -HOUR, 10 * HOUR, 3)], EDGES, now=4 * HOUR)
    assert s.busy_nodes == [3.0] * 4


def test_range_bins_end_at_now_rounded_up_to_a_bin():
    for name, (length, step) in RANGES.items():
        now = 1_700_000_123.0
        edges = range_bins(name, now)
        assert edges[-1] >= now > edges[-1] - step
        assert edges[-1] - edges[0] == length
        assert {b - a for a, b in itertools.pairwise(edges)} == {step}


def test_needs_two_edges():
    with pytest.raises(ValueError, match="two bin edges"):
        usage_series([], [0.0], now=0)


spans = st.builds(
    lambda submit, wait, run, nodes: JobSpan(submit, submit + wait, submit + wait + run, nodes),
    st.floats(-2 * HOUR, 5 * HOUR), st.floats(0, 2 * HOUR), st.floats(0, 3 * HOUR),
    st.integers(1, 64))


@settings(max_examples=200, deadline=None)
@given(st.lists(spans, max_size=30))
def test_node_time_is_conserved(jobs):
    """Sum over bins of mean busy nodes x bin width = the jobs' node-time inside the
    range (and the same for waiting): nothing lost or counted twice at bin edges."""
    now = 4 * HOUR
    s = usage_series(jobs, EDGES, now=now)

    def inside(a, b):
        return max(0.0, min(b, now) - max(a, 0.0))

    busy = sum(j.nodes * inside(j.start, j.end) for j in jobs)
    waiting = sum(j.nodes * inside(j.submit, j.start) for j in jobs)
    # bins are rounded to 1e-6 nodes: up to 4 x 0.5e-6 x 3600 node-s off
    assert sum(s.busy_nodes) * HOUR == pytest.approx(busy, rel=1e-6, abs=0.01)
    assert sum(s.waiting_nodes) * HOUR == pytest.approx(waiting, rel=1e-6, abs=0.01)
