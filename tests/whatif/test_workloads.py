"""Parsers, limits, the synthetic model and pattern rules (pure, no database)."""

from __future__ import annotations

import itertools

import pytest

from whatif.replay import (
    LUBLIN_BATCH,
    MAX_LINES,
    Job,
    WorkloadError,
    assign_patterns,
    fit_to_machine,
    parse_sacct,
    parse_swf,
    synthetic_workload,
)

SWF_LINE = "{id} {submit} {wait} {run} {alloc} -1 -1 {req} {reqtime} -1 {status} 3 1 4 2 -1 -1 -1"


def swf(**kw) -> str:
    base = {"id": 1, "submit": 0, "wait": 10, "run": 100, "alloc": 8, "req": 8,
            "reqtime": 300, "status": 1}
    return SWF_LINE.format(**{**base, **kw})


def test_swf_fields_and_header():
    w = parse_swf(["; Version: 2.2", "; MaxNodes: 512", ";   a free comment",
                   swf(id=5, submit=100, wait=20, run=50, alloc=4, req=-1),
                   swf(id=6, submit=50, alloc=4, req=16), ""])
    assert [j.id for j in w.jobs] == [6, 5]  # submit order
    five = w.jobs[1]
    got = (five.submit, five.start, five.end, five.nodes, five.timelimit)
    assert got == (100, 120, 170, 4, 300)
    assert w.jobs[0].nodes == 16  # field 8 wins over field 5
    assert five.name == "exe4" and five.comment == "queue 2"
    assert w.header == {"Version": "2.2", "MaxNodes": "512"}


def test_swf_missing_values_are_skipped_and_counted():
    w = parse_swf([swf(id=1, run=-1, status=5), swf(id=2, wait=-1), swf(id=3, alloc=-1, req=-1),
                   swf(id=4, reqtime=-1), swf(id=5, reqtime=50)])
    assert [j.id for j in w.jobs] == [4, 5]
    assert w.jobs[0].timelimit == 100 and w.jobs[1].timelimit == 100
    assert w.skipped == {"cancelled before it started": 1, "no run or wait time": 1,
                         "no size (fields 5 and 8 missing)": 1,
                         "no requested time: the run time is used": 1,
                         "requested time below the run time: raised to it": 1}


@pytest.mark.parametrize(("line", "message"), [
    (swf(run="x"), "line 2, field 4 (run_time): 'x' is not a number"),
    (swf(req="2.5"), "line 2, field 8 (requested_processors): 2.5 processors"),
    (swf(submit=-1), "line 2, field 2 (submit_time): the submit time is missing"),
    ("1 2 3", "line 2: 3 fields, SWF has 18"),
    (swf(run="nan"), "line 2, field 4 (run_time): 'nan' is not a finite number"),
])
def test_swf_errors_name_line_and_field(line, message):
    with pytest.raises(WorkloadError) as err:
        parse_swf(["; header", line])
    assert str(err.value).startswith(message)


def test_a_million_line_log_is_accepted_and_one_more_refused():
    job = swf()
    accepted = parse_swf(itertools.chain([job], itertools.repeat(";", MAX_LINES - 1)))
    assert len(accepted.jobs) == 1
    with pytest.raises(WorkloadError, match="line 1000001: the log has more than 1,000,000"):
        parse_swf(itertools.chain([job], itertools.repeat(";", MAX_LINES)))


def test_overlong_line_is_refused():
    with pytest.raises(WorkloadError, match="line 1: line longer than"):
        parse_swf(["x" * 5000])


SACCT_HEADER = "JobID|JobName|Submit|Start|End|NNodes|Timelimit|State|Comment"


