"""Numbers and times for people (hxportal.templatetags.hxformat)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.template import Context, Template

from hxportal.templatetags import hxformat as fmt


@pytest.mark.parametrize(("value", "digits", "expected"), [
    (0.020833333333333332, 3, "0.0208"),
    (2.499e+05, 3, "249,900"),
    (212258.4, 3, "212,258"),
    (3.5333, 3, "3.53"),
    (1.0, 3, "1.00"),
    (8.0, 4, "8.000"),
    (9.996, 3, "10.0"),
    (0.09996, 3, "0.100"),
    (-0.00123, 3, "-0.00123"),
    (1.2e-7, 3, "1.20 × 10⁻⁷"),
    (3e20, 2, "3.0 × 10²⁰"),
    (0, 3, "0"),
    (None, 3, "—"),
    ("", 3, "—"),
    (float("nan"), 3, "nan"),
    ("n/a", 3, "n/a"),
])
def test_significant_figures(value, digits, expected):
    assert fmt.sig(value, digits) == expected


def test_thousands_percent_ratio():
    assert fmt.thousands(212258.4) == "212,258"
    assert fmt.thousands(1234.5678, 2) == "1,234.57"
    assert fmt.thousands(None) == "—"
    assert fmt.percent(0.2083) == "20.8 %" and fmt.percent(None) == "—"
    assert fmt.ratio(1.2345) == "1.23×" and fmt.ratio(None) == "—"


@pytest.mark.parametrize(("value", "expected"), [
    (0.0167, "0.0167 s"), (42, "42.0 s"), (90, "90.0 s"), (150, "2.50 min"),
    (5400, "1.50 h"), (3 * 86400, "3.00 d"), (None, "—"),
])
def test_seconds(value, expected):
    assert fmt.seconds(value) == expected


def test_node_seconds_have_separators_and_hours():
    assert fmt.node_seconds(212258) == "212,258 node-s (59 node-h)"
    assert fmt.node_seconds(50.5) == "50.5 node-s"
    assert fmt.node_seconds(None) == "—"


@pytest.mark.parametrize(("value", "reference", "expected"), [
    (1.0, 1.0, "same as"), (0.996, 1.0, "same as"), (1.004, 1.0, "same as"),
    (0.95, 1.0, "5.0 % lower than"), (0.5, 1.0, "50 % lower than"),
    (1.2, 1.0, "20 % higher than"), (1.0, 0, ""), (None, 1.0, ""),
])
def test_change_in_words(value, reference, expected):
    assert fmt.change(value, reference) == expected


def test_age():
    now = datetime(2025, 1, 10, 12, 0, tzinfo=UTC)
    assert fmt.ago(now - timedelta(seconds=20), now) == "just now"
    assert fmt.ago(now - timedelta(minutes=5), now) == "5 min ago"
    assert fmt.ago(now - timedelta(hours=3, minutes=10), now) == "3 h ago"
    assert fmt.ago(now - timedelta(days=4), now) == "4 d ago"
    assert fmt.ago(now - timedelta(days=400), now) == "on 2023-12-07"
    assert fmt.ago(now + timedelta(hours=1), now) == "in the future"
    assert fmt.ago(None) == "—"


def test_count_of():
    assert fmt.count_of(1, "node") == "1 node" and fmt.count_of(3, "node") == "3 nodes"
    assert fmt.count_of(2, "whole switch") == "2 whole switches"
    assert fmt.count_of(1200, "run") == "1,200 runs"


def test_filters_in_templates():
    html = Template('{% load hxformat %}{{ a|sig }} {{ b|sig:4 }} {{ c|node_seconds }} '
                    '{% compared 90 100 %}').render(Context({"a": 0.020833, "b": 8, "c": 3600}))
    assert html == "0.0208 8.000 3,600 node-s (1.0 node-h) 10 % lower than"


def test_term_tag_links_the_glossary(db):
    html = Template('{% load hxterms %}{% term "p_abn" %} {% term "pb_exact" "PB" %}').render(
        Context({}))
    assert html.startswith('<a class="term" href="/glossary/#term-p_abn" title="p_abn: ')
    assert 'data-term="pb_exact">PB</a>' in html
