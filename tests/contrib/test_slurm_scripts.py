"""The Slurm workflow in contrib/slurm against a live test server, without Slurm.

``sbatch``, ``srun`` and ``scontrol`` are stub executables written into a temporary
directory put first on PATH: they record their argv (one JSON list per line in
``<stub>.argv``) and print canned output. The scripts run as subprocesses with
``sys.executable`` and talk to ``live_server.url``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ClusterShell.NodeSet import NodeSet

from allocation.models import Job
from allocation.services import jobs, machines
from health.models import BenchmarkResult
from hxportal import services as accounts
from hxportal.models import TokenScope
from hxportal.roles import Role
from recommendations import constants as recommendation_constants
from recommendations.models import Recommendation

SLURM = Path(__file__).resolve().parents[2] / "contrib" / "slurm"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPARES = ["--p-abn", "0.05", "--alpha-abn", "3.5", "--t-bench", "0.0167"]
ASK = ["--machine", "hx", "--pattern", "all-to-all", "--t-cmpt", "100", "--t-comm", "50",
       *SPARES]

live = pytest.mark.django_db(transaction=True)


def load(name: str):
    """Import a script (no .py extension) as a module."""
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"), str(SLURM / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


hxslurm = load("hxslurm.py")

STUB_HEAD = f"""#!{sys.executable}
import json, os, sys
sys.path.insert(0, {str(SLURM)!r})
import hxslurm
with open(os.path.join({{dir!r}}, os.path.basename(sys.argv[0]) + ".argv"), "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
"""
STUBS = {
    "sbatch": 'print("Submitted batch job 4242")\n',
    "scontrol": """
if sys.argv[1:3] == ["show", "hostnames"]:
    print("\\n".join(hxslurm.expand_hostlist(sys.argv[3])))
else:
    sys.exit(1)
""",
    # One "<host> <seconds>" line per node of -w (or the job): $STUB_SLOW is 3x slower,
    # $STUB_SILENT prints nothing, plus a line of noise the parser must skip.
    "srun": """
args = sys.argv[1:]
nodelist = args[args.index("-w") + 1] if "-w" in args else os.environ["SLURM_JOB_NODELIST"]
print("srun: job step started")
for i, host in enumerate(hxslurm.expand_hostlist(nodelist)):
    if host == os.environ.get("STUB_SILENT"):
        continue
    seconds = 0.0501 if host == os.environ.get("STUB_SLOW") else 0.0167 + i * 1e-5
    print(f"{host} {seconds:.6f}")
""",
}


@pytest.fixture
def slurm(tmp_path):
    """Stub Slurm commands; ``slurm.calls("sbatch")`` lists their recorded argv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in STUBS.items():
        path = bin_dir / name
        path.write_text(STUB_HEAD.format(dir=str(tmp_path)) + body)
        path.chmod(0o755)

    class Slurm:
        dir = tmp_path

        @staticmethod
        def calls(name: str) -> list[list[str]]:
            path = tmp_path / f"{name}.argv"
            if not path.exists():
                return []
            return [json.loads(line) for line in path.read_text().splitlines()]
    return Slurm


@pytest.fixture
def run(tmp_path, slurm):
    """``run("hx-sbatch", *args, env={...})``: the script as a subprocess, a clean env."""
    home = tmp_path / "home"
    home.mkdir()

    def clean_env() -> dict[str, str]:
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("HX_", "SLURM_", "STUB_"))}
        base.update(HOME=str(home), PATH=f"{tmp_path / 'bin'}{os.pathsep}{base['PATH']}",
                    HX_CACHE=str(tmp_path / "cache.json"), HX_LOG=str(tmp_path / "hx.log"),
                    HX_POLL_INTERVAL="0.2", HX_HTTP_TIMEOUT="5")
        return base

    def runner(script: str, *args: str, env: dict | None = None, stdin: str = ""):
        base = {**clean_env(), **(env or {})}
        return subprocess.run([sys.executable, str(SLURM / script), *args], env=base,
                              input=stdin, capture_output=True, text=True, timeout=60,
                              check=False)
    runner.env = clean_env
    return runner


@pytest.fixture
def hx(db):
    """The reference 8x8 HyperX with c = 8: 512 nodes hx001..hx512."""
    return machines.create_machine(name="hx", sides=[8, 8], concentration=8)


@pytest.fixture
def portal(live_server, hx, make_user, tmp_path):
    """Env for the scripts: the live server and an operator's token in a token file."""
    operator = make_user("op", Role.OPERATOR)
    token_file = tmp_path / "token"
    token_file.write_text(accounts.issue_token(operator, "slurm") + "\n")
    return {"HX_PORTAL_URL": live_server.url, "HX_TOKEN_FILE": str(token_file)}


