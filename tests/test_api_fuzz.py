"""Schemathesis over the whole OpenAPI schema, in-process, with a bounded budget.

Every operation is fuzzed as an admin and as a viewer; the checks are "no 5xx"
and that each response matches the schema the API publishes.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
)

from hxportal import services as accounts

RAW_SCHEMA = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True),
                                   default=str))
schema = schemathesis.openapi.from_dict(RAW_SCHEMA)
schema.app = get_wsgi_application()
#: The operations each of whose valid calls creates a whole preset sweep (up to
#: thousands of runs): fuzzed with fewer examples, as they took most of the fuzz's time.
PRESET_STARTS = r"^/api/v1/sweeps/(study|reproduction)/$"
CHECKS = [schemathesis.checks.not_a_server_error, response_schema_conformance]


@pytest.fixture(autouse=True)
def keep_test_connection():
    """Like Django's test client: the in-process WSGI app must not close the
    test transaction's connection at the end of each request."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def fuzz_headers(machine, make_user, request):
    user = make_user(f"fuzz-{request.param}", request.param)
    return {"Authorization": f"Token {accounts.issue_token(user, 'fuzz')}",
            "Host": "localhost"}


@pytest.mark.django_db
@pytest.mark.parametrize("fuzz_headers", ["admin", "viewer"], indirect=True)
@schema.exclude(method="POST", path_regex=PRESET_STARTS).parametrize()
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_never_fails_and_matches_its_schema(case, fuzz_headers):
    case.call_and_validate(headers=fuzz_headers, checks=CHECKS)


@pytest.mark.django_db
@pytest.mark.parametrize("fuzz_headers", ["admin", "viewer"], indirect=True)
@schema.include(method="POST", path_regex=PRESET_STARTS).parametrize()
@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_preset_starts_never_fail_and_match_their_schema(case, fuzz_headers):
    case.call_and_validate(headers=fuzz_headers, checks=CHECKS)
