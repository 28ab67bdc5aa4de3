"""The archive's partitions: each season the close archives gets a table of its own, filled with
no index, indexed once full, then attached to the archive (ArchivedStanding's table,
partitioned by season in migration 0007).

Why: inserting a season into one indexed table filled its four B-trees row by row, one of them
in random order whichever way the rows came; at 100 million players that was 22 of the close's 36
minutes. A bare table takes the rows as fast as the disk writes them, and an index built on a
full table sorts its keys once (with parallel workers). A season archived again (a snapshot
that failed its check) drops its own table, not rows out of a shared one.

Each step is its own transaction in the close (closing._snapshot): the partition is dropped,
then built and indexed, then attached, so the archive is never left with part of a season and
no step locks the whole archive for longer than its catalogue change. (Building a table takes
no lock on the archive at all; attaching takes one that lets reads and writes through.)
"""

from __future__ import annotations

from typing import Any

from .archive_rules import ARCHIVE_TABLES

ARCHIVE = ARCHIVE_TABLES.standings
# Memory for each index build's sort (per build, of the close's own session): at 100 million
# players a key sorts in a few passes instead of hundreds.
INDEX_SORT_MEMORY_MB = 512
# How long the drop of a season's earlier copy waits for the archive's lock (partition_drop).
DROP_LOCK_WAIT = "10s"


def partition_name(season_id: int) -> str:
    return f"archive_season_{int(season_id)}"


def partition_drop(cursor: Any, *, season_id: int) -> None:
    """The season's archived rows go: its own partition, and any row in the default partition
    (an archive written before the season had one). Dropping an attached partition locks the
    whole archive, after waiting for every read of it under way: a read that long (an export)
    fails this close's try instead, which the next run repeats, rather than holding every read
    of the archive behind the lock meanwhile."""
    cursor.execute(f"SET LOCAL lock_timeout = '{DROP_LOCK_WAIT}'")
    cursor.execute(f"DROP TABLE IF EXISTS {partition_name(season_id)}")
    cursor.execute(f"DELETE FROM {ARCHIVE} WHERE season_id = %s", [season_id])  # noqa: S608


def partition_create(cursor: Any, *, season_id: int) -> str:
    """A bare table shaped as the archive, for the season's rows; returns its name. Its check
    of the season lets the attach skip reading it back."""
    name = partition_name(season_id)
    cursor.execute(f"CREATE TABLE {name} (LIKE {ARCHIVE} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
    cursor.execute(
        f"ALTER TABLE {name} ADD CONSTRAINT {name}_season CHECK (season_id = {int(season_id)})"
    )
    return name


def partition_index(cursor: Any, *, name: str) -> None:
    """The archive's keys and indexes on a filled partition (the ones migration 0007 put on the
    archive: the attach takes them as the partition's part of each)."""
    # Raised for this transaction only, and only where the server gives less.
    cursor.execute(
        "SELECT set_config('maintenance_work_mem', %s, true) FROM pg_settings"
        " WHERE name = 'maintenance_work_mem' AND setting::bigint * 1024 < %s",
        [f"{INDEX_SORT_MEMORY_MB}MB", INDEX_SORT_MEMORY_MB * 2**20],
    )
    cursor.execute(
        f"ALTER TABLE {name} ADD CONSTRAINT {name}_pkey PRIMARY KEY (id, season_id),"
        f" ADD CONSTRAINT {name}_unique_player UNIQUE (player_id, season_id)"
    )
    cursor.execute(f"CREATE UNIQUE INDEX {name}_unique_rank ON {name} (season_id DESC, rank)")


def partition_attach(cursor: Any, *, season_id: int) -> None:
    """The filled, indexed partition joins the archive; its statistics are taken at once, so
    the close's check and the first reads are planned on them."""
    name = partition_name(season_id)
    cursor.execute(
        f"ALTER TABLE {ARCHIVE} ATTACH PARTITION {name} FOR VALUES IN ({int(season_id)})"
    )
    cursor.execute(f"ANALYZE {name}")
