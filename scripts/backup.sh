#!/usr/bin/env bash
# Back up the hxportal PostgreSQL database to a compressed custom-format dump.
#   scripts/backup.sh [DATABASE_URL] [OUTPUT]     (defaults: $DATABASE_URL, ./data/backups/...)
set -euo pipefail
url=${1:-${DATABASE_URL:?give DATABASE_URL or an argument}}
out=${2:-data/backups/hxportal-$(date -u +%Y%m%dT%H%M%SZ).dump}
mkdir -p "$(dirname "$out")"
pg_dump --format=custom --no-owner --no-privileges --dbname="$url" --file="$out"
pg_restore --list "$out" >/dev/null   # the archive is readable
echo "$out"
