"""The parsers on real Slurm 22.05.8 output (tests/fixtures/slurm/, see its README)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from allocation.slurm.parse import (
    ParseError,
    parse_sacct,
    parse_sinfo_json,
    parse_squeue_json,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slurm"


def sample(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def by_id(jobs):
    return {job.job_id: job for job in jobs}


def test_sinfo_gives_every_node_with_state_flags_and_reason():
    nodes = {n.name: n for n in parse_sinfo_json(sample("sinfo-22.05.json"))}
    assert len(nodes) == 64
    assert (nodes["hx020"].state, nodes["hx020"].flags, nodes["hx020"].label) == (
        "idle", {"DRAIN"}, "drained")
    assert nodes["hx020"].reason == "ECC errors" and nodes["hx020"].reason_set_by == "root"
    assert nodes["hx020"].reason_changed_at == datetime(2026, 12, 1, 10, 13, 10, tzinfo=UTC)
    assert nodes["hx002"].label == "draining" and nodes["hx002"].drain
    assert nodes["hx030"].down and nodes["hx030"].reason == "dead"
    assert nodes["hx001"].state == "allocated" and not nodes["hx001"].idle
    assert nodes["hx001"].reason == "" and nodes["hx001"].reason_changed_at is None
    assert nodes["hx001"].partitions == ("batch",)


def test_squeue_gives_every_state_a_job_can_be_in():
    jobs = by_id(parse_squeue_json(sample("squeue-22.05.json")))
    assert sorted(jobs) == [1, 2, 3, 4, 5, 6, 7, 8]
    shrunk = jobs[2]
    assert (shrunk.state, shrunk.nodes, shrunk.num_nodes, shrunk.time_limit) == (
        "RUNNING", ("hx005",), 1, 30)
    assert shrunk.active and shrunk.end_time is None and shrunk.exit_code is None
    failed = jobs[3]
    assert (failed.state, failed.exit_code, failed.exit_signal, failed.name) == (
        "FAILED", 3, 0, "fails|pipe")
    assert failed.end_time == failed.start_time == datetime(2026, 12, 1, 10, 14, 58, tzinfo=UTC)
    assert (jobs[6].exit_code, jobs[6].exit_signal) == (0, 9)
    assert (jobs[1].state, jobs[1].exit_signal) == ("CANCELLED", 15)
    never_ran = jobs[5]
    assert (never_ran.state, never_ran.nodes, never_ran.start_time) == ("CANCELLED", (), None)
    assert never_ran.reason == "PartitionConfig" and never_ran.end_time is not None
    pending = jobs[8]
    assert (pending.state, pending.reason, pending.nodes, pending.start_time) == (
        "PENDING", "Resources", (), None)
    assert pending.pending and pending.num_nodes == 64 and pending.name == "whole machine"
    assert jobs[7].name == "line1\nline2" and jobs[4].user == "root"


@pytest.mark.parametrize("name, parse", [("squeue-unreachable-22.05.json", parse_squeue_json),
                                         ("sinfo-unreachable-22.05.json", parse_sinfo_json)])
def test_an_error_document_is_never_an_empty_cluster(name, parse):
    """22.05 exits 0 with an empty list when slurmctld is down."""
    with pytest.raises(ParseError, match="reported"):
        parse(sample(name))


@pytest.mark.parametrize("text, message", [
    ("", "no JSON document"),
    ("[]", "without 'jobs'"),
    ('{"jobs": [{"job_state": "RUNNING"}]}', "unreadable job"),
    ('{"jobs": [{"job_id": 1, "job_state": "RUNNING", "nodes": "hx[1-"}]}',
     "unreadable node list"),
])
def test_broken_squeue_output_is_one_parse_error(text, message):
    with pytest.raises(ParseError, match=message):
        parse_squeue_json(text)


def test_sacct_folds_a_resized_job_and_keeps_odd_names():
    jobs = by_id(parse_sacct(sample("sacct-22.05.txt")))
    assert sorted(jobs) == [1, 2, 3, 4, 5, 6, 7]
    resized = jobs[2]
    assert (resized.state, resized.nodes, resized.num_nodes) == ("RUNNING", ("hx005",), 1)
    assert resized.start_time == datetime(2026, 12, 1, 10, 14, 58, tzinfo=UTC)
    assert (jobs[3].exit_code, jobs[3].name) == (3, "fails|pipe")
    assert (jobs[6].exit_code, jobs[6].exit_signal) == (0, 9)
    assert jobs[1].state == "CANCELLED"  # "CANCELLED by 0"
    assert (jobs[5].nodes, jobs[5].start_time, jobs[5].time_limit) == ((), None, None)
    assert jobs[7].name == "line1\nline2"


def test_sacct_json_of_22_05_loses_exit_codes_so_the_text_form_is_used():
    """Why parse_sacct reads ``--parsable2``: the same jobs as JSON say exit 0."""
    as_json = {j["job_id"]: j for j in json.loads(sample("sacct-22.05.json"))["jobs"]}
    assert as_json[3]["exit_code"] == {"status": "SUCCESS", "return_code": 0}
    assert by_id(parse_sacct(sample("sacct-22.05.txt")))[3].exit_code == 3


def test_sacct_refuses_a_line_that_is_no_record():
    with pytest.raises(ParseError, match="not a job record"):
        parse_sacct("sacct: error: Problem talking to the database\n")


def test_the_fast_reading_of_simple_node_lists_agrees_with_nodeset():
    """Most jobs' node lists (one name, one bracket of ascending numbers) skip
    NodeSet; whatever the fast path reads, NodeSet reads the same, and whatever it
    refuses (mixed widths, descending, several prefixes) goes to NodeSet."""
    import random

    from allocation.slurm.parse import _expand, _simple
    from hxportal.hostlists import HostlistError, expand

    rng = random.Random(7)
    cases = ["hx0001", "hx[0001-0003]", "hx[8-10]", "hx[9,10]", "hx[2,1]", "hx[1-2],login1",
             "hx[0004,0053]", "a.b-c_d", "hx[00-05]", "n[1-2]x", "hx[1-3,3]"]
    for _ in range(2000):
        width, parts, at = rng.choice((0, 1, 2, 4)), [], rng.randint(0, 5)
        for _ in range(rng.randint(1, 4)):
            low = at + rng.randint(-1, 3)
            high = low + rng.randint(-1, 4)
            low_text, high_text = (f"{n:0{width}d}" if width else str(n) for n in (low, high))
            parts.append(low_text if rng.random() < 0.3 else f"{low_text}-{high_text}")
            at = high + 1
        cases.append(f"hx[{','.join(parts)}]")
    fast = 0
    for case in cases:
        try:
            slow = tuple(expand(case))
        except HostlistError:
            slow = None
        quick = _simple(case)
        if quick is not None:
            fast += 1
            assert quick == slow, case
        if slow is not None:
            assert _expand(case) == slow, case
    assert fast > 200
    assert _simple("hx[2,1]") is None and _simple("hx[1-2],login1") is None
