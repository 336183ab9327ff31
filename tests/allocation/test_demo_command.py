"""``manage.py hx_demo`` creates ``admin``/``admin`` for local development only:
on production settings it refuses unless given a real password."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import global_settings
from django.contrib.auth import get_user_model

from allocation.models import Machine
from tests.workers import current_database_url

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)
STRONG = "Blue-Heron-Quartz-9041"


@pytest.fixture(autouse=True)
def real_hashers(settings):
    """The command hashes as a deployment does; the test settings' fast MD5 only
    would not read those hashes back."""
    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS


def signs_in(password: str) -> bool:
    """Whether ``admin`` exists with this password (checked on the user row: the
    sign-in throttle's backend wants a request, which a command has not)."""
    user = get_user_model().objects.filter(username="admin").first()
    return user is not None and user.is_active and user.check_password(password)


def hx_demo(settings_module: str, tmp_path: Path, *args: str,
            **env: str) -> subprocess.CompletedProcess:
    """Run ``manage.py hx_demo`` in its own process on the test database."""
    inherited = {k: v for k, v in os.environ.items() if k != "HX_DEMO_ADMIN_PASSWORD"}
    full_env = {**inherited, "DJANGO_SETTINGS_MODULE": settings_module,
                "DATABASE_URL": current_database_url(), "SECRET_KEY": "demo-" + "k9Z" * 20,
                "ALLOWED_HOSTS": "127.0.0.1", "HX_DATA_DIR": str(tmp_path), **env}
    return subprocess.run([sys.executable, "manage.py", "hx_demo", *args], cwd=ROOT,
                          env=full_env, capture_output=True, text=True, timeout=120,
                          check=False)


def test_production_refuses_the_default_admin_password(tmp_path):
    done = hx_demo("hxportal.settings.production", tmp_path)
    assert done.returncode != 0, done.stdout
    assert "--password" in done.stderr and "HX_DEMO_ADMIN_PASSWORD" in done.stderr
    assert "Traceback" not in done.stderr
    assert not get_user_model().objects.filter(username="admin").exists()
    assert not signs_in("admin")
    assert not Machine.objects.exists(), "refused before creating anything"
    weak = hx_demo("hxportal.settings.production", tmp_path, "--password", "admin")
    assert weak.returncode != 0 and "too weak" in weak.stderr
    assert not get_user_model().objects.filter(username="admin").exists()


@pytest.mark.parametrize("how", ["option", "environment"])
def test_production_takes_a_real_password(tmp_path, how):
    if how == "option":
        done = hx_demo("hxportal.settings.production", tmp_path, "--admin-password", STRONG)
    else:
        done = hx_demo("hxportal.settings.production", tmp_path,
                       HX_DEMO_ADMIN_PASSWORD=STRONG)
    assert done.returncode == 0, done.stderr
    assert STRONG not in done.stdout, "a password given is not printed"
    assert signs_in(STRONG)
    assert not signs_in("admin")


def test_local_settings_keep_the_documented_demo_admin(tmp_path):
    """``make run`` (local settings) signs in as admin / admin, as the README says."""
    done = hx_demo("hxportal.settings.local", tmp_path)
    assert done.returncode == 0, done.stderr
    assert "password: admin" in done.stdout
    assert signs_in("admin")
    assert Machine.objects.filter(name="hx").exists()
