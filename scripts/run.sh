#!/usr/bin/env bash
# Set everything up and run the dashboard with a worker, the beat scheduler and
# the demo machine. Zero-setup defaults: SQLite and a filesystem broker in ./data
# (set DATABASE_URL / CELERY_BROKER_URL to use PostgreSQL / Redis instead).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-hxportal.settings.local}
PORT=${PORT:-8000}
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py hx_demo
.venv/bin/python manage.py collectstatic --noinput -v0
mkdir -p data
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
# The main worker takes every queue; the small one only predictions and
# maintenance, so both are answered while the main one runs long simulations.
.venv/bin/celery -A hxportal worker --loglevel=INFO --concurrency=2 -n main@%h \
  -Q celery,hx-interactive,hx-maintenance >data/worker.log 2>&1 &
pids+=($!)
.venv/bin/celery -A hxportal worker --loglevel=INFO --concurrency=1 -n short@%h \
  -Q hx-interactive,hx-maintenance >data/worker-short.log 2>&1 &
pids+=($!)
.venv/bin/celery -A hxportal beat --loglevel=INFO --schedule data/celerybeat-schedule \
  >data/beat.log 2>&1 &
pids+=($!)
echo "hxportal on http://127.0.0.1:${PORT}/  (sign in as admin / admin; logs in data/)"
.venv/bin/gunicorn hxportal.wsgi:application --bind "127.0.0.1:${PORT}" --workers 2 \
  --access-logfile - &
pids+=($!)
wait -n "${pids[@]}"