@pytest.fixture
def batch_script(tmp_path):
    path = tmp_path / "job.sh"
    path.write_text("#!/bin/bash\n#SBATCH --time=00:30:00\n#SBATCH -J fromscript\n\n"
                    "srun ./app\n")
    return str(path)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def option(argv: list[str], name: str) -> str:
    """The value of ``-x value`` / ``--long=value`` in argv (the last one)."""
    found = None
    for i, arg in enumerate(argv):
        if arg == name:
            found = argv[i + 1]
        elif arg.startswith(name + "="):
            found = arg.split("=", 1)[1]
    return found


# --------------------------------------------------------------------------- hx-sbatch
@live
def test_sbatch_rewrites_the_request_from_the_portal(portal, run, slurm, batch_script,
                                                     tmp_path):
    done = run("hx-sbatch", *ASK, "--no-simulate", "-N", "8", "--comment", "mine",
               "-p", "batch", batch_script, "--pattern", "x", env=portal)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Submitted batch job 4242"
    rec = Recommendation.objects.get()
    best = rec.recommended
    assert best["n_total"] == 8 + best["n_spare"] and best["n_spare"] >= 1
    [argv] = slurm.calls("sbatch")
    assert argv[-3:] == [batch_script, "--pattern", "x"], "script args are untouched"
    assert option(argv, "-N") == str(best["n_total"]) and "8" not in argv
    assert option(argv, "-w") == best["nodelist"]
    assert option(argv, "--comment") == f"mine hxportal-recommendation={rec.pk}"
    assert option(argv, "--export") == f"ALL,HX_RECOMMENDATION={rec.pk},HX_N_NODE=8"
    assert option(argv, "-p") == "batch"
    assert rec.name == "fromscript" and rec.inputs["t_cmpt"] == 100
    assert rec.inputs["p_abn"] == 0.05 and rec.inputs["simulate"] is False
    cache = json.loads((tmp_path / "cache.json").read_text())["entries"]["hx|8|all-to-all"]
    assert cache["recommendation"]["id"] == rec.pk
    assert f"recommendation {rec.pk}" in (tmp_path / "hx.log").read_text()


@live
def test_sbatch_reads_directives_polls_and_accepts(portal, run, slurm, tmp_path,
                                                   monkeypatch):
    """#SBATCH -N/--time and #HX lines; a 202 answer is polled until ready; --accept."""
    monkeypatch.setattr(recommendation_constants, "DEADLINE_SECONDS", 1)  # the server's own thread
    monkeypatch.setattr("recommendations.tasks.predict_policy.apply_async",
                        lambda *a, **k: None)  # no worker: the deadline answers
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --nodes=16\n#SBATCH -t 1:00:00\n"
                      "#SBATCH --export=NONE\n#HX --machine hx --pattern stencil-4\n"
                      "srun ./app\n")
    done = run("hx-sbatch", "--accept", str(script), env={
        **portal, "HX_P_ABN": "0.05", "HX_ALPHA_ABN": "3.5", "HX_T_BENCH": "0.0167"})
    assert done.returncode == 0, done.stderr
    assert "computing" in done.stderr and "accepted: portal job" in done.stderr
    rec = Recommendation.objects.get()
    assert rec.status == "accepted" and rec.method == "analytic"
    assert rec.inputs["wall_time"] == 3600 and rec.pattern == "stencil4"
    job = rec.job
    assert job.status == "allocated" and job.node_count == 16
    [argv] = slurm.calls("sbatch")
    lists = jobs.job_hostlists(job)
    assert set(hxslurm.expand_hostlist(option(argv, "-w"))) == set(
        hxslurm.expand_hostlist(f"{lists['primary']},{lists['spare']}"))
    assert option(argv, "-N") == str(16 + rec.recommended["n_spare"])
    assert option(argv, "--export") == (f"HX_RECOMMENDATION={rec.pk},HX_N_NODE=16,"
                                        f"HX_PORTAL_JOB={job.pk}")


@live
def test_sbatch_switches_placement(portal, run, slurm, batch_script):
    done = run("hx-sbatch", *ASK, "--no-simulate", "--placement", "switches",
               "--switches-wait", "5:00", "-N", "8", batch_script, env=portal)
    assert done.returncode == 0, done.stderr
    [argv] = slurm.calls("sbatch")
    assert "-w" not in argv
    assert option(argv, "--switches") == "2@5:00", "one switch for 8 nodes, one for a spare"


