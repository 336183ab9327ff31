"""Settings come from the environment; production refuses to start without secrets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _manage(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items()
                if k not in {"SECRET_KEY", "DATABASE_URL", "ALLOWED_HOSTS",
                             "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    full_env.update(env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=full_env,
                          capture_output=True, text=True, timeout=120)


def test_production_refuses_without_secret_key():
    result = _manage(["check"], {"DJANGO_SETTINGS_MODULE": "hxportal.settings.production"})
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_without_database_url():
    result = _manage(["check"], {"DJANGO_SETTINGS_MODULE": "hxportal.settings.production",
                                 "SECRET_KEY": "x" * 60})
    assert result.returncode != 0
    assert "DATABASE_URL must be set" in result.stderr


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    result = _manage(["check", "--deploy", "--fail-level", "WARNING"], {
        "DJANGO_SETTINGS_MODULE": "hxportal.settings.production",
        "SECRET_KEY": "k3y-" + "a9Zq" * 16,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'prod.sqlite3'}",
        "ALLOWED_HOSTS": "hx.example.org",
        "HX_DATA_DIR": str(tmp_path),
    })
    assert result.returncode == 0, result.stderr + result.stdout


def test_local_settings_generate_and_keep_a_secret(tmp_path):
    env = {"DJANGO_SETTINGS_MODULE": "hxportal.settings.local", "HX_DATA_DIR": str(tmp_path)}
    code = "from django.conf import settings; print(settings.SECRET_KEY)"
    first = _manage(["shell", "-c", code], env)
    second = _manage(["shell", "-c", code], env)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == second.stdout.strip()
    assert len(first.stdout.strip()) >= 50
    assert (tmp_path / "secret_key").exists()


def test_debug_is_off_unless_asked():
    from django.conf import settings

    assert settings.DEBUG is False


def test_the_filesystem_broker_polls_every_100_ms_unless_told(tmp_path):
    """kombu's idle sleep (1 s by its default) was the wait of every task hop on
    ``make run``; the transport the worker builds must carry the setting."""
    code = ("from hxportal.celery import app; "
            "print(app.connection_for_read().transport.polling_interval)")
    base = {"DJANGO_SETTINGS_MODULE": "hxportal.settings.local", "HX_DATA_DIR": str(tmp_path),
            "CELERY_BROKER_URL": "filesystem://"}
    default = _manage(["shell", "-c", code], base)
    assert default.returncode == 0, default.stderr
    assert default.stdout.strip().splitlines()[-1] == "0.1"
    slower = _manage(["shell", "-c", code], {**base, "HX_BROKER_POLL_MS": "1000"})
    assert slower.stdout.strip().splitlines()[-1] == "1.0", slower.stderr
    refused = _manage(["shell", "-c", code], {**base, "HX_BROKER_POLL_MS": "5"})
    assert refused.returncode != 0
    assert "HX_BROKER_POLL_MS must be at least 10" in refused.stderr


def test_a_simulation_slice_ends_before_the_tasks_time_limit(tmp_path):
    code = "from django.conf import settings; print(settings.HX_SIM_SLICE_SECONDS)"
    base = {"DJANGO_SETTINGS_MODULE": "hxportal.settings.local", "HX_DATA_DIR": str(tmp_path),
            "CELERY_BROKER_URL": "filesystem://"}
    default = _manage(["shell", "-c", code], base)
    assert default.stdout.strip().splitlines()[-1] == "3000", default.stderr
    shorter = _manage(["shell", "-c", code], {**base, "HX_TASK_SOFT_TIME_LIMIT": "600"})
    assert shorter.stdout.strip().splitlines()[-1] == "300", shorter.stderr
    refused = _manage(["shell", "-c", code], {**base, "HX_SIM_SLICE_SECONDS": "3300"})
    assert refused.returncode != 0
    assert "HX_SIM_SLICE_SECONDS (3300) must be below the task's time limit" in refused.stderr
    no_soft = _manage(["shell", "-c", code], {**base, "HX_TASK_SOFT_TIME_LIMIT": "0"})
    assert no_soft.stdout.strip().splitlines()[-1] == "0", no_soft.stderr
