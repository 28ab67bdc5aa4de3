"""Test helpers for a stack of real processes serving the test database pytest-django created
(tests/pages, tests/clients): its address for their DATABASE_URL, and a count of their sessions,
which must end before pytest-django may drop the database."""

from __future__ import annotations

from urllib.parse import quote

from django.db import connection


def database_url() -> str:
    db = connection.settings_dict
    user = quote(db.get("USER") or "postgres")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


def other_sessions() -> int:
    """Sessions on the test database other than this process's own."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return int(cursor.fetchone()[0])
