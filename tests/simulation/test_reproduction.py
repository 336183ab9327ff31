"""The reproduction report's pure parts: the aggregation with synthetic run records
(hand-checked numbers), the preset and the published figures. No database."""

from __future__ import annotations

import doctest
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from simulation import reproduction, reproduction_noise, reproduction_preset
from simulation.engine import SimConfig
from simulation.reproduction import aggregate, check_statement, index_runs, mean_interval

PUBLISHED = json.loads((Path(reproduction.__file__).with_name("study_published.json"))
                       .read_text(encoding="utf-8"))
T_975_2 = 4.302652729911275  # scipy.stats.t.ppf(0.975, 2)
T_975_1 = 12.706204736174694  # scipy.stats.t.ppf(0.975, 1)

# A small published side: two policies, two kernels, one size.
SMALL = {
    "policies": ["diagonal", "row"], "baseline": "diagonal",
    "table4": {"kernels": ["k1", "k2"], "values": {"64": {"diagonal": 1.0, "row": 0.70}}},
    "targets": [{"id": "w", "kind": "within", "tolerance": 0.10, "text": "within"}],
}
# T_row per kernel and seed when T_diagonal is 100: ratios 0.8/0.5/1.0 and 1.0/0.8/0.4.
ROW = {("k1", 0): 125, ("k1", 1): 200, ("k1", 2): 100,
       ("k2", 0): 100, ("k2", 1): 125, ("k2", 2): 250}


def rec(policy, pattern, seed, cycles=None, status="succeeded", part="table4", ranks=64,
        replicas=1, **extra):
    point = {"part": part, "policy": policy, "pattern": pattern, "ranks": ranks,
             "replicas": replicas, "seed": seed}
    key = "makespan_cycles" if part == "escalation_min" else "completion_cycles"
    return {"point": point, "status": status, key: cycles, **extra}


def small_records():
    out = []
    for (kernel, seed), cycles in ROW.items():
        out.append(rec("diagonal", kernel, seed, 100))
        out.append(rec("row", kernel, seed, cycles))
    return out


def row_of(report, policy, ranks=64):
    block = next(b for b in report["table4"]["ranks"] if b["ranks"] == ranks)
    return next(r for r in block["rows"] if r["policy"] == policy)


# --------------------------------------------------------------------------
# Table 4 figures, by hand


def test_per_kernel_means_five_kernel_mean_and_interval():
    report = aggregate(small_records(), SMALL)
    row = row_of(report, "row")
    kernels = {k["pattern"]: k for k in row["kernels"]}
    assert kernels["k1"]["mean"] == pytest.approx((0.8 + 0.5 + 1.0) / 3)
    assert kernels["k2"]["mean"] == pytest.approx((1.0 + 0.8 + 0.4) / 3)
    assert kernels["k1"]["n"] == kernels["k2"]["n"] == 3
    assert row["engine"] == pytest.approx(0.75)
    assert row["published"] == 0.70
    assert row["difference"] == pytest.approx(0.05)
    assert row["within"] is True
    # Per-seed means 0.9, 0.65, 0.7: sample sd sqrt(0.0175), t(0.975, 2) half-width.
    half = T_975_2 * math.sqrt(0.0175) / math.sqrt(3)
    assert row["interval"]["mean"] == pytest.approx(0.75)
    assert row["interval"]["half_width"] == pytest.approx(half)
    assert half == pytest.approx(0.3286205, abs=1e-6)
    assert (row["interval"]["low"], row["interval"]["high"]) == pytest.approx(
        (0.75 - half, 0.75 + half))
    assert row["interval"]["n"] == row["seeds"] == 3
    assert row["missing_pairs"] == []
    diagonal = row_of(report, "diagonal")
    assert diagonal["engine"] == 1.0 and diagonal["interval"]["half_width"] == 0.0
    block = report["table4"]["ranks"][0]
    assert block["ranking"] == ["diagonal", "row"] and block["seeds"] == [0, 1, 2]
    assert (diagonal["engine_rank"], row["engine_rank"]) == (1, 2)
    assert report["missing"] == []
    assert report["agreement"]["sentence"] == (
        "The model agrees with 1 of 1 published figures (1 of 1 Table 4 values within "
        "0.10, 0 of 0 orderings).")


