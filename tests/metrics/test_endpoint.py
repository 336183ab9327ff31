"""Who may read /metrics: tokens, signed-in users, allowed networks; nobody else."""

from __future__ import annotations

import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.test import Client

from hxportal import services as accounts

URL = "/metrics"


def token_client(user, **flags) -> Client:
    key = accounts.issue_token(user, "prometheus", **flags)
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


@pytest.mark.django_db
def test_anonymous_is_refused_with_401_not_sent_to_the_login_page(portal):
    response = Client().get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert b"hx_nodes" not in response.content


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["viewer", "operator", "admin"])
def test_any_role_with_a_token_reads_the_text_format(portal, users, role):
    response = token_client(users[role]).get(URL)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    body = response.content.decode()
    assert 'hx_nodes{machine="m4",state="drained"} 1.0' in body
    assert 'hx_slurm_sync_failing{machine="m4"} 1.0' in body


@pytest.mark.django_db
def test_a_metrics_token_reads_metrics_and_nothing_else(portal, users):
    client = token_client(users["viewer"], scope="metrics", read_only=True)
    assert client.get(URL).status_code == 200
    refused = client.get("/api/v1/machines/")
    assert refused.status_code == 403
    assert refused.json()["detail"] == "This token may only read metrics."


@pytest.mark.django_db
def test_a_benchmark_token_may_not_read_metrics(portal, users):
    response = token_client(users["operator"], scope="benchmarks").get(URL)
    assert response.status_code == 403


@pytest.mark.django_db
def test_a_wrong_or_revoked_token_is_401(portal):
    response = Client(HTTP_AUTHORIZATION="Token hx_not-a-key").get(URL)
    assert response.status_code == 401


@pytest.mark.django_db
def test_a_signed_in_viewer_reads_it_in_the_browser(portal, client_for):
    assert client_for("viewer").get(URL).status_code == 200


@pytest.mark.django_db
def test_openmetrics_when_the_scraper_asks_for_it(portal, users):
    response = token_client(users["viewer"]).get(
        URL, HTTP_ACCEPT="application/openmetrics-text; version=1.0.0,text/plain;q=0.5")
    assert response["Content-Type"].startswith("application/openmetrics-text")
    assert response.content.decode().endswith("# EOF\n")


@pytest.mark.django_db
def test_an_allowed_network_needs_no_credentials(portal, settings):
    settings.HX_METRICS_ALLOWED_NETS = ["10.20.0.0/16", "192.0.2.7"]
    assert Client(REMOTE_ADDR="10.20.3.4").get(URL).status_code == 200
    assert Client(REMOTE_ADDR="192.0.2.7").get(URL).status_code == 200
    assert Client(REMOTE_ADDR="10.21.0.1").get(URL).status_code == 401
    assert Client(REMOTE_ADDR="192.0.2.8").get(URL).status_code == 401


@pytest.mark.django_db
def test_a_forged_forwarded_header_does_not_open_it(portal, settings):
    settings.HX_METRICS_ALLOWED_NETS = ["10.0.0.0/8"]
    settings.HX_TRUSTED_PROXY_COUNT = 0
    client = Client(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="10.0.0.1")
    assert client.get(URL).status_code == 401


@pytest.mark.django_db
def test_behind_a_trusted_proxy_the_forwarded_address_counts(portal, settings):
    settings.HX_METRICS_ALLOWED_NETS = ["10.0.0.0/8"]
    settings.HX_TRUSTED_PROXY_COUNT = 1
    via_proxy = Client(REMOTE_ADDR="172.18.0.5", HTTP_X_FORWARDED_FOR="10.0.0.1")
    assert via_proxy.get(URL).status_code == 200
    outsider = Client(REMOTE_ADDR="172.18.0.5", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert outsider.get(URL).status_code == 401


@pytest.mark.django_db
def test_only_get_is_served(portal, users):
    assert token_client(users["admin"]).post(URL).status_code == 405


def test_a_mistyped_network_fails_the_start_up_check(settings):
    settings.HX_METRICS_ALLOWED_NETS = ["10.0.0.0/33"]
    errors = [e for e in run_checks() if e.id == "metrics.E001"]
    assert len(errors) == 1 and "'10.0.0.0/33' is not a network" in errors[0].msg
    settings.HX_METRICS_ALLOWED_NETS = ["10.0.0.0/8", "fd00::/8"]
    assert not [e for e in run_checks() if e.id == "metrics.E001"]


@pytest.mark.django_db
def test_the_documented_command_issues_a_token_that_reads_only_metrics(portal, capsys):
    call_command("hx_user", "prometheus", "--role", "viewer", "--scope", "metrics",
                 "--read-only")
    key = capsys.readouterr().out.strip()
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(URL).status_code == 200
    assert client.get("/api/v1/nodes/").status_code == 403
