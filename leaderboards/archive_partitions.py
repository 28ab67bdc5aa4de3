"""The archive's partitions: each season the close archives gets a table of its own, filled with
no index, indexed once full, then attached to the archive (ArchivedStanding's table,
partitioned by season in migration 0007).

Why: inserting a season into one indexed table filled its four B-trees row by row, one of them
in random order whichever way the rows came; at 100 million players that was 22 of the close's
36 minutes. A bare table takes the rows as fast as the disk writes them, and an index built on
a full table sorts its keys once (with parallel workers). A season archived again (a snapshot
that failed its check) drops its own table, not rows out of a shared one.

The close (closing.py) takes four transactions: the earlier copy dropped and the bare table
made; the table filled (then checked); indexed and analyzed (neither takes a lock on the
archive); attached. So the archive is never left with part of a season, nor with a copy that
failed its check. Locks on the archive:
- the attach takes one that lets reads and writes of the archive through, and an exclusive one
  on the default partition (empty), which reads across seasons (a player's history) touch: it
  waits for those under way, briefly, and they wait for it, a few milliseconds;
- dropping an attached copy (only when a season is archived again) locks the whole archive:
  it waits at most DROP_LOCK_WAIT for reads under way (an export of another season can take
  minutes), then gives up and the close's next run tries again.
Every closed season adds a partition: a read across seasons plans and locks each one (raise
`max_locks_per_transaction` past a few thousand seasons).
"""

from __future__ import annotations

from typing import Any

from .archive_rules import ARCHIVE_TABLES

ARCHIVE = ARCHIVE_TABLES.standings
# Memory for each index build's sort (per build, of the close's own session): at 100 million
# players a key sorts in a few passes instead of hundreds.
INDEX_SORT_MEMORY_MB = 512
# How long the drop of a season's earlier copy waits for the archive's lock (partition_drop):
# reads of the archive queue behind the waiting drop meanwhile.
DROP_LOCK_WAIT = "2s"


def partition_name(season_id: int) -> str:
    return f"archive_season_{int(season_id)}"


def partition_drop(cursor: Any, *, season_id: int) -> None:
    """The season's archived rows go: its own partition, and any row in the default partition
    (an archive written before the season had one). Waits at most DROP_LOCK_WAIT for the
    archive's lock (an attached partition's drop locks the whole archive), then raises."""
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
    """The archive's keys and indexes on a filled partition, and its statistics (so the close's
    check and the first reads are planned on them). They are the ones migration 0007 put on the
    archive and the model declares: the attach takes each as the partition's part of the
    archive's (one missing would be built by the attach itself, holding its locks; a test
    checks they match)."""
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
    cursor.execute(f"ANALYZE {name}")


def partition_attach(cursor: Any, *, season_id: int) -> None:
    """The filled, indexed partition joins the archive."""
    name = partition_name(season_id)
    cursor.execute(
        f"ALTER TABLE {ARCHIVE} ATTACH PARTITION {name} FOR VALUES IN ({int(season_id)})"
    )