def test_difference_beyond_the_tolerance_is_not_within():
    records = [r for r in small_records() if r["point"]["policy"] == "diagonal"]
    records += [rec("row", k, s, 200) for k in ("k1", "k2") for s in (0, 1, 2)]  # 0.5
    row = row_of(aggregate(records, SMALL), "row")
    assert row["engine"] == pytest.approx(0.5)
    assert row["difference"] == pytest.approx(-0.2) and row["within"] is False
    assert row["interval"]["half_width"] == 0.0


def test_exactly_the_tolerance_is_within():
    records = [rec("diagonal", k, 0, 100) for k in ("k1", "k2")]
    records += [rec("row", k, 0, 125) for k in ("k1", "k2")]  # 0.8 = 0.70 + 0.10
    row = row_of(aggregate(records, SMALL), "row")
    assert row["within"] is True


def test_one_seed_has_no_interval():
    records = [r for r in small_records() if r["point"]["seed"] == 0]
    row = row_of(aggregate(records, SMALL), "row")
    assert row["engine"] == pytest.approx(0.9)
    assert row["interval"] is None and row["seeds"] == 1


def test_failed_and_pending_runs_are_missing_not_dropped():
    records = [r for r in small_records()
               if not (r["point"]["policy"] == "diagonal" and r["point"]["pattern"] == "k2"
                       and r["point"]["seed"] == 2)]
    records.append(rec("diagonal", "k2", 2, None, status="failed", error="timeout", run=7))
    report = aggregate(records, SMALL)
    row = row_of(report, "row")
    kernels = {k["pattern"]: k for k in row["kernels"]}
    assert kernels["k2"]["n"] == 2 and kernels["k2"]["mean"] == pytest.approx(0.9)
    assert row["engine"] == pytest.approx(((0.8 + 0.5 + 1.0) / 3 + 0.9) / 2)
    # Seeds 0 and 1 have both kernels: interval over 0.9 and 0.65.
    assert row["seeds"] == 2
    assert row["interval"]["mean"] == pytest.approx(0.775)
    assert row["interval"]["half_width"] == pytest.approx(T_975_1 * 0.125)
    assert row["missing_pairs"] == [{"pattern": "k2", "seed": 2}]
    assert report["missing"] == [{
        "point": {"part": "table4", "policy": "diagonal", "pattern": "k2", "ranks": 64,
                  "replicas": 1, "seed": 2},
        "status": "failed", "reason": "failed: timeout", "run": 7}]


def test_reasons_for_every_kind_of_missing_run():
    records = [rec("diagonal", "k1", 0, None, status="pending", run=1),
               rec("row", "k1", 0, None, status="running", run=2),
               rec("diagonal", "k2", 0, None, status="succeeded", run=3),  # did not finish
               rec("row", "k2", 0, None, status="cancelled", run=4)]
    expected = [r["point"] for r in records] + [
        {"part": "table4", "policy": "row", "pattern": "k1", "ranks": 64, "seed": 1}]
    report = aggregate(records, SMALL, expected=expected)
    reasons = {(m["point"]["policy"], m["point"]["pattern"], m["point"]["seed"]):
               (m["status"], m["reason"]) for m in report["missing"]}
    assert reasons == {
        ("diagonal", "k1", 0): ("pending", "not started yet"),
        ("row", "k1", 0): ("running", "running"),
        ("diagonal", "k2", 0): ("unfinished", "succeeded but did not finish within max_cycles"),
        ("row", "k2", 0): ("cancelled", "cancelled"),
        ("row", "k1", 1): ("absent", "no run in the sweep"),
    }
    row = row_of(report, "row")
    assert row["engine"] is None and row["within"] is None and row["interval"] is None
    assert len(row["missing_pairs"]) == 4  # two kernels x seeds 0 and 1
    assert report["agreement"]["unknown"] == 1
    assert report["agreement"]["sentence"].startswith("No published figure can be checked")
    assert report["targets"][0]["holds"] is None


def test_a_kernel_without_any_pair_leaves_the_mean_unknown():
    records = [r for r in small_records() if r["point"]["pattern"] == "k1"]
    row = row_of(aggregate(records, SMALL), "row")
    assert row["kernels"][0]["mean"] == pytest.approx((0.8 + 0.5 + 1.0) / 3)
    assert row["kernels"][1] == {"pattern": "k2", "mean": None, "n": 0}
    assert row["engine"] is None and row["within"] is None


