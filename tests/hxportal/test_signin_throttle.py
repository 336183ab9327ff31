"""Sign-in throttling (issue 23, item 4): every login path is limited, per (account,
address) pair, and an attacker cannot lock the owner or their neighbours out.

The counts live in the database (django-axes); the test database is rolled back after
each test, so no count leaks into the next. The same limits across real gunicorn
workers: test_signin_workers.py. The few tests that read axes' rows or call
hxportal.signin import them inside, so the file also runs against the code before the
fix and shows what failed there.
"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.test import Client, RequestFactory

from hxportal.settings.env import env_int

pytestmark = pytest.mark.django_db

PASSWORD = "pw-owner-4711"
WRONG = "not-the-password"


def sign_in(client: Client, path: str, username: str, password: str, **meta) -> int:
    return client.post(path, {"username": username, "password": password}, **meta).status_code


def signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def fail(client: Client, username: str, times: int, path: str = "/login/", **meta) -> list:
    return [sign_in(client, path, username, WRONG, **meta) for _ in range(times)]


@pytest.fixture
def limit(settings) -> int:
    settings.AXES_FAILURE_LIMIT = 4
    settings.HX_LOGIN_ACCOUNT_FAILURE_LIMIT = 100
    settings.HX_LOGIN_FAILURES_PER_MINUTE = 4  # what the limiter before the fix read
    return settings.AXES_FAILURE_LIMIT


def test_admin_login_is_limited_and_refuses_the_right_password_after(limit, make_user):
    """Was: 100 wrong passwords on /admin/login/, then the right one accepted."""
    make_user("root", "admin", password=PASSWORD)
    client = Client()
    assert fail(client, "root", limit, path="/admin/login/")[:-1] == [200] * (limit - 1)
    assert sign_in(client, "/admin/login/", "root", PASSWORD) == 429
    assert not signed_in(client)
    assert client.get("/admin/").status_code == 302  # still sent to the login page


def test_failures_on_both_login_pages_add_up(limit, make_user):
    make_user("root", "admin", password=PASSWORD)
    client = Client()
    assert fail(client, "root", limit - 1, path="/login/") == [200] * (limit - 1)
    fail(client, "root", 1, path="/admin/login/")
    assert sign_in(client, "/login/", "root", PASSWORD) == 429
    assert not signed_in(client)


def test_lockout_refuses_the_right_password_from_the_locked_pair(limit, make_user):
    make_user("alice", password=PASSWORD)
    attacker = Client(REMOTE_ADDR="203.0.113.66")
    assert fail(attacker, "alice", limit) == [200] * (limit - 1) + [429]
    response = attacker.post("/login/", {"username": "alice", "password": PASSWORD})
    assert response.status_code == 429
    assert not signed_in(attacker)
    assert int(response["Retry-After"]) > 0
    assert "Too many failed sign-in attempts" in response.content.decode()
    assert "Content-Security-Policy" in response.headers  # the usual headers still apply


def test_owner_signs_in_from_another_address_while_the_attacker_is_locked(limit, make_user):
    make_user("alice", password=PASSWORD)
    attacker = Client(REMOTE_ADDR="203.0.113.66")
    fail(attacker, "alice", limit + 3)
    owner = Client(REMOTE_ADDR="198.51.100.7")
    assert sign_in(owner, "/login/", "alice", PASSWORD) == 302
    assert signed_in(owner)


def test_behind_one_address_an_attacker_locks_only_the_account_they_attack(limit, make_user):
    """Was: the lock was per address, so behind a proxy (every user arriving from
    the proxy's address) one attacker locked everyone out."""
    make_user("alice", password=PASSWORD)
    make_user("bob", password=PASSWORD)
    proxy = {"REMOTE_ADDR": "10.0.0.1"}
    attacker = Client(**proxy)
    fail(attacker, "alice", limit + 3)
    assert sign_in(attacker, "/login/", "alice", PASSWORD) == 429
    colleague = Client(**proxy)
    assert sign_in(colleague, "/login/", "bob", PASSWORD) == 302
    assert signed_in(colleague)


def test_behind_a_trusted_proxy_the_owner_signs_in_from_their_own_address(
        limit, settings, make_user):
    """With HX_TRUSTED_PROXY_COUNT=1 the client is the proxy's last X-Forwarded-For
    entry: the attacker's lock does not reach the owner behind the same proxy, and
    entries the attacker writes further left change nothing."""
    settings.HX_TRUSTED_PROXY_COUNT = 1
    make_user("alice", password=PASSWORD)
    attacker = Client(REMOTE_ADDR="10.0.0.1")
    for n in range(limit + 2):
        spoofed = f"198.51.100.{n}, 203.0.113.66"
        attacker.post("/login/", {"username": "alice", "password": WRONG},
                      HTTP_X_FORWARDED_FOR=spoofed)
    assert sign_in(attacker, "/login/", "alice", PASSWORD,
                   HTTP_X_FORWARDED_FOR="198.51.100.7, 203.0.113.66") == 429
    owner = Client(REMOTE_ADDR="10.0.0.1")
    assert sign_in(owner, "/login/", "alice", PASSWORD,
                   HTTP_X_FORWARDED_FOR="198.51.100.7") == 302


def test_without_a_trusted_proxy_x_forwarded_for_is_ignored(limit, make_user):
    make_user("alice", password=PASSWORD)
    attacker = Client(REMOTE_ADDR="203.0.113.66")
    for n in range(limit + 2):
        sign_in(attacker, "/login/", "alice", WRONG, HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
    assert sign_in(attacker, "/login/", "alice", PASSWORD,
                   HTTP_X_FORWARDED_FOR="198.51.100.200") == 429


def test_an_account_under_attack_from_many_addresses_gets_one_try_per_address(
        settings, make_user):
    """Once one account has HX_LOGIN_ACCOUNT_FAILURE_LIMIT failures from all addresses,
    an address that has failed for it is refused at once, while a clean address (the
    owner's) still signs in."""
    settings.AXES_FAILURE_LIMIT = 5
    settings.HX_LOGIN_ACCOUNT_FAILURE_LIMIT = 7
    make_user("alice", password=PASSWORD)
    for n in (1, 2, 3):  # 2 failures each: under the pair limit, 6 for the account
        assert fail(Client(REMOTE_ADDR=f"203.0.113.{n}"), "alice", 2) == [200, 200]
    fourth = Client(REMOTE_ADDR="203.0.113.4")
    fail(fourth, "alice", 1)  # the account's 7th failure: this address is locked at once
    assert sign_in(fourth, "/login/", "alice", PASSWORD) == 429
    assert sign_in(Client(REMOTE_ADDR="203.0.113.1"), "/login/", "alice", PASSWORD) == 429
    owner = Client(REMOTE_ADDR="198.51.100.7")
    assert sign_in(owner, "/login/", "alice", PASSWORD) == 302


def test_the_lock_ends_after_the_cool_off(limit, settings, make_user):
    from axes.models import AccessAttempt

    make_user("alice", password=PASSWORD)
    client = Client()
    fail(client, "alice", limit)
    assert sign_in(client, "/login/", "alice", PASSWORD) == 429
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time
                                 - settings.AXES_COOLOFF_TIME - timedelta(seconds=1))
    assert sign_in(client, "/login/", "alice", PASSWORD) == 302


def test_hammering_a_locked_pair_does_not_extend_or_grow_its_record(limit, make_user):
    from axes.models import AccessAttempt

    make_user("alice", password=PASSWORD)
    client = Client()
    fail(client, "alice", limit)
    before = AccessAttempt.objects.get()
    assert fail(client, "alice", 5) == [429] * 5
    after = AccessAttempt.objects.get()
    assert (after.failures_since_start, after.attempt_time, len(after.post_data)) == (
        before.failures_since_start, before.attempt_time, len(before.post_data))
    assert PASSWORD not in after.post_data and WRONG not in after.post_data


def test_signing_in_forgets_the_pairs_earlier_failures(limit, make_user):
    make_user("alice", password=PASSWORD)
    client = Client()
    fail(client, "alice", limit - 1)
    assert sign_in(client, "/login/", "alice", PASSWORD) == 302
    client.post("/logout/")
    assert fail(client, "alice", limit - 1) == [200] * (limit - 1)
    assert sign_in(client, "/login/", "alice", PASSWORD) == 302


@pytest.mark.parametrize(("proxies", "remote", "forwarded", "expected"), [
    (0, "192.0.2.1", "", "192.0.2.1"),
    (0, "192.0.2.1", "198.51.100.7", "192.0.2.1"),
    (1, "10.0.0.1", "198.51.100.7", "198.51.100.7"),
    (1, "10.0.0.1", "6.6.6.6, 198.51.100.7", "198.51.100.7"),
    (2, "10.0.0.1", "6.6.6.6, 198.51.100.7, 10.0.0.2", "198.51.100.7"),
    (2, "10.0.0.1", "198.51.100.7", "10.0.0.1"),  # skipped a proxy: only the peer counts
    (1, "10.0.0.1", "not-an-address", "10.0.0.1"),
    (1, "10.0.0.1", " 2001:DB8::1 ", "2001:db8::1"),
    (0, "", "", None),
])
def test_client_address(settings, proxies, remote, forwarded, expected):
    from hxportal.signin import client_address

    settings.HX_TRUSTED_PROXY_COUNT = proxies
    request = RequestFactory().post("/login/", REMOTE_ADDR=remote,
                                    HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


def test_limits_must_be_positive(monkeypatch):
    monkeypatch.setenv("HX_LOGIN_FAILURE_LIMIT", "0")
    with pytest.raises(ImproperlyConfigured, match="at least 1"):
        env_int("HX_LOGIN_FAILURE_LIMIT", 5, minimum=1)


def test_an_admin_lifts_a_lock(limit, make_user, client_for):
    make_user("alice", password=PASSWORD)
    client = Client()
    fail(client, "alice", limit)
    admin = client_for("admin")
    assert admin.get("/admin/axes/accessattempt/?locked_out=yes").status_code == 200
    out = StringIO()
    call_command("axes_reset_username", "alice", stdout=out)
    assert "1 attempts removed" in out.getvalue()
    assert sign_in(client, "/login/", "alice", PASSWORD) == 302
