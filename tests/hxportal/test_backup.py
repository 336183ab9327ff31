"""The documented backup and restore procedure round-trips the database."""

from __future__ import annotations

import subprocess
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from allocation.services import jobs
from tests.workers import current_database_url

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

SNAPSHOT = {
    "rows": "SELECT relname, n_live_tup FROM pg_stat_user_tables ORDER BY relname",
    "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                   "FROM pg_constraint WHERE connamespace = 'public'::regnamespace "
                   "ORDER BY 1, 2",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes "
               "WHERE schemaname = 'public' ORDER BY 1, 2",
}


def snapshot(url: str) -> dict:
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")]
        counts = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]  # noqa: S608
                  for t in tables}
        return {"counts": counts,
                **{k: conn.execute(q).fetchall() for k, q in SNAPSHOT.items() if k != "rows"}}


def test_backup_then_restore_into_scratch_database(on_postgres, machine, users, tmp_path):
    jobs.submit_job(owner=users["operator"], machine=machine, name="kept", node_count=16,
                    pattern="uniform", policy="diagonal")
    source = current_database_url()
    target = source.rsplit("/", 1)[0] + f"/{connection.settings_dict['NAME']}_restore_check"
    admin = source.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{target.rsplit("/", 1)[1]}"')
    dump = tmp_path / "hx.dump"
    subprocess.run(["bash", "scripts/backup.sh", source, str(dump)], cwd=ROOT, check=True,
                   capture_output=True, timeout=120)
    subprocess.run(["bash", "scripts/restore.sh", str(dump), target], cwd=ROOT, check=True,
                   capture_output=True, timeout=120)
    try:
        before, after = snapshot(source), snapshot(target)
        assert after["counts"] == before["counts"]
        assert after["counts"]["allocation_node"] == 64
        assert after["counts"]["allocation_allocation"] == 16
        assert after["constraints"] == before["constraints"]
        assert after["indexes"] == before["indexes"]
        assert any("allocation_one_active_per_node" in row[1] for row in after["indexes"])
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{target.rsplit("/", 1)[1]}" WITH (FORCE)')
