"""contrib/slurm/hxportal_filter.lua as Slurm's cli_filter/lua on a real slurmctld.

A 16-node local cluster (2x2 switches, c = 4, hx001..hx016) with two partitions,
``batch`` (the default, opted in) and ``debug`` (not), and
``CliFilterPlugins=cli_filter/lua``; the script is its ``cli_filter.lua`` and each
test writes ``hxportal_filter.conf`` beside it. The portal is pytest-django's live
server with the machine ``hxf`` on the same hostnames. Jobs are submitted with the
real ``sbatch`` (held, except where the job's environment is read) and read back
with ``squeue --json``.
"""

from __future__ import annotations

import glob
import json
import os
import selectors
import shutil
import socket
import socketserver
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from allocation.services import machines
from allocation.slurm import ClusterSpec, LocalCluster, Partition
from hxportal import services as accounts
from hxportal.hostlists import expand
from hxportal.roles import Role
from recommendations import services as recommendations
from recommendations.models import Recommendation
from tests.allocation.slurm.conftest import (
    free_base_port,
    require_slurm,
    scratch_dir,
    wait_for,
)
from tests.conftest import skip_or_fail

pytestmark = [pytest.mark.slurm, pytest.mark.django_db(transaction=True)]

SCRIPT = Path(__file__).resolve().parents[2] / "contrib" / "slurm" / "hxportal_filter.lua"
PLUGIN = "/usr/lib/x86_64-linux-gnu/slurm-wlm/cli_filter_lua.so"
LUA_MODULES = {"lua-socket": "/usr/share/lua/5.1/socket/http.lua",
               "lua-cjson": "/usr/lib/*/lua/5.1/cjson.so",
               "lua-sec": "/usr/share/lua/5.1/ssl/https.lua"}
HOSTS = tuple(f"hx{i:03d}" for i in range(1, 17))
#: The filter's Timeout where the portal answers (generous: a busy CI host) and
#: where it must give up (the fail-open tests).
PORTAL_TIMEOUT = 20.0
TIMEOUT = 2.0
#: What sbatch may add to the filter's Timeout (start, the RPC, a busy host).
MARGIN = 5.0


def require_lua() -> None:
    """Debian's cli_filter/lua plugin (slurm-wlm-basic-plugins) links Lua 5.1: the
    script's modules must be there for 5.1."""
    if not os.path.exists(PLUGIN):
        skip_or_fail(f"{PLUGIN} is missing: apt-get install -y slurm-wlm-basic-plugins")
    missing = [name for name, pattern in LUA_MODULES.items() if not glob.glob(pattern)]
    if missing:
        skip_or_fail(f"Lua 5.1 modules missing: apt-get install -y {' '.join(missing)}")


@pytest.fixture(scope="module")
def cluster():
    require_slurm()
    require_lua()
    spec = ClusterSpec(
        machine="hxf", sides=(2, 2), concentration=4, hostnames=HOSTS,
        state_dir=scratch_dir("hx-slurm-filter-"),
        base_port=free_base_port(len(HOSTS), accounting=False),
        cluster_name=f"hxf{os.getpid()}",
        partitions=(Partition("batch", default=True), Partition("debug")),
        cli_filter_plugins=("lua",))
    local = LocalCluster(spec)
    try:
        local.start(timeout=120)
        shutil.copy(SCRIPT, Path(local.conf).with_name("cli_filter.lua"))
        yield local
    finally:
        local.purge()


@pytest.fixture
def filter_conf(cluster, tmp_path):
    """``filter_conf(PortalURL=...)`` writes the filter's config beside slurm.conf."""
    path = Path(cluster.conf).with_name("hxportal_filter.conf")

    def write(**settings: str) -> Path:
        values = {"Machine": "hxf", "TokenFile": str(tmp_path / "token"),
                  "Partitions": "batch", "DefaultPartition": "batch",
                  "Timeout": str(PORTAL_TIMEOUT), "PollInterval": "0.2", "Simulate": "no",
                  "PAbn": "0.05", "AlphaAbn": "3.5", "TBench": "0.0167",
                  "ComputeFraction": "0.9",
                  "Log": str(tmp_path / "filter-%u.log"), **settings}
        path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
        return path
    yield write
    path.unlink(missing_ok=True)


@pytest.fixture
def portal(live_server, filter_conf, make_user, tmp_path):
    """The live portal with machine ``hxf`` on the cluster's hostnames, an operator's
    token in the token file, and the filter pointed at it."""
    machine = machines.create_machine(name="hxf", sides=[2, 2], concentration=4,
                                      hostlist="hx[001-016]")
    operator = make_user("filterop", Role.OPERATOR)
    # The first recommendation in a process compiles the allocator (seconds): here,
    # outside the filter's Timeout.
    recommendations.request_recommendation(user=operator, machine=machine, node_count=4,
                                           pattern="unknown", wall_time=60, simulate=False)
    Recommendation.objects.all().delete()
    (tmp_path / "token").write_text(accounts.issue_token(operator, "cli_filter") + "\n")
    filter_conf(PortalURL=live_server.url)
    return live_server


