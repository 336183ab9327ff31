"""docker-compose.yml describes the deployment the README promises."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import yaml
from django.conf import settings

from tests.conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[1]


def test_compose_has_every_service_on_one_image():
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = spec["services"]
    assert {"postgres", "redis", "web", "worker", "beat"} <= set(services)
    images = {services[name]["image"] for name in ("web", "worker", "beat")}
    assert images == {"hxportal:latest"}
    for name in ("web", "worker", "beat"):
        env = services[name]["environment"]
        assert env["DJANGO_SETTINGS_MODULE"] == "hxportal.settings.production"
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["CELERY_BROKER_URL"].startswith("redis://")
    assert "gunicorn" in services["web"]["command"]


def test_only_nginx_is_published_and_it_buffers_with_time_limits():
    """gunicorn's sync workers sit behind nginx (tests/test_slow_clients.py runs both)."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"nginx"}
    assert services["nginx"]["ports"] == ["8000:8080"]
    assert ("./contrib/nginx/hxportal.conf:/etc/nginx/conf.d/default.conf:ro"
            in services["nginx"]["volumes"])
    env = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["x-app"]["environment"]
    assert env["HX_TRUSTED_PROXY_COUNT"] == "${HX_TRUSTED_PROXY_COUNT:-1}"  # nginx appends XFF
    assert services["worker"]["stop_signal"] == "SIGQUIT"  # cold shutdown, task requeued
    # time for a 65,536-node simulation's chunk and save before the hand-over's deadline
    assert services["worker"]["environment"]["HX_WORKER_SHUTDOWN_GRACE"] == "10"
    assert services["worker"]["environment"]["CELERY_BROKER_URL"] == env["CELERY_BROKER_URL"]
    conf = (ROOT / "contrib" / "nginx" / "hxportal.conf").read_text()
    for directive in ("client_header_timeout 10s;", "client_body_timeout 10s;",
                      "limit_conn hx_per_address", "proxy_buffering on;",
                      "proxy_request_buffering on;", "proxy_set_header X-Real-IP $remote_addr;",
                      "location /static/", "server web:8000;", "listen 8080;"):
        assert directive in conf, directive


def test_the_worker_keeps_checkpoints_in_a_volume_it_can_write():
    """A recreated worker container finds the long runs' checkpoints again; the image
    makes the folder the hx user's, which a new named volume takes on."""
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert "checkpoints:/app/data/checkpoints" in spec["services"]["worker"]["volumes"]
    assert "checkpoints" in spec["volumes"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "mkdir -p /app/data/checkpoints && chown -R hx /app/data" in dockerfile
    assert dockerfile.index("chown -R hx /app/data") < dockerfile.index("USER hx")
    assert Path(settings.HX_CHECKPOINT_DIR) == Path(settings.DATA_DIR) / "checkpoints" or \
        os.environ.get("HX_CHECKPOINT_DIR")


def _compose_command() -> list[str] | None:
    if shutil.which("docker") and subprocess.run(
            ["docker", "compose", "version"], capture_output=True, check=False).returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


def test_compose_config_validates():
    cmd = _compose_command()
    if cmd is None:
        skip_or_fail("no docker compose client (apt-get install -y docker-compose)")
    result = subprocess.run([*cmd, "config", "-q"], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "SECRET_KEY": "x" * 50, "POSTGRES_PASSWORD": "y"},
                            timeout=60)
    assert result.returncode == 0, result.stderr


def test_the_image_and_the_package_carry_every_app():
    """A new app must reach the image's pip install and the wheel, not only the clone."""
    local = [app for app in settings.INSTALLED_APPS if (ROOT / app / "apps.py").is_file()]
    assert {"allocation", "health", "recommendations", "simulation", "dashboard"} <= set(local)
    dockerfile = (ROOT / "Dockerfile").read_text()
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"]["find"]["include"]
    for app in local:
        assert f"COPY {app} ./{app}" in dockerfile, app
        assert f"{app}*" in include, app


def test_every_worker_command_names_its_queues():
    """The main worker consumes every queue, the small one predictions and
    maintenance (tests/hxportal/test_queues.py shows why both)."""
    every = ",".join(settings.HX_QUEUES)
    short = f"{settings.HX_INTERACTIVE_QUEUE},{settings.HX_MAINTENANCE_QUEUE}"
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name, queues in (("worker", every), ("worker-short", short)):
        command = services[name]["command"]
        assert command[command.index("-Q") + 1] == queues, name
    run_sh = (ROOT / "scripts" / "run.sh").read_text()
    assert f"-Q {every} " in run_sh and f"-Q {short} " in run_sh
    assert f"-Q {every}\n" in (ROOT / "README.md").read_text()


def test_short_tasks_route_away_from_the_default_queue():
    from hxportal.celery import app

    def queue(task: str) -> str:
        return app.amqp.router.route({}, task)["queue"].name

    assert queue("allocation.tasks.predict_policy") == settings.HX_INTERACTIVE_QUEUE
    for task in ("hxportal.tasks.resend_unsent_runs", "hxportal.tasks.recover_stale_runs",
                 "allocation.tasks.expire_recommendations",
                 "allocation.tasks.estimate_all_machines"):
        assert queue(task) == settings.HX_MAINTENANCE_QUEUE, task
    for task in ("simulation.tasks.run_simulation", "allocation.tasks.run_estimation"):
        assert queue(task) == settings.HX_DEFAULT_QUEUE, task
