"""The scenario both clients play against the service (tests/clients), and what it is answered.

A game server posts a batch of three results of one match (bo 80, ana 50, cy 30) to the
running season `s1` of the `global` board, reads ana's rank, the top and the players around
ana, stores ana's friends (bo, and someone who has not played yet) and reads ana's friends view;
then posts ana's result again with other points (409 `conflict`) and posts the same result
until the key's rate runs out (429 `rate_limited` with Retry-After). The players' ids start
with each client's prefix, so the two runs can never be confused.
"""

from __future__ import annotations

from typing import Any

BOARD = "global"
SEASON = "s1"
MIRROR_SECONDS = 30
# Far more posts than the service's rate (tests/clients/conftest.py) lets through in a window.
MAX_POSTS = 100


def players(prefix: str) -> tuple[str, str, str]:
    """ana, bo and cy, with the client's prefix."""
    return f"{prefix}-ana", f"{prefix}-bo", f"{prefix}-cy"


def batch(prefix: str) -> list[dict[str, Any]]:
    ana, bo, cy = players(prefix)
    match = f"{prefix}-m1"
    return [
        {"player_id": ana, "points": 50, "match_id": match},
        {"player_id": bo, "points": 80, "match_id": match},
        {"player_id": cy, "points": 30, "match_id": match},
    ]


def _entry(rank: int, player_id: str, points: int) -> dict[str, Any]:
    # Players without a profile are shown by their id, without an avatar.
    return {
        "rank": rank,
        "player_id": player_id,
        "display_name": player_id,
        "avatar_url": "",
        "points": points,
    }


def _error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": None}}


def answers(prefix: str, *, retry_after: int) -> dict[str, Any]:
    """Every answer of the scenario (the top's `as_of` left out: it is the read's time), the
    429 telling to retry after `retry_after` seconds (the rest of the rate's window)."""
    ana, bo, cy = players(prefix)
    where = {"board": BOARD, "season": SEASON}
    standing = {**where, "rank": 2, "points": 50, "total_players": 3, "percentile": 66.67}
    return {
        "batch": [
            {"status": "accepted", **item, **where, "total_points": item["points"]}
            for item in batch(prefix)
        ],
        "rank": {"player_id": ana, **standing},
        "top": {
            **where,
            "total_players": 3,
            "entries": [_entry(1, bo, 80), _entry(2, ana, 50), _entry(3, cy, 30)],
        },
        "around": {
            "player_id": ana,
            **standing,
            "entries": [_entry(1, bo, 80), _entry(2, ana, 50), _entry(3, cy, 30)],
        },
        "friends": {"player_id": ana, "friends": [bo, f"{prefix}-not-played-yet"]},
        "friends_view": {
            "player_id": ana,
            **where,
            # The board's, against which each friend's global_rank is read.
            "total_players": 3,
            "entries": [
                {**_entry(1, bo, 80), "global_rank": 1},
                {**_entry(2, ana, 50), "global_rank": 2},
            ],
            "unranked": [f"{prefix}-not-played-yet"],
        },
        "conflict": {
            "status": 409,
            "body": _error(
                "conflict",
                f"Match '{prefix}-m1' already has a different result (50 points)"
                f" for player '{ana}'.",
            ),
        },
        "rate_limited": {
            "status": 429,
            "body": _error(
                "rate_limited",
                # DRF says "1 second." in the singular, so the key's wait decides the word
                f"Request was throttled. Expected available in {retry_after}"
                f" second{'' if retry_after == 1 else 's'}.",
            ),
        },
    }
