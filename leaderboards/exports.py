"""Exports of a closed season's archived standings for the analytics warehouse (the command
`export_standings` and the seasons admin's actions, through seasons/archive_exports.py)."""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator
from typing import IO

import pyarrow as pa
import pyarrow.parquet as pq

from config.building_blocks.errors import Conflict
from seasons.models import Season, SeasonState

from .models import ArchivedStanding

COLUMNS = (
    "board",
    "season",
    "rank",
    "competition_rank",
    "player_id",
    "points",
    "reached_at",
    "reward_code",
    # A row a correction of the archive changed after the close, and the rank the close gave.
    "corrected",
    "closed_rank",
)
PARQUET_SCHEMA = pa.schema(
    [
        ("board", pa.string()),
        ("season", pa.string()),
        ("rank", pa.int64()),
        ("competition_rank", pa.int64()),
        ("player_id", pa.string()),
        ("points", pa.int64()),
        ("reached_at", pa.timestamp("us", tz="UTC")),
        ("reward_code", pa.string()),
        ("corrected", pa.bool_()),
        ("closed_rank", pa.int64()),
    ]
)
# Rows a Parquet row group holds, and all the export keeps in memory at once.
PARQUET_GROUP_ROWS = 500_000


def _rows(season: Season) -> Iterator[tuple]:
    """The closed season's rows for the exports, read as they are written (a Conflict at once
    for a season not closed yet)."""
    if season.state != SeasonState.CLOSED:
        raise Conflict(f"Season '{season.slug}' is not closed yet.", code="season_not_closed")
    return _closed_rows(season)


def _closed_rows(season: Season) -> Iterator[tuple]:
    rewards = dict(season.rewards.values_list("player_id", "reward_code"))
    standings = (
        ArchivedStanding.objects.filter(season=season)
        .order_by("rank")
        .values_list(
            "rank",
            "competition_rank",
            "player_id",
            "points",
            "reached_at",
            "corrected_at",
            "closed_rank",
        )
        .iterator(chunk_size=10000)
    )
    for rank, competition_rank, player_id, points, reached_at, corrected_at, closed in standings:
        yield (
            season.board.slug,
            season.slug,
            rank,
            competition_rank,
            player_id,
            points,
            reached_at,
            rewards.get(player_id, ""),
            corrected_at is not None,
            closed,
        )


def standings_export_csv(*, season: Season, out: IO[str]) -> int:
    rows, writer = _rows(season), csv.writer(out)
    writer.writerow(COLUMNS)
    written = 0
    for row in rows:
        reached_at, corrected, closed_rank = row[6], row[8], row[9]
        writer.writerow(
            (
                *row[:6],
                reached_at.isoformat(),
                row[7],
                "true" if corrected else "false",
                "" if closed_rank is None else closed_rank,
            )
        )
        written += 1
    return written


def standings_export_parquet(*, season: Season, out: IO[bytes] | str) -> int:
    """The season in Parquet, a row group at a time: the export holds one group's rows in
    memory, not the season's (100 million players' rows as Python objects would be tens of GB)."""
    rows, written = _rows(season), 0
    with pq.ParquetWriter(out, PARQUET_SCHEMA) as writer:
        while group := list(itertools.islice(rows, PARQUET_GROUP_ROWS)):
            columns = zip(*group, strict=True)
            arrays = [
                pa.array(c, type=f.type) for c, f in zip(columns, PARQUET_SCHEMA, strict=True)
            ]
            writer.write_table(pa.Table.from_arrays(arrays, schema=PARQUET_SCHEMA))
            written += len(group)
    return written
