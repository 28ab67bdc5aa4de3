"""Rank events on a socket following a player: who overtook them, the top-N thresholds they
crossed and the reward tier they would get now (docs/websocket.md, "Rank events")."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from leaderboards.rewards import _rewards_of
from seasons.models import Board, RewardTier
from seasons.reward_tiers import tier_edges, tier_for_rank
from tests.leaderboards.test_live import WAIT, open_socket, scores  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


def _batch(server: Any, **points: int) -> None:
    """One POST of several results: one mirror write, so one tick sees all their moves."""
    body = [
        {"player_id": player_id, "points": value, "match_id": f"b-{player_id}-{value}"}
        for player_id, value in points.items()
    ]
    response = server.post("/api/v1/scores", body, format="json")
    assert response.status_code == 200, response.json()


async def _until(communicator: Any, kind: str) -> tuple[dict[str, Any], list[str]]:
    """The next message of `kind`, and the kinds of those before it."""
    before = []
    while True:
        message = await communicator.receive_json_from(timeout=WAIT)
        if message["type"] == kind:
            return message, before
        before.append(message["type"])


def _without_seq(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "seq"}


def test_overtaken_names_the_five_nearest_passers_nearest_first(server, scores):  # noqa: F811
    scores(p=100, far=5000)

    async def scenario() -> tuple[dict[str, Any], list[str]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=p")
        # Seven players come past p in one write; one stays below.
        await sync_to_async(_batch)(
            server, a=110, b=120, c=130, d=140, e=150, f=160, g=170, below=90
        )
        overtaken, before = await _until(communicator, "overtaken")
        await communicator.disconnect()
        return overtaken, before

    overtaken, before = async_to_sync(scenario)()

    assert before == ["player"]
    assert _without_seq(overtaken) == {
        "type": "overtaken",
        "board": "global",
        "season": "s1",
        "player_id": "p",
        "rank": 9,
        "by": [
            {"player_id": "a", "display_name": "a", "rank": 8, "points": 110},
            {"player_id": "b", "display_name": "b", "rank": 7, "points": 120},
            {"player_id": "c", "display_name": "c", "rank": 6, "points": 130},
            {"player_id": "d", "display_name": "d", "rank": 5, "points": 140},
            {"player_id": "e", "display_name": "e", "rank": 4, "points": 150},
        ],
    }


def test_a_climb_behind_the_player_or_the_players_own_climb_is_no_overtaking(scores):  # noqa: F811
    scores(p=200, q=100, r=300)

    async def scenario() -> list[str]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=p")
        await sync_to_async(scores)(q=50)  # q: 150, still behind p
        quiet = await communicator.receive_nothing(timeout=0.6)
        await sync_to_async(scores)(p=500)  # p: 700, past r: p's own climb
        kinds = [(await communicator.receive_json_from(timeout=WAIT))["type"] for _ in range(2)]
        kinds.append("quiet" if await communicator.receive_nothing(timeout=0.6) else "more")
        await communicator.disconnect()
        return ["quiet" if quiet else "more", *kinds]

    # The climb to first crosses the top-1 threshold; nobody overtook p.
    assert async_to_sync(scenario)() == ["quiet", "player", "threshold", "quiet"]


def test_thresholds_of_the_board_and_of_its_reward_tiers_are_told_both_ways(scores, season):  # noqa: F811
    Board.objects.filter(pk=season.board_id).update(rank_thresholds=[1, 3])
    RewardTier.objects.create(board=season.board, reward_code="podium", rank_from=1, rank_to=2)
    scores(p1=400, p2=300, p3=200, p=100)

    async def scenario() -> list[dict[str, Any]]:
        communicator, _ = await open_socket("/ws/v1/leaderboard/global/?top=0&player_id=p")
        await sync_to_async(scores)(p=250)  # p: 350, from 4th to 2nd
        got = [await communicator.receive_json_from(timeout=WAIT) for _ in range(4)]
        await sync_to_async(scores)(x=1000, y=900)  # p: 4th again
        got += [await communicator.receive_json_from(timeout=WAIT) for _ in range(5)]
        await communicator.disconnect()
        return got

    got = async_to_sync(scenario)()

    climb = [(m["type"], m.get("top"), m.get("entered"), m["rank"]) for m in got[:4]]
    assert climb == [
        ("player", None, None, 2),
        ("threshold", 2, True, 2),  # the podium tier's edge
        ("threshold", 3, True, 2),
        ("tier", None, None, 2),
    ]
    assert _without_seq(got[3]) == {
        "type": "tier",
        "board": "global",
        "season": "s1",
        "player_id": "p",
        "rank": 2,
        "tier": {"reward_code": "podium", "rank_from": 1, "rank_to": 2, "top_percent": None},
        "previous": None,
    }
    fall = {(m["type"], m.get("top"), m.get("entered")) for m in got[4:]}
    assert fall == {
        ("player", None, None),
        ("overtaken", None, None),
        ("threshold", 2, False),
        ("threshold", 3, False),
        ("tier", None, None),
    }
    tier = next(m for m in got[4:] if m["type"] == "tier")
    assert (tier["rank"], tier["tier"], tier["previous"]["reward_code"]) == (4, None, "podium")


def test_the_live_tier_rule_is_the_closes_rule(season):
    # Overlapping ranges and percentages: the close's SQL picks one tier per rank; so must the
    # live rule, for every rank of boards of several sizes.
    board = season.board
    tiers = [
        RewardTier.objects.create(board=board, reward_code="r1-100", rank_from=1, rank_to=100),
        RewardTier.objects.create(board=board, reward_code="r5-10", rank_from=5, rank_to=10),
        RewardTier.objects.create(board=board, reward_code="r5-8", rank_from=5, rank_to=8),
        RewardTier.objects.create(board=board, reward_code="p10", top_percent=Decimal("10")),
        RewardTier.objects.create(board=board, reward_code="p33", top_percent=Decimal("33.33")),
        RewardTier.objects.create(board=board, reward_code="p100", top_percent=Decimal("100")),
    ]
    for players in (1, 7, 29, 150, 1001):
        ranks = list(range(1, players + 1))
        by_sql = _rewards_of(board.pk, players, [(str(rank), rank) for rank in ranks])
        by_python = {
            str(rank): tier.reward_code
            for rank in ranks
            if (tier := tier_for_rank(tiers, rank, players)) is not None
        }
        assert by_python == {player: code for player, (_, code) in by_sql.items()}, players
    assert tier_edges(tiers, 29) == {100, 10, 8, 3, 29}


def test_a_boards_thresholds_are_checked_in_the_form_and_in_the_database(season):
    board = Board.objects.get(pk=season.board_id)
    assert board.rank_thresholds == [1, 10, 100]
    board.rank_thresholds = [10, 1, 10]
    with pytest.raises(ValidationError) as refused:
        board.full_clean()
    assert "rank_thresholds" in refused.value.message_dict
    for bad in ([0], [-5], list(range(1, 12))):
        with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "UPDATE seasons_board SET rank_thresholds = %s WHERE id = %s", [bad, board.pk]
            )
    assert Board.objects.get(pk=board.pk).rank_thresholds == [1, 10, 100]
