"""Shared fixtures: users per role, token-authenticated API clients, a small machine.

Tests that need a service (PostgreSQL, Chromium) skip with a reason when it is
missing, except in CI (CI=true), where a missing service is a failure.
"""

from __future__ import annotations

import os
import shutil

import pytest
from django.db import connection
from rest_framework.test import APIClient

from allocation.services import machines
from hxportal import services as accounts
from hxportal.roles import Role

IN_CI = os.environ.get("CI", "").lower() == "true"
CHROMIUM = "/usr/bin/chromium"


def skip_or_fail(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"required in CI: {reason}")
    pytest.skip(reason)


#: pytest-django's fixtures through which a test reaches the database.
DATABASE_FIXTURES = frozenset({"_django_db_helper", "django_db_setup", "live_server"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark ``database_free`` every test that cannot reach the database.

    pytest-django refuses database access to a test without one of its database
    fixtures or the ``django_db`` marker, so such a test runs the same on either
    pass of ``make test``; ``scripts/test.sh`` runs it on the zero-setup pass only
    (unless it is marked ``postgres`` or ``browser``, which that pass leaves out). This
    runs before ``-m`` selects, so the marker can be selected on.
    """
    for item in items:
        reaches = DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        if not reaches and item.get_closest_marker("django_db") is None:
            item.add_marker(pytest.mark.database_free)


def pytest_runtest_setup(item):
    if item.get_closest_marker("browser") and not shutil.which(CHROMIUM):
        skip_or_fail(f"{CHROMIUM} is not installed (apt-get install -y chromium)")


@pytest.fixture(autouse=True)
def fresh_cache():
    """Cached answers never leak from one test to the next (sign-in failure counts
    live in the database, which is rolled back or flushed after each test)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def on_postgres(db):
    if connection.vendor != "postgresql":
        skip_or_fail("needs PostgreSQL: run with DATABASE_URL=postgres://...")


@pytest.fixture
def make_user(db):
    def make(username: str, role: str = Role.VIEWER,
             password: str = "pw-12345-secret"):  # noqa: S107
        user, _ = accounts.upsert_user(username, role, password=password)
        return user
    return make


@pytest.fixture
def users(make_user):
    return {
        "viewer": make_user("viewer", Role.VIEWER),
        "operator": make_user("operator", Role.OPERATOR),
        "operator2": make_user("operator2", Role.OPERATOR),
        "admin": make_user("admin", Role.ADMIN),
    }


@pytest.fixture
def client_for(users):
    """``client_for("viewer")`` is a page client signed in as that user; ``None`` anonymous."""
    from django.test import Client

    def make(role: str | None) -> Client:
        client = Client()
        if role is not None:
            client.force_login(users[role])
        return client
    return make


@pytest.fixture
def api(users):
    """``api("operator")`` is an APIClient carrying that user's token; ``api(None)`` anonymous."""
    clients = {}

    def client_for(role: str | None) -> APIClient:
        if role not in clients:
            client = APIClient()
            if role is not None:
                key = accounts.issue_token(users[role], "test")
                client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
            clients[role] = client
        return clients[role]
    return client_for


@pytest.fixture
def machine(db):
    """A 4x4 HyperX with c = 4: 64 nodes named n01..n64."""
    return machines.create_machine(name="m4", sides=[4, 4], concentration=4,
                                   hostname_pattern="n{n:02d}")
