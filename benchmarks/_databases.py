"""Scratch databases for the benchmark scripts (imported from the same folder)."""

from __future__ import annotations


def fresh_postgres(base_url: str, name: str) -> str:
    """Drop and create database ``name`` on the server of ``base_url``; return its URL."""
    import psycopg

    admin = base_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return base_url.rsplit("/", 1)[0] + f"/{name}"
