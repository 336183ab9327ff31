#!/usr/bin/env bash
# `make run` with a real Slurm: the demo machine (hx: 8x8 switches, c = 8, 512 nodes)
# becomes a local Slurm cluster on this host (manage.py hx_slurm_cluster; needs root and
# Debian's slurmctld, slurmd, slurm-client and munge), then the dashboard, worker and
# beat start as with `make run`, with SLURM_CONF exported. Ctrl-C stops everything.
#   HX_SLURM_MACHINE=hx   the machine to run
#   HX_SLURM_ARGS=...     more options for `hx_slurm_cluster start` (--base-port, --accounting)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "make run-slurm starts Slurm's daemons as root: run it as root (make run needs no root)." >&2
  exit 1
fi
bash scripts/setup.sh
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-hxportal.settings.local}
MACHINE=${HX_SLURM_MACHINE:-hx}
PY=.venv/bin/python
$PY manage.py migrate --noinput
$PY manage.py hx_demo --history-days 0  # Slurm gives the machine its real history
# A cluster left over from a run that was killed outright is this script's own: stop it.
$PY manage.py hx_slurm_cluster stop "$MACHINE" >/dev/null 2>&1 || true
stop_slurm() { $PY manage.py hx_slurm_cluster stop "$MACHINE" || true; }
trap stop_slurm EXIT
# shellcheck disable=SC2086  # HX_SLURM_ARGS is a list of options
exports=$($PY manage.py hx_slurm_cluster start "$MACHINE" ${HX_SLURM_ARGS:-})
eval "$exports"
# Link the machine: beat syncs it every minute, drains and accepts go to Slurm.
$PY manage.py hx_slurm_sync "$MACHINE" --link
echo "Slurm runs $MACHINE: $exports   (then: sinfo, squeue, sbatch -w ...)"
bash scripts/run.sh
