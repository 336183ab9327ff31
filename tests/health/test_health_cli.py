"""The hx_spares and hx_estimate commands: worked cases, offline estimation, bad input."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from health import maths

REQUIRED = {"n_spare", "expected_cost", "expected_time", "as_is_cost", "as_is_time",
            "saving_ratio", "curve"}


@pytest.fixture(autouse=True)
def held_spares(settings):
    """The study's worked cases are of its model, where spares are held to the end."""
    settings.HX_SPARES_RELEASED = False


def test_hx_spares_released_variant():
    held = spares_json("--n-node", "100", "--p-abn", "0.005", "--alpha", "10",
                       "--t-bench", "0.1", "--t-cmpt", "10", "--t-comm", "5")
    released = spares_json("--n-node", "100", "--p-abn", "0.005", "--alpha", "10",
                           "--t-bench", "0.1", "--t-cmpt", "10", "--t-comm", "5", "--released")
    assert (held["n_spare"], held["release"]) == (3, False)
    assert (released["n_spare"], released["release"]) == (5, True)
    assert released["expected_cost"] == pytest.approx(1549.3, abs=0.05)
    text = run("hx_spares", "--n-node", "100", "--p-abn", "0.005", "--alpha", "10",
               "--t-bench", "0.1", "--t-cmpt", "10", "--t-comm", "5", "--released")
    assert "go back to Slurm after the benchmark" in text