def test_records_of_unknown_parts_are_counted_as_ignored():
    report = aggregate([*small_records(), {"point": {"policy": "row"}, "status": "succeeded"}],
                       SMALL)
    assert report["counts"] == {"ignored": 1, "succeeded": 13}  # per status, all records


def test_index_runs_averages_duplicates():
    idx = index_runs([rec("row", "k1", 0, 100), rec("row", "k1", 0, 300)])
    assert idx["times"] == {("table4", "row", "k1", 64, 1, 0): 200.0}


def test_mean_interval_by_hand():
    iv = mean_interval([0.9, 0.65, 0.7])
    assert iv["mean"] == pytest.approx(0.75)
    assert iv["half_width"] == pytest.approx(T_975_2 * math.sqrt(0.0175) / math.sqrt(3))
    assert mean_interval([]) is None and mean_interval([1.0]) is None


# --------------------------------------------------------------------------
# Ordering predicates


VALUES = {"diagonal": 1.0, "random_endpoint": 1.02, "full_spread": 1.03, "row": 1.10,
          "l_shape": 1.12, "random_switch": 1.15, "rectangular": 1.40}


@pytest.mark.parametrize(("check", "values", "holds"), [
    ({"kind": "worst", "policies": ["rectangular"]}, VALUES, True),
    ({"kind": "worst", "policies": ["rectangular"]}, {**VALUES, "row": 1.5}, False),
    ({"kind": "worst", "policies": ["random_endpoint", "full_spread"]}, VALUES, False),
    ({"kind": "worst", "policies": ["random_endpoint", "full_spread"]},
     {**VALUES, "random_endpoint": 1.5, "full_spread": 1.45}, True),
    ({"kind": "best", "policies": ["diagonal"]}, VALUES, True),
    ({"kind": "best", "policies": ["diagonal"]}, {**VALUES, "row": 0.99}, False),
    ({"kind": "worse_than", "worse": ["random_switch", "l_shape", "row"],
      "better": ["diagonal", "random_endpoint", "full_spread"]}, VALUES, True),
    ({"kind": "worse_than", "worse": ["random_switch", "l_shape", "row"],
      "better": ["diagonal", "random_endpoint", "full_spread"]}, {**VALUES, "row": 1.01},
     False),
    ({"kind": "close", "policies": ["diagonal", "random_endpoint", "full_spread"],
      "tolerance": 0.05}, VALUES, True),
    ({"kind": "close", "policies": ["diagonal", "random_endpoint", "full_spread"],
      "tolerance": 0.05}, {**VALUES, "full_spread": 1.06}, False),
    ({"kind": "best", "policies": ["diagonal"]}, {**VALUES, "rectangular": None}, None),
    ({"kind": "close", "policies": ["diagonal", "row"], "tolerance": 0.2},
     {**VALUES, "rectangular": None}, True),  # needs only the listed ones
])
def test_ordering_predicates(check, values, holds):
    assert check_statement(check, values)[0] is holds


def test_predicates_read_higher_is_better_too():
    values = {"a": 0.9, "b": 1.0}
    assert check_statement({"kind": "best", "policies": ["b"]}, values,
                           lower_is_better=False) == (True, "best: b 1.000; the others at most "
                                                            "0.900 (a)")
    assert check_statement({"kind": "worst", "policies": ["a"]}, values,
                           lower_is_better=False)[0] is True


def test_unknown_predicate_is_an_error():
    with pytest.raises(ValueError, match="unknown ordering check"):
        check_statement({"kind": "median"}, VALUES)


# --------------------------------------------------------------------------
# The whole report with the real published figures and the preset's points


