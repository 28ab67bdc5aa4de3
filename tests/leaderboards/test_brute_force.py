"""Ranks, top and around agree with a brute-force model over thousands of random results."""

import random
from datetime import timedelta

import pytest

from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

BOARD_RULES = [
    ("global", "sum", "highest_first"),
    ("best-high", "best", "highest_first"),
    ("best-low", "best", "lowest_first"),
    ("sum-low", "sum", "lowest_first"),
]


def model_standings(results, operator, lowest_first):
    """player -> (points, reached_second), from the results alone."""
    standings = {}
    for player, points, second in results:
        if player not in standings:
            standings[player] = (points, second)
            continue
        have, when = standings[player]
        if operator == "sum":
            standings[player] = (have + points, max(when, second))
        else:
            better = points < have if lowest_first else points > have
            if better:
                standings[player] = (points, second)
            elif points == have:
                standings[player] = (have, min(when, second))
    return standings


def model_order(standings, lowest_first):
    def key(item):
        player, (points, second) = item
        # better points first, then earlier second, then player_id descending
        return (points if lowest_first else -points, second, [-ord(c) for c in player])

    return [player for player, _ in sorted(standings.items(), key=key)]


@pytest.mark.parametrize(("slug", "operator", "sort_order"), BOARD_RULES)
def test_reads_match_the_model(client, post_scores, db, slug, operator, sort_order):
    rng = random.Random(f"{slug}-2026")
    board = BoardFactory(slug=slug, score_operator=operator, sort_order=sort_order)
    season = SeasonFactory(board=board, slug="s1")
    lowest_first = sort_order == "lowest_first"
    players = [f"p{i:03d}" for i in range(300)]
    results = [
        (rng.choice(players), rng.choice([1, 2, 3, 5, 8, 13, 50]), rng.randrange(0, 40))
        for _ in range(2500)
    ]
    body = [
        {
            "player_id": player,
            "points": points,
            "match_id": f"m{i}",
            "board": slug,
            "ended_at": (season.starts_at + timedelta(seconds=second)).isoformat(),
        }
        for i, (player, points, second) in enumerate(results)
    ]
    for start in range(0, len(body), 1000):
        assert post_scores(body[start : start + 1000]).status_code == 200

    standings = model_standings(results, operator, lowest_first)
    order = model_order(standings, lowest_first)

    top = []
    for offset in range(0, len(order), 100):
        page = client.get(f"/api/v1/leaderboard/top?board={slug}&limit=100&offset={offset}")
        top += page.json()["entries"]
    assert [(e["rank"], e["player_id"], e["points"]) for e in top] == [
        (rank, player, standings[player][0]) for rank, player in enumerate(order, start=1)
    ]

    competition = client.get(
        f"/api/v1/leaderboard/top?board={slug}&limit=100&offset=37&rank_style=competition"
    ).json()["entries"]
    for entry in competition:
        better = sum(
            1
            for p in order
            if (
                standings[p][0] < entry["points"]
                if lowest_first
                else standings[p][0] > entry["points"]
            )
        )
        assert entry["rank"] == better + 1

    for player in rng.sample(order, 25):
        rank = order.index(player) + 1
        mine = client.get(f"/api/v1/leaderboard/players/{player}?board={slug}").json()
        assert (mine["rank"], mine["points"], mine["total_players"]) == (
            rank,
            standings[player][0],
            len(order),
        )
        around = client.get(f"/api/v1/leaderboard/players/{player}/around?board={slug}&n=3")
        first = max(1, rank - 3)
        assert [e["player_id"] for e in around.json()["entries"]] == order[first - 1 : rank + 3]

    friends = rng.sample(order, 50)
    ranks = client.post(
        f"/api/v1/leaderboard/ranks?board={slug}", {"player_ids": friends}, format="json"
    ).json()["entries"]
    assert [e["rank"] for e in ranks] == [order.index(p) + 1 for p in friends]
