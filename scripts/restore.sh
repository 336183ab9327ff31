#!/usr/bin/env bash
# Restore a dump made by scripts/backup.sh into an EMPTY database (created if missing).
#   scripts/restore.sh DUMP TARGET_DATABASE_URL
set -euo pipefail
dump=${1:?dump file}
target=${2:?target DATABASE_URL}
base=${target%/*}
name=${target##*/}
if ! psql "$base/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'" | grep -q 1; then
  psql "$base/postgres" -qc "CREATE DATABASE \"$name\""
fi
pg_restore --no-owner --no-privileges --exit-on-error --single-transaction \
  --dbname="$target" "$dump"
echo "restored $dump into $name"
