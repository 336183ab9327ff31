"""Security headers on every page, cookie flags, and migrations that are complete
and reversible."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_pages_send_strict_security_headers(client, users, machine):
    client.force_login(users["viewer"])
    response = client.get("/machines/m4/")
    csp = response["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_login_page_has_no_inline_script(client):
    body = client.get("/login/").content.decode()
    assert "<script>" not in body and "onclick=" not in body and "style=" not in body


def test_session_and_csrf_cookies_are_httponly_and_samesite(client, make_user):
    make_user("alice", "viewer", password="pw-alice-123")
    response = client.post("/login/", {"username": "alice", "password": "pw-alice-123"})
    cookie = response.cookies["sessionid"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"


def test_no_missing_migrations():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out, stderr=out)


@pytest.mark.django_db(transaction=True)
def test_migrations_are_reversible():
    out = StringIO()
    for app in ("allocation", "hxportal", "simulation"):
        call_command("migrate", app, "zero", stdout=out, verbosity=0)
    call_command("migrate", stdout=out, verbosity=0)
