"""Test helpers for a stack of real processes serving the test database pytest-django created
(tests/pages, tests/clients): its address for their DATABASE_URL, and a count of their sessions,
which must end before pytest-django may drop the database. Each stack names its sessions
(PostgreSQL's application_name), so a stack counts its own: two stacks may serve one worker's
database at once, and each ends while the other still runs."""

from __future__ import annotations

from urllib.parse import quote

from django.db import connection


def database_url(stack: str) -> str:
    """The test database's address for the processes of `stack`, their sessions named so."""
    db = connection.settings_dict
    user = quote(db.get("USER") or "postgres")
    password = f":{quote(db['PASSWORD'])}" if db.get("PASSWORD") else ""
    host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}?application_name={quote(stack)}"


def stack_sessions(stack: str) -> int:
    """The sessions `stack`'s processes hold on the test database."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND application_name = %s",
            [stack],
        )
        return int(cursor.fetchone()[0])