class Submitted:
    """One sbatch run: the job id, sbatch's stderr and the seconds it took."""

    def __init__(self, job_id: int, stderr: str, seconds: float) -> None:
        self.job_id, self.stderr, self.seconds = job_id, stderr, seconds


@pytest.fixture
def sbatch(cluster, tmp_path):
    """``sbatch("-N", "4", ...)``: the real sbatch on a script in tmp_path, held
    unless ``hold=False``; jobs are cancelled afterwards."""
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH -t 00:30:00\n"
                      'echo "$HX_RECOMMENDATION $HX_N_NODE $SLURM_JOB_NUM_NODES" > '
                      f"{tmp_path}/env.$SLURM_JOB_ID\n")
    ids: list[int] = []

    def run(*args: str, hold: bool = True, env: dict | None = None,
            script_text: str | None = None) -> Submitted:
        if script_text is not None:
            script.write_text(script_text)
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("SLURM_", "SBATCH_", "HX_"))}
        base.update(SLURM_CONF=cluster.conf, LC_ALL="C", **(env or {}))
        started = time.monotonic()
        done = subprocess.run(
            ["sbatch", "--parsable", f"--chdir={tmp_path}", "--output=/dev/null",
             *(["--hold"] if hold else []), *args, str(script)],
            env=base, capture_output=True, text=True, timeout=60, check=False)
        seconds = time.monotonic() - started
        assert done.returncode == 0, done.stderr
        ids.append(int(done.stdout.strip().split(";")[0]))
        return Submitted(ids[-1], done.stderr, seconds)
    yield run
    if ids:
        subprocess.run(["scancel", *map(str, ids)], env={**os.environ, "SLURM_CONF": cluster.conf},
                       capture_output=True, timeout=60, check=False)


def job(cluster, job_id: int) -> dict:
    """The job as ``squeue --json`` has it (comment and required nodes included)."""
    data = json.loads(cluster.client().run("squeue", "--json"))
    return next(j for j in data["jobs"] if j["job_id"] == job_id)


def log_lines(tmp_path) -> list[str]:
    return (tmp_path / "filter-root.log").read_text().splitlines()


def unchanged(cluster, submitted: Submitted, nodes: int = 4, partition: str = "batch") -> dict:
    seen = job(cluster, submitted.job_id)
    assert (seen["node_count"], seen["required_nodes"], seen["comment"]) == (nodes, "", "")
    assert seen["partition"] == partition
    return seen


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def slow_portal():
    """An HTTP server that answers nothing for longer than the filter waits."""
    release = threading.Event()

    class Sleepy(BaseHTTPRequestHandler):
        def do_POST(self):
            release.wait(TIMEOUT + 20)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Sleepy)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def stalling_portal():
    """A portal that answers the question at once, still computing with a provisional
    answer, then answers no poll before the filter's Timeout has run out."""
    release = threading.Event()

    class Stalling(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.dumps({"id": 7, "status": "computing", "recommended": {
                "policy": "diagonal", "n_total": 4, "n_spare": 0,
                "nodelist": "hx[001-004]"}}).encode()
            self.send_response(202)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            release.wait(TIMEOUT + 20)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    release.set()
    server.shutdown()
    server.server_close()


def certificate(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``name`` (Debian's openssl command)."""
    if not shutil.which("openssl"):
        skip_or_fail("openssl is not installed (apt-get install -y openssl)")
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name}"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def pipe(one: socket.socket, other: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    with selectors.DefaultSelector() as selector:
        selector.register(one, selectors.EVENT_READ, other)
        selector.register(other, selectors.EVENT_READ, one)
        while True:
            for key, _ in selector.select(timeout=30):
                data = key.fileobj.recv(65536)
                if not data:
                    return
                key.data.sendall(data)


@pytest.fixture
def tls_portal(portal, tmp_path):
    """``tls_portal(name)``: the live portal behind a TLS front with a certificate
    for ``name``; returns the certificate's path and the https URL."""
    servers = []
    upstream = portal.url.rsplit(":", 1)

    def start(name: str) -> tuple[Path, str]:
        cert, key = certificate(tmp_path, name)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)

        class Front(socketserver.BaseRequestHandler):
            def handle(self):
                try:
                    conn = context.wrap_socket(self.request, server_side=True)
                except (ssl.SSLError, OSError):
                    return  # the client refused the certificate
                with conn, socket.create_connection(("127.0.0.1", int(upstream[1]))) as up:
                    pipe(conn, up)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Front)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return cert, f"https://localhost:{server.server_address[1]}"
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- rewritten
def test_a_plain_job_in_an_opted_in_partition_gets_the_recommended_nodes(
        portal, cluster, sbatch, tmp_path):
    """-N 4 -p batch: the portal's nodes (N + spares), the comment, the job's
    HX_RECOMMENDATION / HX_N_NODE; the job runs there."""
    done = sbatch("-N", "4", "-p", "batch", "--comment=mine", hold=False)
    rec = Recommendation.objects.get()
    best = rec.recommended
    assert best["n_spare"] >= 1 and best["n_total"] == 4 + best["n_spare"]
    seen = job(cluster, done.job_id)
    assert seen["node_count"] == best["n_total"]
    assert set(expand(seen["required_nodes"])) == set(expand(best["nodelist"]))
    assert seen["comment"] == f"mine hxportal-recommendation={rec.pk}"
    assert rec.node_count == 4 and rec.name == "job.sh" and rec.inputs["wall_time"] == 1800
    assert (rec.inputs["compute_fraction"], rec.inputs["p_abn"]) == (0.9, 0.05)
    env_file = tmp_path / f"env.{done.job_id}"
    wait_for(lambda: env_file.exists() and env_file.read_text().strip(), 60,
             what="the job's environment")
    assert env_file.read_text().split() == [str(rec.pk), "4", str(best["n_total"])]
    assert set(expand(job(cluster, done.job_id)["nodes"])) == set(expand(best["nodelist"]))
    [line] = log_lines(tmp_path)
    assert 'job="job.sh" user=root partition=batch decision=rewritten' in line
    assert f"recommendation {rec.pk}: " in line and " elapsed=" in line
    assert "decision=rewritten" in done.stderr, "Slurm's log: sbatch's stderr"


