"""Exports of a closed season's archived standings for the analytics warehouse (the command
`export_standings` and the seasons admin's actions, through seasons/archive_exports.py)."""

from __future__ import annotations

import csv
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


def _rows(season: Season) -> Iterator[tuple]:
    if season.state != SeasonState.CLOSED:
        raise Conflict(f"Season '{season.slug}' is not closed yet.", code="season_not_closed")
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
    writer = csv.writer(out)
    writer.writerow(COLUMNS)
    written = 0
    for row in _rows(season):
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
    columns: list[list] = [[] for _ in COLUMNS]
    for row in _rows(season):
        for column, value in zip(columns, row, strict=True):
            column.append(value)
    schema = pa.schema(
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
    table = pa.Table.from_arrays(
        [pa.array(c, type=f.type) for c, f in zip(columns, schema, strict=True)], schema=schema
    )
    pq.write_table(table, out)
    return table.num_rows