def synthetic_records(seeds=1, table4=None, escalation=None, interference=None):
    """Records for every point of the preset: Table 4 times reproduce ``table4``
    (ranks -> policy -> T_diagonal / T_policy, default the published values);
    the ordering parts use ``escalation`` / ``interference`` (policy -> relative time)."""
    table4 = table4 or PUBLISHED["table4"]["values"]
    escalation = escalation or VALUES
    interference = interference or {**VALUES, "rectangular": 1.1, "random_endpoint": 1.5,
                                    "full_spread": 1.6}
    out = []
    for i, (point, _config) in enumerate(reproduction_preset.reproduction_configs(seeds)):
        part, policy = point["part"], point["policy"]
        if part == "table4":
            cycles = 1000.0 / table4[str(point["ranks"])][policy]
        elif part == "escalation_min":
            cycles = 1000.0 * escalation[policy] * point["replicas"]
        else:
            cycles = 1000.0 * interference[policy]
        key = "makespan_cycles" if part == "escalation_min" else "completion_cycles"
        out.append({"point": point, "status": "succeeded", key: cycles, "run": i + 1})
    return out


def test_the_published_figures_reproduced_exactly_agree_everywhere():
    expected = [p for p, _ in reproduction_preset.reproduction_configs(1)]
    report = aggregate(synthetic_records(), PUBLISHED, expected=expected)
    assert report["missing"] == []
    for block in report["table4"]["ranks"]:
        for row in block["rows"]:
            assert row["engine"] == pytest.approx(row["published"])
            assert row["within"] is True and row["interval"] is None
    assert report["agreement"]["agree"] == report["agreement"]["total"] == 12 + 5
    assert report["agreement"]["sentence"] == (
        "The model agrees with 17 of 17 published figures (12 of 12 Table 4 values within "
        "0.10, 5 of 5 orderings). The orderings have fewer than two seeds to compare: nothing "
        "says whether more seeds would turn them.")
    assert {c["id"]: c["holds"] for c in report["orderings"]} == {
        "a1": True, "a2": True, "a3": True, "b1": True, "b2": True}
    assert {c["noise"] is None for c in report["orderings"]} == {True}
    assert report["orderings"][0]["noise_detail"] == (
        "fewer than two seeds: no interval, more seeds could turn this verdict")
    assert {t["id"]: t["holds"] for t in report["targets"]} == {
        "table4_within": True, "worst_pair_low": True, "diagonal_best": True}
    esc = {r["policy"]: r for r in report["parts"]["escalation_min"]["rows"]}
    assert esc["rectangular"]["mean"] == pytest.approx(1.40)
    assert esc["rectangular"]["n"] == esc["rectangular"]["expected"] == 2 * 4  # patterns x replicas
    assert report["parts"]["escalation_min"]["replicas"] == [1, 2, 4, 8]
    assert report["parts"]["interference_static"]["patterns"] == ["switch_permutation",
                                                                   "uniform"]
    ranking64 = report["table4"]["ranks"][0]["ranking"]
    assert ranking64[0] == "diagonal" and set(ranking64[-2:]) == {"random_endpoint",
                                                                  "full_spread"}


def test_disagreements_show_in_the_counts_orderings_and_targets():
    table4 = json.loads(json.dumps(PUBLISHED["table4"]["values"]))
    table4["64"]["row"] = 0.85  # published 0.70: off by 0.15
    table4["128"]["random_switch"] = 1.05  # better than diagonal by more than 0.03
    table4["128"]["full_spread"] = 0.90  # above 0.85
    escalation = {**VALUES, "row": 1.5}  # row, not rectangular, is the worst
    report = aggregate(synthetic_records(table4=table4, escalation=escalation), PUBLISHED)
    assert row_of(report, "row", 64)["within"] is False
    assert row_of(report, "row", 64)["difference"] == pytest.approx(0.15)
    assert row_of(report, "full_spread", 128)["within"] is False
    assert {c["id"]: c["holds"] for c in report["orderings"]} == {
        "a1": False, "a2": True, "a3": True, "b1": True, "b2": True}
    targets = {t["id"]: t for t in report["targets"]}
    assert targets["table4_within"]["holds"] is False
    assert "row off by 0.150" in targets["table4_within"]["per_ranks"][0]["detail"]
    assert [r["holds"] for r in targets["worst_pair_low"]["per_ranks"]] == [True, False]
    assert [r["holds"] for r in targets["diagonal_best"]["per_ranks"]] == [True, False]
    assert targets["diagonal_best"]["holds"] is False
    # Off: row at 64 and full_spread at 128 (random_switch 1.05 is within 0.10 of 0.98), a1.
    assert row_of(report, "random_switch", 128)["within"] is True
    assert report["agreement"]["agree"] == 17 - 3


