"""Sessions of the test database's server beside Django's own connection (a maintenance session,
or a second session of the test database, as another process would hold one)."""

import psycopg
from django.db import connection


def database_session(dbname: str, *, autocommit: bool = False) -> psycopg.Connection:
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        user=db["USER"],
        password=db["PASSWORD"] or None,
        dbname=dbname,
        autocommit=autocommit,
    )