def test_sbatch_fails_open_without_portal_or_cache(run, slurm, batch_script, tmp_path):
    args = ["-N", "8", "--exclusive", "-o", "out.txt", batch_script, "a1"]
    done = run("hx-sbatch", *ASK, *args, env={"HX_PORTAL_URL": closed_port_url(),
                                              "HX_TOKEN": "hx_nothing"})
    assert done.returncode == 0
    assert slurm.calls("sbatch") == [args], "submitted unchanged"
    assert "unreachable" in done.stderr and "unchanged" in done.stderr
    assert "submitting the request unchanged" in (tmp_path / "hx.log").read_text()


@pytest.mark.parametrize("age, used", [(60, True), (7200, False)])
def test_sbatch_fails_open_to_a_fresh_cache(run, slurm, batch_script, tmp_path, age, used):
    recommended = {"policy": "row", "n_spare": 2, "n_total": 10, "nodelist": "hx[001-010]",
                   "hostlist": "hx[001-008]", "spares_hostlist": "hx[009-010]"}
    (tmp_path / "cache.json").write_text(json.dumps({"entries": {"hx|8|all-to-all": {
        "saved_at": time.time() - age, "recommendation": {
            "id": 77, "node_count": 8, "recommended": recommended}}}}))
    done = run("hx-sbatch", *ASK, "-N8", batch_script,
               env={"HX_PORTAL_URL": closed_port_url()})
    assert done.returncode == 0
    [argv] = slurm.calls("sbatch")
    if used:
        assert "cached recommendation 77" in done.stderr
        assert argv == ["-N", "10", "-w", "hx[001-010]",
                        "--comment=hxportal-recommendation=77",
                        "--export=ALL,HX_RECOMMENDATION=77,HX_N_NODE=8", batch_script]
    else:
        assert argv == ["-N8", batch_script] and "old" in done.stderr


@live
@pytest.mark.parametrize("case", ["bad-token", "too-many-nodes"])
def test_sbatch_fails_open_on_portal_errors(portal, run, slurm, batch_script, case):
    env = dict(portal)
    nodes = "8"
    if case == "bad-token":
        env["HX_TOKEN"] = "hx_not-a-token"
    else:
        nodes = "600"
    done = run("hx-sbatch", *ASK, "--no-simulate", "-N", nodes, batch_script, env=env)
    assert done.returncode == 0
    assert slurm.calls("sbatch") == [["-N", nodes, batch_script]]
    assert {"bad-token": "HTTP 401", "too-many-nodes": "HTTP 400"}[case] in done.stderr


@live
def test_sbatch_uses_the_provisional_answer_after_its_timeout(portal, run, slurm, tmp_path,
                                                              batch_script, monkeypatch):
    monkeypatch.setattr("recommendations.tasks.predict_policy.apply_async",
                        lambda *a, **k: None)  # no worker: stays "computing" for 30 s
    done = run("hx-sbatch", *ASK, "--timeout", "0.5", "--accept", "-N", "8", batch_script,
               env=portal)
    assert done.returncode == 0, done.stderr
    rec = Recommendation.objects.get()
    assert rec.status == "computing" and rec.job is None, "not accepted"
    assert "provisional analytic ranking (not cached, cannot accept)" in done.stderr
    [argv] = slurm.calls("sbatch")
    assert option(argv, "-w") == rec.recommended["nodelist"]
    assert not (tmp_path / "cache.json").exists()


def test_sbatch_leaves_explicit_nodelists_and_dry_run(run, slurm, batch_script):
    done = run("hx-sbatch", *ASK, "--dry-run", "-N", "2", "-w", "hx[001-002]", batch_script,
               env={"HX_PORTAL_URL": closed_port_url()})
    assert done.returncode == 0 and slurm.calls("sbatch") == []
    assert shlex.split(done.stdout)[1:] == ["-N", "2", "-w", "hx[001-002]", batch_script]
    assert "names its nodes" in done.stderr


def test_sbatch_splits_the_command_line():
    sbatch = load("hx-sbatch")
    split = sbatch.split_argv(["--machine=hx", "-N8", "--exclusive", "--time", "10",
                               "-vv", "--mem=4G", "--pattern", "uniform", "job.sh",
                               "-N", "3", "--machine", "y"])
    assert split.hx == ["--machine=hx", "--pattern", "uniform"]
    assert split.value("nodes") == "8" and split.value("time") == "10"
    assert split.script == "job.sh" and split.script_args == ["-N", "3", "--machine", "y"]
    assert sbatch.merged_export("PATH,HOME", ["A=1"]) == "PATH,HOME,A=1"
    wrap = sbatch.split_argv(["-N", "4", "--wrap", "srun hostname"])
    assert wrap.script is None and wrap.value("wrap") == "srun hostname"


