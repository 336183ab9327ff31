#!/usr/bin/env bash
# The web server of `make run` (scripts/run.sh), also started as is by
# tests/test_slow_clients.py. Waitress reads every request whole (headers and
# body) in its event loop before a thread runs Django, so a client that
# trickles its headers holds one socket, not a thread; gunicorn's sync and
# gthread workers give the connection a worker or thread first, and three such
# clients stopped the site (docs/operations.md, "Slow clients").
# Listens on 127.0.0.1:${PORT:-8000}; bodies above 20 MiB are refused here, as
# the compose deployment's nginx does (the app's own limit, HX_MAX_BODY_BYTES,
# is 16 MiB by default).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/waitress-serve --listen="127.0.0.1:${PORT:-8000}" --threads=8 \
  --connection-limit=500 --asyncore-use-poll --channel-timeout=60 \
  --max-request-body-size=20971520 --ident=hxportal hxportal.wsgi:application