def test_sacct_rows():
    w = parse_sacct([
        SACCT_HEADER,
        "100|cfd|2026-01-01T00:00:00|2026-01-01T00:00:30|2026-01-01T01:00:30|16|1-00:00:00|"
        "COMPLETED|pattern=all2all",
        "101|x|2026-01-01T00:00:10|None|Unknown|2|30|PENDING|",
        "102|y|2026-01-01T00:00:20|2026-01-01T00:00:20|Unknown|2|30|RUNNING|",
        "103_4|arr|2026-01-01T00:00:20|2026-01-01T00:00:20|2026-01-01T00:10:20|1|UNLIMITED|"
        "TIMEOUT|",
        "100.batch|batch|2026-01-01T00:00:00|2026-01-01T00:00:30|2026-01-01T01:00:30|1|"
        "|COMPLETED|",
    ])
    assert [j.id for j in w.jobs] == [100, "103_4"]
    j = w.jobs[0]
    assert (j.nodes, j.end - j.start, j.start - j.submit, j.timelimit) == (16, 3600, 30, 86400)
    assert j.comment == "pattern=all2all"
    assert w.jobs[1].timelimit == 600
    assert w.skipped == {"a job step (export with --allocations)": 1, "never started": 1,
                         "no time limit: the run time is used": 1, "still running": 1}


@pytest.mark.parametrize(("row", "message"), [
    ("1|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:01|0|10|COMPLETED|",
     "line 2, field NNodes"),
    ("1|a|yesterday|2026-01-01T00:00:00|2026-01-01T00:00:01|1|10|COMPLETED|",
     "line 2, field Submit: 'yesterday' is not a time"),
    ("1|a|2026-01-01T00:00:00|2026-01-01T00:00:00|2026-01-01T00:00:01|1|ten|COMPLETED|",
     "line 2, field Timelimit"),
    ("1|a|2026-01-01T00:00:09|2026-01-01T00:00:00|2026-01-01T00:00:01|1|10|COMPLETED|",
     "line 2, field Start: times out of order"),
    ("1|a|2026-01-01T00:00:00", "line 2: 3 fields, the header has 9"),
])
def test_sacct_errors_name_line_and_field(row, message):
    with pytest.raises(WorkloadError) as err:
        parse_sacct([SACCT_HEADER, row])
    assert str(err.value).startswith(message)


def test_sacct_header_must_name_the_required_fields():
    with pytest.raises(WorkloadError, match="line 1: the header lacks NNodes, Timelimit"):
        parse_sacct(["JobID|Submit|Start|End|State"])
    with pytest.raises(WorkloadError, match="empty export"):
        parse_sacct([])


def test_fit_to_machine_counts_what_is_left_out():
    jobs = [Job(1, 0, 0, 1, 600, 1), Job(2, 0, 0, 1, 512, 1), Job(3, 0, 0, 1, 513, 1)]
    kept, left_out = fit_to_machine(jobs, 512)
    assert [j.id for j in kept] == [2] and left_out == 2


def test_synthetic_month_follows_the_model():
    w = synthetic_workload(512, days=30, seed=3)
    sizes = [j.nodes for j in w.jobs]
    serial = sum(s == 1 for s in sizes) / len(sizes)
    assert abs(serial - LUBLIN_BATCH["SERIAL_PROB"]) < 0.05
    pow2 = sum(s & (s - 1) == 0 for s in sizes) / len(sizes)
    assert pow2 > LUBLIN_BATCH["SERIAL_PROB"] + 0.5 * LUBLIN_BATCH["POW2_PROB"]
    assert max(j.submit for j in w.jobs) < 30 * 86400
    assert max(j.runtime for j in w.jobs) <= 162_755  # exp(12), the model's cap
    busier = synthetic_workload(512, days=30, seed=3, load=2.0)
    assert len(busier.jobs) > 1.6 * len(w.jobs)


def test_patterns_rules_then_mix_then_default():
    jobs = [Job(1, 0, 0, 1, 2, 1, name="cfd-big"), Job(2, 0, 0, 1, 2, 1, comment="FFT solver"),
            Job(3, 0, 0, 1, 2, 1)]
    rules = [("name", "CFD", "stencil4"), ("comment", "fft", "all-to-all")]
    assert [j.pattern for j in assign_patterns(jobs, rules)] == ["stencil4", "all2all", "uniform"]
    mixed = assign_patterns(jobs * 100, [], {"allreduce": 1.0, "stencil8": 0.0}, seed=1)
    assert {j.pattern for j in mixed} == {"allreduce"}
    with pytest.raises(ValueError, match="unknown pattern"):
        assign_patterns(jobs, [("name", "x", "bogus")])
