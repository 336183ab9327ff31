#!/usr/bin/env bash
# Set everything up and run the dashboard with a worker, the beat scheduler and
# the demo machine. Zero-setup defaults: SQLite and a filesystem broker in ./data
# (set DATABASE_URL / CELERY_BROKER_URL to use PostgreSQL / Redis instead).
#
# Stopping (Ctrl+C, or SIGTERM to this script) takes at most HX_STOP_SECONDS
# (default 15): the web server and beat get SIGTERM, the worker SIGQUIT, Celery's
# cold shutdown: a running task gets CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT
# (HX_WORKER_SHUTDOWN_GRACE, 3 s) to finish, then it is cancelled and its message
# goes back to the broker (late acks), so the next start runs it again. A warm
# shutdown (SIGTERM) would wait for the task, up to its hour-long time limit.
# Whatever is still running after HX_STOP_SECONDS is killed. If one process ends
# by itself, the script names it and stops the others the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-hxportal.settings.local}
export PORT=${PORT:-8000}
LOGS=${HX_DATA_DIR:-data}
STOP_SECONDS=${HX_STOP_SECONDS:-15}
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py hx_demo
.venv/bin/python manage.py collectstatic --noinput -v0
mkdir -p "$LOGS"

pids=()
declare -A names=()
stop() {
  trap - EXIT INT TERM
  kill -TERM "${web:-}" "${beat:-}" 2>/dev/null || true
  kill -QUIT "${worker:-}" "${short:-}" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_SECONDS))
  while [ ${#pids[@]} -gt 0 ] && [ $SECONDS -lt $deadline ] \
      && kill -0 "${pids[@]}" 2>/dev/null; do
    sleep 0.2
  done
  for pid in "${pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      echo "still running after ${STOP_SECONDS} s, killing ${names[$pid]:-process} (pid $pid; its log is in ${LOGS}/)" >&2
      pkill -KILL -P "$pid" 2>/dev/null || true
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  wait 2>/dev/null || true
}
on_signal() { stop; exit 0; }
trap stop EXIT
trap on_signal INT TERM

# The main worker takes every queue; the small one only predictions and
# maintenance, so both are answered while the main one runs long simulations.
.venv/bin/celery -A hxportal worker --loglevel=INFO --concurrency=2 -n main@%h \
  -Q celery,hx-interactive,hx-maintenance >"$LOGS/worker.log" 2>&1 &
worker=$!
pids+=("$worker")
names[$worker]="the main worker"
.venv/bin/celery -A hxportal worker --loglevel=INFO --concurrency=1 -n short@%h \
  -Q hx-interactive,hx-maintenance >"$LOGS/worker-short.log" 2>&1 &
short=$!
pids+=("$short")
names[$short]="the short worker"
.venv/bin/celery -A hxportal beat --loglevel=INFO --schedule "$LOGS/celerybeat-schedule" \
  >"$LOGS/beat.log" 2>&1 &
beat=$!
pids+=("$beat")
names[$beat]="beat"
echo "hxportal on http://127.0.0.1:${PORT}/  (sign in as admin / admin; logs in ${LOGS}/)"
bash scripts/web.sh &
web=$!
pids+=("$web")
names[$web]="the web server"
# Until one of them stops (or a signal arrives); then say which and stop the others.
status=0
ended=
wait -n -p ended "${pids[@]}" || status=$?
if [ -n "$ended" ]; then
  echo "${names[$ended]:-a process} (pid $ended) ended with status ${status};" \
    "stopping the others (its log is in ${LOGS}/)" >&2
fi
exit "$status"
