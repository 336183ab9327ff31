"""Sign-in, tokens and the anonymous wall."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from hxportal.models import ApiToken, TokenScope, hash_token

pytestmark = pytest.mark.django_db


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.mark.parametrize("url", ["/api/v1/machines/", "/api/v1/nodes/", "/api/schema/"])
def test_anonymous_api_gets_401(client, url):
    response = client.get(url)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_signed_out_api_docs_go_to_the_login_page_and_back(client, make_user):
    """Issue 22, defect 9: a person opening the API docs signs in, not a bare 401."""
    response = client.get("/api/docs/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=/api/docs/"
    make_user("alice", "viewer", password="pw-alice-123")
    signed_in = client.post("/login/?next=/api/docs/",
                            {"username": "alice", "password": "pw-alice-123",
                             "next": "/api/docs/"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/api/docs/"
    assert client.get("/api/docs/").status_code == 200
    bad_token = Client().get("/api/docs/", HTTP_AUTHORIZATION="Token nope")
    assert bad_token.status_code == 401  # a script with a token gets the API's answer


@pytest.mark.parametrize("url", ["/", "/machines/m4/", "/machines/new/", "/admin/"])
def test_anonymous_pages_redirect_to_login(client, machine, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(("/login/", "/admin/login/"))


def test_login_page_is_open_and_signs_in(client, make_user):
    make_user("alice", "viewer", password="pw-alice-123")
    assert client.get("/login/").status_code == 200
    response = client.post("/login/", {"username": "alice", "password": "pw-alice-123"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_login_is_rate_limited(client, settings, make_user):
    make_user("bob", "viewer")
    codes = [client.post("/login/", {"username": "bob", "password": "wrong"}).status_code
             for _ in range(12)]
    assert codes[0] == 200 and 429 in codes


def test_hx_user_creates_user_and_prints_a_working_token():
    out = StringIO()
    call_command("hx_user", "carol", "--role", "operator", stdout=out, stderr=StringIO())
    key = out.getvalue().strip()
    assert key.startswith("hx_")
    token = ApiToken.objects.get(user__username="carol")
    assert token.key_hash == hash_token(key)
    assert key not in str(ApiToken.objects.values_list(flat=True))
    assert _client(key).get("/api/v1/machines/").status_code == 200
    call_command("hx_user", "carol", "--role", "viewer", stdout=StringIO(), stderr=StringIO())
    token.user.refresh_from_db()
    assert token.user.role == "viewer"


def test_tokens_are_stored_hashed_only(users):
    token, key = ApiToken.issue(users["viewer"])
    stored = ApiToken.objects.filter(pk=token.pk).values()[0]
    assert key not in {str(v) for v in stored.values()}
    assert stored["key_hash"] == hash_token(key)


@pytest.mark.parametrize("header", ["Token", "Token a b", "Token hx_nonexistent",
                                    "Token " + "x" * 500])
def test_malformed_or_unknown_tokens_get_401(header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    assert client.get("/api/v1/machines/").status_code == 401


def test_expired_and_revoked_tokens_get_401(users):
    _, expired = ApiToken.issue(users["viewer"], expires_at=timezone.now() - timedelta(seconds=1))
    revoked_token, revoked = ApiToken.issue(users["viewer"])
    revoked_token.revoked_at = timezone.now()
    revoked_token.save()
    assert _client(expired).get("/api/v1/machines/").status_code == 401
    assert _client(revoked).get("/api/v1/machines/").status_code == 401


def test_read_only_token_cannot_write(users, machine):
    _, key = ApiToken.issue(users["admin"], read_only=True)
    client = _client(key)
    assert client.get("/api/v1/machines/").status_code == 200
    response = client.patch("/api/v1/machines/m4/", {"description": "x"}, format="json")
    assert response.status_code == 403


def test_benchmark_scoped_token_cannot_read_inventory(users):
    _, key = ApiToken.issue(users["operator"], scope=TokenScope.BENCHMARKS)
    assert _client(key).get("/api/v1/machines/").status_code == 403


def test_the_header_names_the_role_the_portal_grants(make_user):
    """A superuser made by ``createsuperuser`` keeps the default role field (viewer) but
    may do what an admin may: the header says admin, not viewer."""
    root = make_user("root", "viewer", password="pw-root-12345")
    root.is_superuser = True
    root.save()
    client = Client()
    client.force_login(root)
    assert "root (admin)" in client.get("/").content.decode()
    make_user("vera", "viewer", password="pw-vera-12345")
    client.force_login(root.__class__.objects.get(username="vera"))
    assert "vera (viewer)" in client.get("/").content.decode()