def test_the_default_partition_and_hx_lines_in_the_script(portal, cluster, sbatch, tmp_path):
    """No -p: DefaultPartition; ``#HX --pattern`` and ``--t-cmpt`` from the script."""
    done = sbatch("-N", "2", script_text="#!/bin/bash\n#SBATCH -J mine\n"
                  "#HX --pattern stencil4 --t-cmpt 300 --t-comm=60\nhostname\n")
    rec = Recommendation.objects.get()
    assert (rec.name, rec.pattern, rec.inputs["t_cmpt"], rec.inputs["t_comm"]) == (
        "mine", "stencil4", 300, 60)
    assert job(cluster, done.job_id)["comment"] == f"hxportal-recommendation={rec.pk}"


def test_the_provisional_answer_is_used_when_the_portal_is_not_ready(
        portal, cluster, sbatch, tmp_path, filter_conf, monkeypatch):
    """Simulations that never finish: at the Timeout the analytic answer stands."""
    monkeypatch.setattr("recommendations.tasks.predict_policy.apply_async",
                        lambda *a, **k: None)
    filter_conf(PortalURL=portal.url, Simulate="yes", Timeout=str(TIMEOUT))
    done = sbatch("-N", "4")
    rec = Recommendation.objects.get()
    assert rec.status == "computing" and rec.recommended
    seen = job(cluster, done.job_id)
    assert set(expand(seen["required_nodes"])) == set(expand(rec.recommended["nodelist"]))
    [line] = log_lines(tmp_path)
    assert "decision=provisional" in line and "not ready within 2 s" in line


def test_a_poll_cut_by_the_timeout_reads_not_ready(filter_conf, cluster, sbatch, tmp_path,
                                                  stalling_portal):
    """The Timeout runs out while a poll waits for its answer: that is the portal not
    being ready in time (the provisional answer, said so), not a transport problem."""
    (tmp_path / "token").write_text("hx_not_checked\n")
    filter_conf(PortalURL=stalling_portal, Simulate="yes", Timeout=str(TIMEOUT))
    done = sbatch("-N", "4")
    assert done.seconds < TIMEOUT + MARGIN
    assert set(expand(job(cluster, done.job_id)["required_nodes"])) == set(
        expand("hx[001-004]"))
    [line] = log_lines(tmp_path)
    assert "decision=provisional" in line and "not ready within 2 s" in line, line
    assert "while polling" not in line


def test_an_https_portal_with_its_certificate_checked(tls_portal, filter_conf, cluster,
                                                      sbatch, tmp_path):
    """LuaSec checks the chain against CaFile, the filter the name in it."""
    cert, url = tls_portal("localhost")
    filter_conf(PortalURL=url, CaFile=str(cert))
    done = sbatch("-N", "4")
    rec = Recommendation.objects.get()
    assert job(cluster, done.job_id)["comment"] == f"hxportal-recommendation={rec.pk}"


