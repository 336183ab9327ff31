"""Connections that trickle their headers do not take the site down (issue: three
slow unauthenticated clients held every gunicorn sync worker).

Two deployments, each with three times as many slow clients as it has workers
or threads, and a probe that must be answered within 5 s (the issue's bound):

* ``make run``: the very server command scripts/run.sh starts (scripts/web.sh,
  waitress);
* compose: Debian's nginx on the very file docker-compose.yml mounts
  (contrib/nginx/hxportal.conf; only the upstream, the port and the cache folder
  are pointed at this machine) in front of gunicorn started with the arguments
  of compose's ``web`` service. As a control, the same slow clients against that
  gunicorn directly, as compose used to publish it, leave the probe unanswered.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.conftest import skip_or_fail
from tests.servers import free_port, probe, running, zero_setup_env
from tests.slowclients import trickling_clients

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "contrib" / "nginx" / "hxportal.conf"
BOUND = 5.0  # seconds a probe may take with the slow clients connected
HTTPS = {"X-Forwarded-Proto": "https"}  # as the TLS proxy in front of nginx would say
pytestmark = pytest.mark.processes


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    """A migrated zero-setup database and collected static files, shared by both servers."""
    data = tmp_path_factory.mktemp("slow-clients")
    env = {**zero_setup_env(data), "DJANGO_SETTINGS_MODULE": "hxportal.settings.local"}
    for command in (["migrate", "--noinput", "-v0"], ["collectstatic", "--noinput", "-v0"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True,
                       timeout=180)
    return data


def test_make_run_server_answers_while_slow_clients_trickle_headers(data_dir, tmp_path):
    assert "bash scripts/web.sh" in (ROOT / "scripts" / "run.sh").read_text()
    threads = int(re.search(r"--threads=(\d+)", (ROOT / "scripts" / "web.sh").read_text())[1])
    port = free_port()
    env = {**zero_setup_env(data_dir), "PORT": str(port)}
    with running(["bash", "scripts/web.sh"], env, tmp_path / "web.log", port), \
            trickling_clients(port, 3 * threads) as slow:
        status, seconds = probe(port, timeout=BOUND + 5)
        held = slow.opened == 3 * threads and slow.reopened == 0
    assert status == 200 and seconds < BOUND, (status, seconds)
    assert held, slow  # the slow clients were connected the whole time


def nginx_binary() -> str:
    found = shutil.which("nginx", path=os.environ.get("PATH", "") + ":/usr/sbin")
    if found is None:
        skip_or_fail("nginx is not installed (apt-get install -y nginx)")
    return found


def nginx_config(work: Path, upstream_port: int, port: int) -> Path:
    """The compose file's nginx config pointed at this machine, inside a minimal main config."""
    text = CONF.read_text()
    for old, new in [("server web:8000;", f"server 127.0.0.1:{upstream_port};"),
                     ("listen 8080;", f"listen 127.0.0.1:{port};"),
                     ("/var/cache/nginx/hxportal", str(work / "cache"))]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (work / "hxportal.conf").write_text(text)
    temp = " ".join(f"{kind}_temp_path {work / kind};"
                    for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    main = work / "nginx.conf"
    main.write_text(
        f"worker_processes 1;\npid {work / 'nginx.pid'};\nerror_log {work / 'error.log'} warn;\n"
        f"events {{ worker_connections 1024; }}\n"
        f"http {{\n  include /etc/nginx/mime.types;\n  access_log {work / 'access.log'};\n"
        f"  {temp}\n  include {work / 'hxportal.conf'};\n}}\n")
    return main


def compose_web() -> tuple[list[str], dict[str, str]]:
    """The command and environment of compose's ``web`` service."""
    web = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]
    return list(web["command"]), dict(web["environment"])


def test_compose_nginx_answers_while_slow_clients_trickle_headers(data_dir, tmp_path, request):
    nginx = nginx_binary()
    command, compose_env = compose_web()
    workers = int(command[command.index("--workers") + 1])
    gport, nport = free_port(), free_port()
    assert command[command.index("--bind") + 1] == "0.0.0.0:8000"
    command[command.index("--bind") + 1] = f"127.0.0.1:{gport}"
    command[0] = str(Path(sys.executable).with_name("gunicorn"))
    env = {**zero_setup_env(data_dir),
           "DJANGO_SETTINGS_MODULE": compose_env["DJANGO_SETTINGS_MODULE"],
           "HX_TRUSTED_PROXY_COUNT": "1",
           "SECRET_KEY": "slow-clients-" + "k3Y" * 20, "ALLOWED_HOSTS": "127.0.0.1",
           "DATABASE_URL": f"sqlite:///{data_dir / 'hxportal.sqlite3'}"}
    # nginx's workers run as an unprivileged user when the test runs as root: give
    # them a folder they can reach (pytest's tmp_path is private to its owner).
    work = Path(tempfile.mkdtemp(prefix="hx-nginx-"))
    work.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(work, ignore_errors=True))
    main = nginx_config(work, gport, nport)
    check = subprocess.run([nginx, "-t", "-p", str(work), "-c", str(main)],
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    with running(command, env, tmp_path / "gunicorn.log", gport, headers=HTTPS), \
            running([nginx, "-p", str(work), "-c", str(main), "-g", "daemon off;"], env,
                    tmp_path / "nginx.log", nport, headers=HTTPS):
        with trickling_clients(nport, 3 * workers) as slow:
            status, seconds = probe(nport, timeout=BOUND + 5, headers=HTTPS)
            css = probe(nport, "/static/hxportal/app.css", timeout=BOUND, headers=HTTPS)
            held = slow.reopened == 0
        assert status == 200 and seconds < BOUND, (status, seconds)
        assert held, slow
        assert css[0] == 200, css
        # Control: the same slow clients straight at gunicorn, as compose published it.
        with trickling_clients(gport, 3 * workers):
            direct, _ = probe(gport, timeout=BOUND, headers=HTTPS)
        assert direct is None, "gunicorn answered: the slow clients did not hold its workers"
