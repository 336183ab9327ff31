"""A token key never shows up in logs or in later API responses."""

from __future__ import annotations

import logging

import pytest

from hxportal import services as accounts
from hxportal.logging import RedactTokensFilter, redact
from hxportal.models import ApiToken

pytestmark = pytest.mark.django_db


def test_redaction_filter_removes_keys_from_log_records():
    key = "hx_" + "A" * 43
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "auth with %s failed", (key,),
                               None)
    assert RedactTokensFilter().filter(record)
    assert key not in record.getMessage() and "hx_[redacted]" in record.getMessage()
    assert redact(f"Authorization: Token {key}") == "Authorization: Token hx_[redacted]"


def test_key_is_absent_from_responses_and_logs(api, users, machine, caplog):
    key = accounts.issue_token(users["admin"], "secret-check")
    client = api(None)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    caplog.set_level(logging.DEBUG)
    bodies = [client.get(url).content.decode() for url in (
        "/api/v1/machines/", "/api/v1/nodes/?limit=5", "/api/v1/jobs/", "/api/v1/nope/")]
    bodies.append(client.post("/api/v1/machines/", {"name": "1bad"}, format="json")
                  .content.decode())
    assert all(key not in body for body in bodies)
    for record in caplog.records:
        assert key not in record.getMessage()
    token = ApiToken.objects.get(name="secret-check")
    assert token.last_used_at is not None and key[:10] == token.prefix