def run(command: str, *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def spares_json(*args: str) -> dict:
    return json.loads(run("hx_spares", *args, "--json"))


@pytest.mark.parametrize(("t_cmpt", "t_comm", "n_spare"), [("100", "0", 8), ("50", "50", 7),
                                                           ("10", "90", 5)])
def test_hx_spares_worked_cases(t_cmpt, t_comm, n_spare):
    body = spares_json("--n-node", "100", "--p-abn", "0.026", "--alpha", "3.53",
                       "--t-bench", "0.0167", "--t-cmpt", t_cmpt, "--t-comm", t_comm)
    assert REQUIRED <= set(body)
    assert body["n_spare"] == n_spare
    assert [set(p) for p in body["curve"][:1]] == [{"n_spare", "expected_cost",
                                                    "expected_time"}]
    assert len(body["curve"]) == 101


def test_hx_spares_second_worked_case_text_and_wall_time():
    body = spares_json("--n-node", "100", "--p-abn", "0.005", "--alpha", "10",
                       "--t-bench", "0.1", "--t-cmpt", "10", "--t-comm", "5")
    assert body["n_spare"] == 3
    assert body["expected_cost"] == pytest.approx(1609.97, abs=0.01)
    assert body["saving_ratio"] == pytest.approx(3.136, abs=0.001)
    text = run("hx_spares", "--n-node", "100", "--p-abn", "0.005", "--alpha", "10",
               "--t-bench", "0.1", "--t-cmpt", "10", "--t-comm", "5")
    assert "Recommended N_spare = 3" in text and "saves 68.1%" in text
    wall = spares_json("--n-node", "100", "--p-abn", "0.026", "--alpha", "3.53",
                       "--t-bench", "0.0167", "--wall-time", "200")
    assert wall["t_cmpt"] == 100.0 and wall["n_spare"] == 8
    wall = spares_json("--n-node", "100", "--p-abn", "0.026", "--alpha", "3.53",
                       "--t-bench", "0.0167", "--wall-time", "200", "--compute-fraction", "0.5")
    assert wall["n_spare"] == 8


@pytest.mark.parametrize(("args", "words"), [
    (["--p-abn", "0.026", "--alpha", "3.53", "--t-bench", "0.0167"], "t_cmpt"),
    (["--p-abn", "2", "--alpha", "3.53", "--t-bench", "0.0167", "--t-cmpt", "1"], "p_abn"),
    (["--alpha", "3.53", "--t-bench", "0.0167", "--t-cmpt", "1"], "p_abn"),
    (["--p-abn", "0.1", "--alpha", "1", "--t-bench", "0.0167", "--t-cmpt", "1"], "alpha_abn"),
])
def test_hx_spares_bad_input(args, words):
    with pytest.raises(CommandError, match=words):
        run("hx_spares", "--n-node", "100", *args)


@pytest.mark.django_db
def test_hx_spares_uses_a_stored_estimate(machine):
    from django.utils import timezone

    from health.models import Estimate

    now = timezone.now()
    Estimate.objects.create(machine=machine, benchmark="stream", window_start=now,
                            window_end=now, runs=1000, abnormal_runs=26, jobs=10, nodes=64,
                            t_bench=0.0167, alpha_abn=3.53, p_abn=0.026, p_abn_low=0.02,
                            p_abn_high=0.03)
    body = spares_json("--n-node", "100", "--t-cmpt", "50", "--t-comm", "50",
                       "--machine", "m4")
    assert body["n_spare"] == 7 and body["parameters_source"] == "estimate"
    with pytest.raises(CommandError, match="machine"):
        run("hx_spares", "--n-node", "100", "--t-cmpt", "1", "--machine", "nope")


def write_history(tmp_path, runs, header="job,benchmark,node,seconds") -> str:
    lines = [header] + [f"{r.job},{r.benchmark},{r.node},{r.seconds!r}" for r in runs]
    path = tmp_path / "history.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_hx_estimate_recovers_parameters_without_a_database(tmp_path):
    runs = maths.synthetic_history(60, 96, p_abn=0.026, alpha_abn=3.53, t_bench=0.0167,
                                    noise=0.02, seed=11)
    path = write_history(tmp_path, runs)
    body = json.loads(run("hx_estimate", "--input", path, "--json"))
    assert {"t_bench", "alpha_abn", "p_abn", "p_abn_interval", "runs", "abnormal_runs",
            "rule"} <= set(body)
    assert body["runs"] == 5760
    assert body["t_bench"] == pytest.approx(0.0167, rel=0.01)
    assert body["alpha_abn"] == pytest.approx(3.53, rel=0.03)
    low, high = body["p_abn_interval"]
    assert low <= 0.026 <= high and body["p_abn"] == pytest.approx(0.026, abs=0.006)
    assert body["rule"]["name"] == maths.RULE_NAME
    text = run("hx_estimate", "--input", path)
    assert "t_bench" in text and "p_abn" in text and "95% interval" in text


def test_hx_estimate_several_benchmarks(tmp_path):
    a = maths.synthetic_history(20, 16, 0.05, 4.0, 0.017, 0.01, seed=1, benchmark="stream")
    b = maths.synthetic_history(20, 16, 0.05, 4.0, 2.5, 0.01, seed=2, benchmark="dgemm")
    path = write_history(tmp_path, a + b)
    body = json.loads(run("hx_estimate", "--input", path, "--json"))
    assert set(body["benchmarks"]) == {"stream", "dgemm"}
    only = json.loads(run("hx_estimate", "--input", path, "--benchmark", "dgemm", "--json"))
    assert only["benchmark"] == "dgemm" and only["t_bench"] == pytest.approx(2.5, rel=0.02)
    with pytest.raises(CommandError, match="benchmark"):
        run("hx_estimate", "--input", path, "--benchmark", "hpl")


@pytest.mark.parametrize(("text", "words"), [
    ("job,node,seconds\nj,n1,0.1\n", "row 1, header"),
    ("job,benchmark,node,seconds\nj,b,n1,0.1\nj,b,n2,abc\n", "row 3, seconds"),
    ("job,benchmark,node,seconds\nj,b,n1,0.1\nj,b,n2,100ms\n", "row 3, seconds"),
    ("job,benchmark,node,seconds\nj,b,n1,0.1\nj,b,n2,-0.1\n", "row 3, seconds: must be positive"),
    ("job,benchmark,node,seconds\nj,b,n1,0.1\nj,b,n2,100\n", "mixed units"),
    ("job,benchmark,node,seconds\nj,b,n{1},0.1\n", "row 2, node"),
])
def test_hx_estimate_bad_csv_names_row_and_field(tmp_path, text, words):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(CommandError, match=words.replace("{", r"\{")):
        run("hx_estimate", "--input", str(path))


def test_hx_estimate_missing_file():
    with pytest.raises(CommandError, match="input"):
        run("hx_estimate", "--input", "/nonexistent/history.csv")