# --------------------------------------------------------------------------- in the job
@pytest.fixture
def slurm_job(hx, make_user):
    """A portal job (external id 4242) on 8 + 2 nodes, as Slurm would have started it."""
    owner = make_user("op", Role.OPERATOR)
    job = jobs.submit_job(owner=owner, machine=hx, name="app", external_id="4242",
                          node_count=8, pattern="all-to-all", policy="row", spares=2)
    lists = jobs.job_hostlists(job)
    nodes = hxslurm.expand_hostlist(lists["primary"]) + hxslurm.expand_hostlist(
        lists["spare"])
    return job, nodes


def parse_env(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.split("=", 1)
        out[name] = shlex.split(value)[0] if value else ""
    return out


@live
def test_prolog_bench_posts_times_and_drops_the_slow_node(live_server, slurm_job, run,
                                                          slurm, tmp_path):
    job, nodes = slurm_job
    key = accounts.issue_token(job.owner, "bench", scope=TokenScope.BENCHMARKS)
    slow = nodes[3]
    done = run("hx-prolog-bench", env={
        "HX_PORTAL_URL": live_server.url, "HX_TOKEN": key, "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": hxslurm.compress_hostlist(nodes), "HX_N_NODE": "9",
        "STUB_SLOW": slow})
    assert done.returncode == 0, done.stderr
    env = parse_env(done.stdout)
    assert env["HX_DROP"] == slow and env["HX_SELECTED_BY"] == "portal"
    assert env["HX_ABNORMAL"] == slow
    assert set(hxslurm.expand_hostlist(env["HX_KEEP"])) == set(nodes) - {slow}
    assert env["HX_SRUN_ARGS"] == f"-N 9 -x {slow}"
    assert f"# srun -N 9 -x {slow} app" in done.stdout
    [srun] = slurm.calls("srun")
    assert srun[:5] == ["-N", "10", "-n", "10", "--ntasks-per-node=1"]
    assert slurm.calls("scontrol")[0][:2] == ["show", "hostnames"]
    stored = dict(BenchmarkResult.objects.filter(job=job).values_list(
        "node__hostname", "seconds"))
    assert set(stored) == set(nodes) and stored[slow] == pytest.approx(0.0501)
    assert "ignored output line: srun: job step started" in done.stderr


@live
def test_prolog_bench_creates_the_portal_job_when_asked(portal, run, slurm):
    env = {**portal, "SLURM_JOB_ID": "777", "SLURM_JOB_NODELIST": "hx[001-004]",
           "HX_N_NODE": "3", "STUB_SLOW": "hx002", "SLURM_JOB_NAME": "cfd"}
    first = run("hx-prolog-bench", env=env)
    assert first.returncode == 0 and "no job with id or external id '777'" in first.stderr
    assert parse_env(first.stdout)["HX_DROP"] == "hx002", "selected from the times alone"
    done = run("hx-prolog-bench", "--create-job", "--machine", "hx", env=env)
    assert done.returncode == 0, done.stderr
    job = Job.objects.get(external_id="777")
    assert job.name == "cfd" and job.node_count == 3 and job.status == "pending"
    assert job.benchmark_results.count() == 4
    assert parse_env(done.stdout)["HX_KEEP"] == "hx[001,003-004]"


def test_prolog_bench_fails_open_and_drops_silent_nodes(run, slurm):
    nodes = [f"hx{i:03d}" for i in range(1, 11)]
    done = run("hx-prolog-bench", "--nodelist", "hx[001-010]", "--n-node", "8", env={
        "HX_PORTAL_URL": closed_port_url(), "SLURM_JOB_ID": "1", "STUB_SLOW": "hx005",
        "STUB_SILENT": "hx007"})
    assert done.returncode == 0, done.stderr
    env = parse_env(done.stdout)
    assert env["HX_SELECTED_BY"] == "local"
    assert env["HX_DROP"] == "hx[005,007]"
    assert hxslurm.expand_hostlist(env["HX_KEEP"]) == [n for n in nodes
                                                       if n not in ("hx005", "hx007")]
    assert "upload failed" in done.stderr and "no time from 1 node(s): hx007" in done.stderr


def test_prolog_bench_output_evals_in_a_batch_script(run, slurm, tmp_path):
    """The documented job-script lines, in bash: eval, then srun on the N fastest."""
    script = tmp_path / "batch.sh"
    script.write_text(f'set -e\neval "$({shlex.quote(sys.executable)} '
                      f'{shlex.quote(str(SLURM / "hx-prolog-bench"))})"\n'
                      'srun -N "$HX_N_NODE" ${HX_DROP:+-x "$HX_DROP"} ./app\n'
                      'echo "$HX_KEEP|$HX_DROP|$HX_SELECTED_BY"\n')
    (tmp_path / "hx0").write_text("a file a bare [...] glob would match")
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False,
                          cwd=tmp_path, env={**run.env(), "HX_PORTAL_URL": closed_port_url(),
                                             "SLURM_JOB_NODELIST": "hx[009-012]",
                                             "HX_N_NODE": "2", "STUB_SLOW": "hx010"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "hx[009,011]|hx[010,012]|local"
    assert slurm.calls("srun")[-1] == ["-N", "2", "-x", "hx[010,012]", "./app"]


def test_builtin_benchmark_prints_host_and_seconds():
    bench = load("hx-prolog-bench")
    code = bench.BENCH_CODE.format(iterations=1000)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "SLURMD_NODENAME": "hx042"}, check=True)
    host, seconds = done.stdout.split()
    assert host == "hx042" and float(seconds) > 0
    assert bench.LINE.match("3: hx042 1.5e-3").groups() == ("hx042", "1.5e-3")


