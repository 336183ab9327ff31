"""With the database unreachable the API answers JSON 503 with ``Retry-After``
(the README's error shape) and pages a plain 503 page; any other unhandled error
in the API is a JSON 500 that does not echo the exception."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import InterfaceError, OperationalError
from rest_framework.test import APIClient

from allocation.api.views import machines as machine_api
from hxportal import services as accounts

ROOT = Path(__file__).resolve().parents[2]
SECRET = "psycopg says: connection to server at 10.9.8.7 failed, user hx_secret"


def fetch(url: str, *, headers: dict[str, str] | None = None,
          data: bytes | None = None) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, data=data, headers=headers or {})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


@pytest.fixture(scope="module")
def dead_database_server(tmp_path_factory):
    """gunicorn on production settings whose PostgreSQL port refuses connections
    (bound, never listening), as when the database is down."""
    with socket.socket() as closed, socket.socket() as free:
        tmp_path = tmp_path_factory.mktemp("down")
        closed.bind(("127.0.0.1", 0))  # held, not listening: connections are refused
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
        free.close()
        env = {**os.environ, "DJANGO_SETTINGS_MODULE": "hxportal.settings.production",
               "DATABASE_URL": f"postgres://hx:pw@127.0.0.1:{closed.getsockname()[1]}/hx",
               "SECRET_KEY": "down-" + "x8Q" * 20, "ALLOWED_HOSTS": "127.0.0.1",
               "SECURE_SSL_REDIRECT": "0", "HX_DATA_DIR": str(tmp_path),
               "STATIC_ROOT": str(tmp_path / "static")}
        (tmp_path / "static").mkdir()
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("gunicorn")), "hxportal.wsgi:application",
             "--bind", f"127.0.0.1:{port}", "--workers", "1", "--log-level", "warning"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(150):
                try:
                    fetch(f"{base}/login/")
                    break
                except OSError:
                    time.sleep(0.2)
            yield base
        finally:
            server.terminate()
            server.communicate(timeout=30)


def assert_json_503(status: int, headers: dict[str, str], body: str) -> None:
    assert status == 503, body[:500]
    assert headers["Content-Type"].startswith("application/json"), headers
    assert int(headers["Retry-After"]) > 0
    data = json.loads(body)
    assert data["detail"] and "database" in data["detail"].lower()
    for leak in ("psycopg", "OperationalError", "Traceback", "127.0.0.1", "hx:pw"):
        assert leak not in body


def test_api_answers_json_503_while_the_database_is_down(dead_database_server):
    base = dead_database_server
    token = {"Authorization": "Token 0123456789abcdef", "Accept": "application/json"}
    assert_json_503(*fetch(f"{base}/api/v1/nodes/?limit=5", headers=token))
    assert_json_503(*fetch(f"{base}/api/v1/jobs/", headers={
        **token, "Content-Type": "application/json"}, data=b'{"name": "x"}'))


def test_pages_answer_a_plain_503_while_the_database_is_down(dead_database_server):
    status, headers, body = fetch(f"{dead_database_server}/",
                                  headers={"Cookie": "sessionid=abcdefghijklmnopqrstuvwxyz012345"})
    assert status == 503, body[:500]
    assert headers["Content-Type"].startswith("text/html")
    assert int(headers["Retry-After"]) > 0
    assert "database" in body.lower() and "Traceback" not in body and "psycopg" not in body


@pytest.mark.django_db
@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_a_lost_connection_mid_request_is_503(api, users, monkeypatch, error):
    def lost(*args, **kwargs):
        raise error(SECRET)

    monkeypatch.setattr(machine_api.MachineViewSet, "list", lost)
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {accounts.issue_token(users['viewer'])}")
    response = client.get("/api/v1/machines/")
    assert response.status_code == 503
    assert response["Retry-After"] and response.json()["detail"]
    assert "hx_secret" not in response.content.decode()


@pytest.mark.django_db
def test_any_other_unhandled_api_error_is_json_500_without_its_text(users, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError(SECRET)

    monkeypatch.setattr(machine_api.MachineViewSet, "list", broken)
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Token {accounts.issue_token(users['viewer'])}")
    response = client.get("/api/v1/machines/")
    assert response.status_code == 500
    assert response["Content-Type"].startswith("application/json")
    assert set(response.json()) == {"detail"} and response.json()["detail"]
    assert "hx_secret" not in response.content.decode()
    assert "Retry-After" not in response
