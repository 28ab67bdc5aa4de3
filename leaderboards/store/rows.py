"""What the reads answer (Standing, BatchRead) and how a reply's rows become standings: shared by
the one-set reads (single.py), the sharded planner (sharded.py) and the reads themselves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from seasons.scoring import TIME_SLOTS


@dataclass(frozen=True, slots=True)
class Standing:
    player_id: str
    rank: int  # 1-based ordinal rank
    composite: int
    # Members with strictly better points (competition rank - 1); None when the read did not
    # ask for competition ranks.
    better_count: int | None


# Players one script call ranks in a batch read: a long script blocks every other client.
BATCH_CHUNK = 1000


@dataclass(frozen=True, slots=True)
class BatchRead:
    size: int
    top: list[Standing]
    # (1-based ordinal rank, composite) of each player asked, in order; None when unranked.
    players: list[tuple[int, int] | None]
    arounds: list[list[Standing]]  # one contiguous window per request, [] when unranked


Commands = list[tuple[Any, ...]]


Row = tuple[str, int]  # (player_id, composite)
RankedRow = tuple[int, int, str, int]  # (rank, competition rank, player_id, composite)


def flat_rows(flat: Sequence[str], first_rank: int) -> list[tuple[str, int, int]]:
    return [(flat[i], first_rank + i // 2, int(float(flat[i + 1]))) for i in range(0, len(flat), 2)]


def with_better(rows: list[tuple[str, int, int]], first_better: int | None) -> list[Standing]:
    """Competition bases for a contiguous run of ranks, from the first row's base alone (None
    throughout when the read did not ask for them)."""
    standings: list[Standing] = []
    previous: Standing | None = None
    for player_id, rank, composite in rows:
        if first_better is None:
            better = None
        elif previous is None:
            better = first_better
        elif composite // TIME_SLOTS == previous.composite // TIME_SLOTS:
            better = previous.better_count
        else:
            better = rank - 1
        previous = Standing(player_id, rank, composite, better)
        standings.append(previous)
    return standings


def flag(competition: bool) -> str:
    return "1" if competition else "0"


def int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


def pairs(flat: Sequence[Any]) -> list[Row]:
    """(player_id, composite) rows of a WITHSCORES reply, flat or paired."""
    if flat and isinstance(flat[0], (list, tuple)):
        return [(member, int(float(score))) for member, score in flat]
    return [(flat[i], int(float(flat[i + 1]))) for i in range(0, len(flat), 2)]
