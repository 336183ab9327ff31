"""The real /metrics output passes Prometheus's own checker (`promtool check metrics`,
Debian's prometheus package): outside CI a missing promtool skips with the reason,
in CI it fails."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.test import Client

from hxportal import services as accounts
from metrics import services
from tests.conftest import skip_or_fail
from tests.metrics.conftest import upload_rounds

PROMTOOL = "/usr/bin/promtool"


@pytest.fixture
def promtool() -> str:
    found = PROMTOOL if shutil.which(PROMTOOL) else shutil.which("promtool")
    if not found:
        skip_or_fail(f"{PROMTOOL} is not installed (apt-get install -y prometheus)")
    return found


@pytest.mark.django_db
def test_promtool_accepts_the_real_output(promtool, portal, users):
    upload_rounds(portal["machine"], users["operator"])
    services.refresh_health_snapshots()
    key = accounts.issue_token(users["viewer"], "prometheus", scope="metrics")
    response = Client(HTTP_AUTHORIZATION=f"Token {key}").get("/metrics")
    assert response.status_code == 200
    text = response.content.decode()
    for family in ("hx_nodes", "hx_drain_candidates_up", "hx_estimate_p_abn_upper",
                   "hx_estimate_alpha_abn_lower",
                   "hx_switches_whole_free", "hx_recommendation_latency_seconds_bucket",
                   "hx_celery_queue_length", "hx_slurm_sync_age_seconds"):
        assert f"\n{family}{{" in text, family
    result = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "" and result.stderr.strip() == "", result.stdout


def test_promtool_would_catch_a_bad_name(promtool):
    """The check is not vacuous: a counter without ``_total`` is reported."""
    bad = "# HELP hx_things Things.\n# TYPE hx_things counter\nhx_things 1\n"
    result = subprocess.run([promtool, "check", "metrics"], input=bad, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode != 0 and "_total" in result.stdout + result.stderr


def _documented_yaml() -> list[str]:
    text = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    section = text[text.index("### A Prometheus configuration"):]
    return re.findall(r"```yaml\n(.*?)```", section, re.S)


def test_the_documented_scrape_config_and_alerts_are_valid(promtool, tmp_path):
    config, rules = _documented_yaml()[:2]
    token = tmp_path / "hxportal.token"
    token.write_text("hx_example\n")
    (tmp_path / "prometheus.yml").write_text(
        config.replace("/etc/prometheus/hxportal.token", str(token)))
    (tmp_path / "rules.yml").write_text(rules)
    for kind, name in (("config", "prometheus.yml"), ("rules", "rules.yml")):
        result = subprocess.run([promtool, "check", kind, str(tmp_path / name)],
                                capture_output=True, text=True, timeout=60, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
