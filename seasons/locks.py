"""One runner per season for the long jobs (closing a season, rebuilding its board).

A PostgreSQL session-level advisory lock: held across the job's many transactions, taken again
freely by the same job (closing rebuilds inside itself), and released by PostgreSQL when the
job's connection ends, so a worker that dies mid-job frees it at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

# The lock space of season jobs (pg_try_advisory_lock(int, int) takes the season id second).
SEASON_JOBS = 74_669


class SeasonBusy(Exception):
    """Another worker is running a long job on this season right now."""


@contextmanager
def season_job(season_id: int) -> Iterator[None]:
    """Run the block as the season's only long job; raises SeasonBusy if one is running."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [SEASON_JOBS, season_id])
        (acquired,) = cursor.fetchone()
    if not acquired:
        raise SeasonBusy(f"season {season_id} is being closed or rebuilt by another worker")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [SEASON_JOBS, season_id])
