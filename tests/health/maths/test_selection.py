"""Keeping the fastest nodes of one job."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from health.maths import Selection, select_fastest


def test_keeps_fastest_and_flags_slow_dropped():
    times = {f"n{i:02d}": 0.017 * (1 + 0.002 * (i % 5)) for i in range(16)}
    times["n03"] = 0.06
    times["n09"] = 0.05
    sel = select_fastest(times, 13)
    assert isinstance(sel, Selection)
    assert len(sel.keep) == 13
    assert len(sel.dropped) == 3
    assert sel.dropped[-2:] == ["n09", "n03"]
    assert sel.abnormal == ["n09", "n03"]
    assert sel.abnormal_kept == []
    assert sel.median == pytest.approx(0.017 * 1.004, rel=1e-3)


def test_too_few_spares_reports_abnormal_kept():
    times = {f"n{i}": 1.0 + 0.001 * i for i in range(10)}
    times.update({"s1": 3.0, "s2": 3.2})
    sel = select_fastest(times, 11)
    assert sel.abnormal == ["s2"]
    assert sel.abnormal_kept == ["s1"]


def test_ties_broken_by_name():
    sel = select_fastest({"b": 1.0, "a": 1.0, "c": 1.0, "d": 0.5}, 2)
    assert sel.keep == ["d", "a"]
    assert sel.dropped == ["b", "c"]
    assert sel.abnormal == []


def test_explicit_threshold():
    times = {"a": 1.0, "b": 1.0, "c": 1.3, "d": 1.6}  # median 1.15
    sel = select_fastest(times, 2, abnormal_threshold=1.1)
    assert sel.abnormal == ["c", "d"]
    assert sel.ratio_threshold == 1.1
    assert select_fastest(times, 2, abnormal_threshold=1.3).abnormal == ["d"]
    # Four nodes: the job's own MAD is large, so the robust rule is cautious.
    assert select_fastest(times, 2).abnormal == []


def test_robust_rule_on_a_larger_job():
    times = {f"n{i}": 1.0 + 0.001 * i for i in range(10)}
    times.update({"c": 1.3, "d": 1.6, "e": 1.15})
    sel = select_fastest(times, 10)
    assert sel.dropped == ["e", "c", "d"]
    assert sel.abnormal == ["c", "d"]  # 1.15 is below the 1.2 floor
    assert sel.ratio_threshold == pytest.approx(1.2)


def test_json():
    sel = select_fastest({"a": 1.0, "b": 2.5, "c": 1.01}, 2)
    d = sel.as_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["keep"] == ["a", "c"]
    assert d["dropped"] == ["b"]
    assert d["abnormal"] == ["b"]


@pytest.mark.parametrize(
    ("times", "n", "kwargs", "match"),
    [
        ({}, 1, {}, "empty"),
        ({"a": 1.0}, 2, {}, "n_node"),
        ({"a": 1.0}, 0, {}, "n_node"),
        ({"a": 0.0}, 1, {}, "times"),
        ({"a": -1.0}, 1, {}, "times"),
        ({"a": math.nan}, 1, {}, "times"),
        ({"a": math.inf}, 1, {}, "times"),
        ({"a": 1.0}, 1, {"abnormal_threshold": 0.5}, "abnormal_threshold"),
        ([("a", 1.0)], 1, {}, "mapping"),
    ],
)
def test_validation(times, n, kwargs, match):
    with pytest.raises(ValueError, match=match):
        select_fastest(times, n, **kwargs)


@settings(max_examples=60, deadline=None)
@given(
    times=st.dictionaries(
        st.text(min_size=1, max_size=4), st.floats(1e-6, 1e6), min_size=1, max_size=40
    ),
    data=st.data(),
)
def test_partition_property(times, data):
    n = data.draw(st.integers(1, len(times)))
    sel = select_fastest(times, n)
    assert len(sel.keep) == n
    assert sorted(sel.keep + sel.dropped) == sorted(times)
    if sel.dropped:
        assert max(times[k] for k in sel.keep) <= min(times[k] for k in sel.dropped)
    assert set(sel.abnormal) <= set(sel.dropped)
    assert set(sel.abnormal_kept) <= set(sel.keep)
    for name in sel.abnormal + sel.abnormal_kept:
        assert times[name] > sel.median
