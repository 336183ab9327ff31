"""The sign-in limit holds across real gunicorn worker processes (issue 23, item 4).

Was: each worker kept its own counter in process memory, so 3 workers let about three
times the limit through. Now the counts live in the database, which every worker
shares. The server is gunicorn with 3 sync workers against the test database; a
server hook logs which worker answered each request, so the test can show that the
failures were spread over workers and the lock still came after exactly the limit.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.workers import current_database_url

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 6
PASSWORD = "pw-owner-4711"
pytestmark = pytest.mark.django_db(transaction=True)

HOOKS = """
def post_request(worker, req, environ, resp):
    with open({log!r}, "a") as log:
        log.write(f"{{worker.pid}} {{req.method}} {{req.path}} {{resp.status_code}}\\n")
"""


class Site:
    """Requests to the server on ``port``, each on a new connection (as separate
    clients would), with the CSRF cookie of one visit to the login page."""

    def __init__(self, port: int):
        self.port = port
        status, headers, _ = self.request("GET", "/login/")
        assert status == 200
        cookie = SimpleCookie()
        for name, value in headers:
            if name.lower() == "set-cookie":
                cookie.load(value)
        self.csrf = cookie["csrftoken"].value

    def request(self, method: str, path: str, body: str | None = None,
                headers: dict | None = None) -> tuple[int, list, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            connection.close()

    def sign_in(self, username: str, password: str) -> int:
        body = urlencode({"username": username, "password": password,
                          "csrfmiddlewaretoken": self.csrf})
        return self.request("POST", "/login/", body, {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={self.csrf}"})[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def gunicorn(tmp_path):
    """Yield (port, request log) of gunicorn with 3 workers on the test database."""
    port, log = free_port(), tmp_path / "requests.log"
    config = tmp_path / "hooks.py"
    config.write_text(HOOKS.format(log=str(log)))
    (tmp_path / "static").mkdir()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.test",
           "DATABASE_URL": current_database_url(), "HX_DATA_DIR": str(tmp_path),
           "STATIC_ROOT": str(tmp_path / "static"), "HX_LOGIN_FAILURE_LIMIT": str(LIMIT),
           # the per-process limiter before the fix read this one: the same count there
           "HX_LOGIN_FAILURES_PER_MINUTE": str(LIMIT)}
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "hxportal.wsgi:application",
         "--bind", f"127.0.0.1:{port}", "--workers", "3", "--config", str(config),
         "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                Site(port)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield port, log
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
    assert b"Traceback" not in stderr, stderr.decode()[-3000:]


def test_the_limit_holds_across_gunicorn_workers(gunicorn, make_user):
    port, log = gunicorn
    make_user("alice", password=PASSWORD)
    make_user("bob", password=PASSWORD)
    site = Site(port)
    with ThreadPoolExecutor(3) as pool:  # 3 at a time: no single worker can take them all
        below = list(pool.map(lambda _: site.sign_in("alice", "wrong"), range(LIMIT - 1)))
    assert below == [200] * (LIMIT - 1)
    site.sign_in("alice", "wrong")  # the limit-th failure, whichever worker counts it
    with ThreadPoolExecutor(3) as pool:
        refused = list(pool.map(lambda _: site.sign_in("alice", PASSWORD), range(9)))
    assert refused == [429] * 9
    assert site.sign_in("bob", PASSWORD) == 302  # the same address, another account
    workers = Counter(line.split()[0] for line in log.read_text().splitlines()
                      if " POST /login/ " in line)
    assert len(workers) >= 2, f"every sign-in went to one worker: {dict(workers)}"
