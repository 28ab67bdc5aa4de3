"""Which PostgreSQL database this deployment's Redis standings mirror.

Season ids repeat from one database to the next (a database dropped and created again, a backup
restored into a new one, a second deployment), so Redis must not take an earlier database's
standings for this one's. The store records this identity in Redis and in each season's "whole"
marker (leaderboards/store/database.py) and trusts only what carries it.
"""

from __future__ import annotations

import logging
import threading

import psycopg
from django.db import connections

logger = logging.getLogger(__name__)

_identity: str | None = None
_lock = threading.Lock()


def database_identity() -> str:
    """The database's identity: its cluster's system identifier (set once by initdb) and its own
    oid in that cluster (new for every CREATE DATABASE). Read once per process: it cannot
    change under a running process (a new database means new settings and new processes).

    Read on a connection of its own, never Django's: the first use may come from the event loop
    (a fast read, where Django's connection may not be used) or from inside a COPY that holds
    Django's connection (the close's snapshot reads Redis while it copies), where a query on
    that connection would wait for the COPY, and the COPY for it, for ever."""
    global _identity
    if _identity is None:
        with _lock:
            if _identity is None:
                params = connections["default"].get_connection_params()
                with psycopg.connect(**params, autocommit=True) as conn:
                    row = conn.execute(
                        "SELECT (SELECT system_identifier FROM pg_control_system()), oid"
                        " FROM pg_database WHERE datname = current_database()"
                    ).fetchone()
                assert row is not None
                system, oid = row
                _identity = f"{system}.{oid}"
    return _identity


def database_identity_warm() -> None:
    """Read the identity at a process's start, so the event loop's first read does not wait on
    PostgreSQL; a database not answering yet is read at the first use instead."""
    try:
        database_identity()
    except psycopg.Error:
        logger.warning("PostgreSQL did not answer at start; its identity is read at first use")


def database_identity_forget() -> None:
    """Read the identity again at its next use (tests that point this process at another
    database, as a new process would be)."""
    global _identity
    _identity = None