@live
def test_job_done_releases_the_portal_job(live_server, slurm_job, run):
    job, _ = slurm_job
    env = {"HX_PORTAL_URL": live_server.url, "SLURM_JOB_ID": "4242",
           "HX_TOKEN": accounts.issue_token(job.owner, "slurm")}
    assert run("hx-job-done", "--start", env=env).returncode == 0
    assert Job.objects.get(pk=job.pk).status == "running"
    done = run("hx-job-done", env={**env, "SLURM_JOB_START_TIME": str(int(time.time()) - 100)})
    assert done.returncode == 0, done.stderr
    job.refresh_from_db()
    assert job.status == "completed" and 99 <= job.actual_runtime <= 130
    again = run("hx-job-done", "--strict", env=env)
    assert again.returncode == 1 and "already completed" in again.stderr


# --------------------------------------------------------------------------- topology
@live
def test_topology_writes_slurm_files(portal, run, tmp_path):
    out = tmp_path / "etc-slurm"
    done = run("hx-topology", "--machine", "hx", "--kind", "block", "--out-dir", str(out),
               env=portal)
    assert done.returncode == 0, done.stderr
    topology = (out / "topology.conf").read_text()
    assert topology.startswith("# topology.conf (topology/block) for HyperX hx")
    assert topology.count("BlockName=") == 8
    features = (out / "hx-features.conf").read_text().splitlines()[1:]
    named = [n for line in features
             for n in hxslurm.expand_hostlist(line.split()[0].split("=", 1)[1])]
    sinfo = json.loads((FIXTURES / "sinfo-hx.json").read_text())
    slurm_nodes = [n for entry in sinfo["sinfo"] for n in entry["nodes"]["nodes"]]
    assert sorted(named) == sorted(slurm_nodes), "every node Slurm knows has features"
    again = run("hx-topology", "--machine", "hx", "--out-dir", str(out), env=portal)
    assert "SwitchName=hx_root" in (out / "topology.conf").read_text()
    assert "hx-features.conf unchanged" in again.stderr
    missing = run("hx-topology", "--machine", "nope", "--out-dir", str(out), env=portal)
    assert missing.returncode == 1 and "HTTP 404" in missing.stderr


# --------------------------------------------------------------------------- helpers
@pytest.mark.parametrize("names, same_text", [
    ([f"hx{i:03d}" for i in [*range(1, 200), 203, 512]], True),
    (["n1", "n2", "n10", "n11", "n12"], True),
    (["hx073"], True),
    (["r1n01", "r1n02", "r2n01", "login"], False),
    (["a009", "a010", "a011", "a9"], False),
])
def test_hostlists_match_clustershell(names, same_text):
    text = hxslurm.compress_hostlist(names)
    assert set(hxslurm.expand_hostlist(text)) == set(names)
    assert set(NodeSet(text)) == set(names)
    if same_text:
        assert text == str(NodeSet.fromlist(names))
    assert hxslurm.expand_hostlist("r[1-2]n[01-02],x") == ["r1n01", "r1n02", "r2n01",
                                                           "r2n02", "x"]


@pytest.mark.parametrize("text, seconds", [
    ("30", 1800), ("1:30", 90), ("01:00:00", 3600), ("2-0", 172800), ("1-2:3", 93780),
    ("1-00:00:10", 86410), ("UNLIMITED", None), ("", None)])
def test_slurm_time(text, seconds):
    assert hxslurm.parse_slurm_time(text) == seconds