def test_diagonal_within_003_of_the_best_meets_the_target():
    table4 = json.loads(json.dumps(PUBLISHED["table4"]["values"]))
    table4["128"]["random_switch"] = 1.03
    report = aggregate(synthetic_records(table4=table4), PUBLISHED)
    targets = {t["id"]: t for t in report["targets"]}
    assert targets["diagonal_best"]["holds"] is True


def test_each_ordering_is_also_checked_on_each_pattern_alone():
    """Pooled, the switch permutation decides b1 against the study; the uniform
    targets alone keep it (docs/domain.md 6.9): the report shows both."""
    uniform = {**VALUES, "rectangular": 1.05, "random_switch": 1.08, "random_endpoint": 1.15,
               "full_spread": 1.14}
    switch = {**VALUES, "rectangular": 1.60, "random_endpoint": 1.05, "full_spread": 1.20}
    records = synthetic_records()
    for r in records:
        point = r["point"]
        if point["part"] == "interference_static":
            by = uniform if point["pattern"] == "uniform" else switch
            r["completion_cycles"] = 1000.0 * by[point["policy"]]
    report = aggregate(records, PUBLISHED)
    b1 = next(c for c in report["orderings"] if c["id"] == "b1")
    assert b1["holds"] is False  # pooled: rectangular 1.325 is worse than random_endpoint 1.10
    verdicts = {v["pattern"]: v for v in b1["by_pattern"]}
    assert verdicts["uniform"]["holds"] is True
    assert verdicts["switch_permutation"]["holds"] is False
    assert "at most 1.600 (rectangular)" in verdicts["switch_permutation"]["detail"]
    a1 = next(c for c in report["orderings"] if c["id"] == "a1")
    assert [v["pattern"] for v in a1["by_pattern"]] == ["permutation", "uniform"]
    assert all(v["holds"] is True for v in a1["by_pattern"])


def test_orderings_with_missing_runs_are_unknown():
    records = [r for r in synthetic_records()
               if not (r["point"]["part"] == "interference_static"
                       and r["point"]["policy"] == "row")]
    report = aggregate(records, PUBLISHED,
                       expected=[p for p, _ in reproduction_preset.reproduction_configs(1)])
    holds = {c["id"]: c["holds"] for c in report["orderings"]}
    assert holds["b1"] is None and holds["b2"] is None and holds["a1"] is True
    assert len(report["missing"]) == 2  # two patterns x one seed, reported as absent
    assert {m["status"] for m in report["missing"]} == {"absent"}
    assert "the other 2 of 17 wait for runs" in report["agreement"]["sentence"]


# --------------------------------------------------------------------------
# The preset and the published file


def test_preset_points_and_configs():
    items = reproduction_preset.reproduction_configs(3)
    # Every part on every seed: Table 4's 70 runs, escalation's 56 and interference's 14.
    assert len(items) == reproduction_preset.reproduction_size(3) == (70 + 56 + 14) * 3
    parts = {}
    for point, config in items:
        assert set(point) == {"part", "scenario", "policy", "pattern", "ranks", "replicas",
                              "routing", "seed"}
        parts.setdefault(point["part"], []).append((point, config))
        cfg = SimConfig.from_dict(config)  # the engine accepts every point
        for key in ("scenario", "policy", "pattern", "ranks", "routing", "seed"):
            assert getattr(cfg, key) == point[key]
        assert cfg.vc_sets == "shared" and cfg.sides == (8, 8) and cfg.concentration == 8
        for key in ("message_packets", "background_rate", "max_cycles"):
            assert key not in config  # the engine's defaults are the study's
    table4 = parts["table4"]
    assert {p["seed"] for p, _ in table4} == {0, 1, 2}
    assert {(p["scenario"], p["routing"]) for p, _ in table4} == {("interference", "omniwar")}
    assert {p["pattern"] for p, _ in table4} == set(PUBLISHED["table4"]["kernels"])
    assert {p["ranks"] for p, _ in table4} == {64, 128}
    esc = parts["escalation_min"]
    assert len(esc) == 7 * 2 * 4 * 3
    assert {p["replicas"] for p, _ in esc} == {1, 2, 4, 8}
    assert {(c["packets_per_task"], c["rate"], c["routing"]) for _, c in esc} == {
        (64, 1.0, "min")}
    inter = parts["interference_static"]
    assert {p["pattern"] for p, _ in inter} == {"uniform", "switch_permutation"}
    assert {(c["scenario"], c["routing"], c["ranks"]) for _, c in inter} == {
        ("interference", "omniwar", 64)}
    assert {p["seed"] for p, _ in inter} == {0, 1, 2}