@pytest.mark.parametrize("name, trusted, reason", [
    ("elsewhere", True, "certificate is not for localhost"),
    ("localhost", False, "certificate verify failed"),
])
def test_an_https_portal_with_a_wrong_certificate_is_not_asked(
        tls_portal, filter_conf, cluster, sbatch, tmp_path, name, trusted, reason):
    cert, url = tls_portal(name)
    filter_conf(PortalURL=url, **({"CaFile": str(cert)} if trusted else {}))
    done = sbatch("-N", "4")
    unchanged(cluster, done)
    assert not Recommendation.objects.exists()
    [line] = log_lines(tmp_path)
    assert "portal unreachable (" in line and reason in line


# --------------------------------------------------------------------------- untouched
@pytest.mark.parametrize("args, env, reason", [
    (["-N", "4", "-p", "debug"], {}, "partition debug is not opted in"),
    (["-N", "4", "-w", "hx[001-004]"], {}, "the job gives --nodelist"),
    (["-N", "2-4"], {}, "no single node count (-N 2-4)"),
    (["-n", "1"], {}, "no single node count (-N missing)"),
    (["-N", "4", "--array=1-2"], {}, "the job gives --array"),
    (["-N", "4"], {"HX_DISABLE": "1"}, "HX_DISABLE is set"),
])
def test_jobs_the_filter_leaves_alone(portal, cluster, sbatch, tmp_path, args, env, reason):
    done = sbatch(*args, env=env)
    assert not Recommendation.objects.exists()
    seen = job(cluster, done.job_id)
    assert seen["comment"] == ""
    if "-w" in args:
        assert set(expand(seen["required_nodes"])) == {"hx001", "hx002", "hx003", "hx004"}
    else:
        assert seen["required_nodes"] == ""
    [line] = log_lines(tmp_path)
    assert "decision=unchanged" in line and f'reason="{reason}"' in line
    if "debug" in args:
        assert "hxportal" not in done.stderr, "other partitions: Slurm's log only with -v"


def test_a_portal_refusal_leaves_the_job_alone(portal, cluster, sbatch, tmp_path,
                                               filter_conf):
    filter_conf(PortalURL=portal.url, Machine="elsewhere")
    done = sbatch("-N", "4")
    unchanged(cluster, done)
    [line] = log_lines(tmp_path)
    assert 'reason="portal answered 400: machine: ' in line


def test_too_few_tasks_for_the_spares_leave_the_job_alone(portal, cluster, sbatch, tmp_path):
    """-n 4 on 4 + spares nodes: Slurm would cut the node count, so no rewrite."""
    done = sbatch("-N", "4", "-n", "4")
    rec = Recommendation.objects.get()
    unchanged(cluster, done)
    [line] = log_lines(tmp_path)
    assert f'reason="--ntasks 4 is below the {rec.recommended["n_total"]} nodes' in line


# --------------------------------------------------------------------------- fail open
def test_portal_down_submits_unchanged_at_once(filter_conf, cluster, sbatch, tmp_path):
    (tmp_path / "token").write_text("hx_not_checked\n")
    filter_conf(PortalURL=f"http://127.0.0.1:{closed_port()}", Timeout=str(TIMEOUT))
    done = sbatch("-N", "4")
    unchanged(cluster, done)
    assert done.seconds < TIMEOUT + MARGIN
    [line] = log_lines(tmp_path)
    assert 'reason="portal unreachable (connection refused)"' in line


def test_a_slow_portal_submits_unchanged_within_the_timeout(
        filter_conf, cluster, sbatch, tmp_path, slow_portal):
    (tmp_path / "token").write_text("hx_not_checked\n")
    filter_conf(PortalURL=slow_portal, Timeout=str(TIMEOUT))
    done = sbatch("-N", "4")
    unchanged(cluster, done)
    assert done.seconds < TIMEOUT + MARGIN
    [line] = log_lines(tmp_path)
    assert 'reason="portal timed out (no answer within Timeout=2 s)"' in line


@pytest.mark.parametrize("config, reason", [
    ({"Timeout": "soon"}, "config: Timeout must be a number"),
    ({"Colour": "blue"}, "line 14: unknown setting"),
])
def test_a_broken_config_submits_unchanged(filter_conf, cluster, sbatch, config, reason):
    filter_conf(PortalURL="http://127.0.0.1:9", **config)
    done = sbatch("-N", "4")
    unchanged(cluster, done)
    assert "decision=unchanged" in done.stderr and reason in done.stderr


def test_a_missing_token_file_submits_unchanged(filter_conf, cluster, sbatch, tmp_path):
    filter_conf(PortalURL="http://127.0.0.1:9", TokenFile="~/.config/hxportal/none-%u")
    done = sbatch("-N", "4", env={"HOME": str(tmp_path)})
    unchanged(cluster, done)
    assert f"cannot read the token file {tmp_path}/.config/hxportal/none-root" in done.stderr