def test_a_sweep_made_before_2026_12_06_had_at_most_two_ordering_seeds():
    items = reproduction_preset.reproduction_configs(3, ordering_seeds=2)
    assert len(items) == reproduction_preset.reproduction_size(3, 2) == 70 * 3 + 70 * 2
    assert {p["seed"] for p, _ in items if p["part"] != "table4"} == {0, 1}
    assert reproduction_preset.legacy_ordering_seeds(3) == 2
    with pytest.raises(ValueError, match=r"ordering_seeds must be an integer in 1\.\.32"):
        reproduction_preset.reproduction_configs(3, ordering_seeds=0)


@pytest.mark.parametrize("seeds", [0, 9, "3", True, None])
def test_preset_refuses_bad_seeds(seeds):
    with pytest.raises(ValueError, match=r"seeds must be an integer in 1\.\.8"):
        reproduction_preset.reproduction_configs(seeds)


def test_published_file_holds_the_papers_figures():
    source = PUBLISHED["source"]
    assert source["arxiv"] == "2605.28205"
    assert source["title"] == "Resource Allocation in HyperX Networks"
    assert source["authors"] == ["Cano", "Camarero", "Martínez", "Beivide"]
    assert PUBLISHED["table4"]["values"] == {
        "64": {"diagonal": 1.00, "random_switch": 0.90, "rectangular": 0.84, "l_shape": 0.78,
               "row": 0.70, "random_endpoint": 0.66, "full_spread": 0.66},
        "128": {"diagonal": 1.00, "random_switch": 0.98, "rectangular": 0.93, "l_shape": 0.96,
                "row": 0.93, "random_endpoint": 0.80, "full_spread": 0.76}}
    assert set(PUBLISHED["policies"]) == set(reproduction_preset.STUDY_POLICIES)
    assert tuple(PUBLISHED["table4"]["kernels"]) == reproduction_preset.TABLE4_KERNELS
    assert {o["part"] for o in PUBLISHED["orderings"]} == {"escalation_min",
                                                           "interference_static"}


@pytest.mark.parametrize("module", [reproduction, reproduction_preset, reproduction_noise])
def test_docstring_examples(module):
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def test_aggregation_and_preset_are_pure():
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    code = ("import sys, simulation.reproduction, simulation.reproduction_preset, "
            "simulation.reproduction_noise; "
            "bad = [m for m in sys.modules if m.startswith(('django', 'celery', "
            "'rest_framework', 'hxportal', 'simulation.models', 'simulation.services'))]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)


def test_the_reference_command_reuses_what_this_engine_already_ran(tmp_path, capsys):
    """--reuse keeps the stored runs of the same engine, point and configuration and
    simulates only the others (here the one whose configuration hash is not its own)."""
    import json

    from django.core.management import call_command

    from simulation import reproduction_report

    stored = json.loads(reproduction_report.REFERENCE_PATH.read_text(encoding="utf-8"))
    records = stored["records"]
    cheapest = min(range(len(records)), key=lambda i: records[i]["completion_cycles"] or 1e9)
    records[cheapest] = {**records[cheapest], "config_hash": "0" * 64,
                         "completion_cycles": -1}
    path = tmp_path / "reference.json"
    path.write_text(json.dumps(stored), encoding="utf-8")
    call_command("hx_reproduction_reference", "--seeds", str(stored["seeds"]),
                 "--ordering-seeds", str(stored["ordering_seeds"]), "--reuse",
                 "--output", str(path))
    assert f"{len(records) - 1} runs reused, 1 to simulate" in capsys.readouterr().out
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["placement_version"] == stored["placement_version"]
    assert (written["seeds"], written["ordering_seeds"]) == (stored["seeds"],
                                                             stored["ordering_seeds"])
    again = written["records"]
    assert again[cheapest]["completion_cycles"] > 0
    assert [r["completion_cycles"] for i, r in enumerate(again) if i != cheapest] == \
        [r["completion_cycles"] for i, r in enumerate(records) if i != cheapest]
