"""A scheduled board runs week after week with nobody acting: open, play, cut off, close."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from leaderboards import tasks as leaderboard_tasks
from seasons import tasks
from seasons.models import RewardTier, Season
from tests.factories import BoardFactory

pytestmark = pytest.mark.django_db

MONDAY = datetime(2026, 11, 2, tzinfo=UTC)


def beat() -> None:
    """What Celery beat runs every minute."""
    tasks.plan_seasons()
    leaderboard_tasks.close_due_seasons()
    leaderboard_tasks.remove_expired_standings()


def test_a_weekly_board_runs_for_several_weeks_without_anyone_acting(client, post_scores):
    board = BoardFactory(
        slug="weekly",
        schedule="weekly",
        season_grace_period=timedelta(hours=2),
        keep_closed_standings_days=1,
    )
    RewardTier.objects.create(board=board, rank_from=1, rank_to=1, reward_code="champion")
    expected_history = []

    for week in range(4):
        monday = MONDAY + timedelta(weeks=week)
        with time_machine.travel(monday + timedelta(hours=12), tick=False):
            beat()
            current = client.get("/api/v1/seasons?board=weekly").json()
            running = [s for s in current if s["status"] == "running"]
            assert [s["starts_at"] for s in running] == [monday.isoformat().replace("+00:00", "Z")]
            for i, player in enumerate(("ann", "bob", "cat")):
                points = 10 * (i + 1) + week
                response = post_scores(
                    {
                        "player_id": player,
                        "points": points,
                        "match_id": f"w{week}",
                        "board": "weekly",
                    }
                )
                assert response.status_code == 201
                assert response.json()["season"] == running[0]["slug"]
            expected_history.append((running[0]["slug"], 3, 10 + week))
        with time_machine.travel(monday + timedelta(days=7, hours=3), tick=False):
            beat()

    seasons = Season.objects.filter(board=board).order_by("starts_at")
    assert [s.state for s in seasons] == ["closed"] * 4 + ["open", "open"]
    with time_machine.travel(MONDAY + timedelta(weeks=4, days=3), tick=False):
        beat()
    history = client.get("/api/v1/players/ann/seasons").json()["seasons"]
    assert [(r["season"], r["final_rank"], r["points"]) for r in history] == list(
        reversed(expected_history)
    )
    first = expected_history[0][0]
    top = client.get(f"/api/v1/leaderboard/top?board=weekly&season={first}").json()
    assert [(e["rank"], e["player_id"], e["points"]) for e in top["entries"]] == [
        (1, "cat", 30),
        (2, "bob", 20),
        (3, "ann", 10),
    ]
    assert (
        client.get(f"/api/v1/seasons/{first}/rewards?board=weekly").json()["rewards"][0][
            "player_id"
        ]
        == "cat"
    )


def test_cutoff_and_grace(client, post_scores):
    board = BoardFactory(slug="weekly", schedule="weekly", season_grace_period=timedelta(hours=1))
    with time_machine.travel(MONDAY + timedelta(days=3), tick=False):
        tasks.plan_seasons()
    first, second = Season.objects.filter(board=board).order_by("starts_at")
    before_cutoff = (first.ends_at - timedelta(seconds=1)).isoformat()
    after_cutoff = first.ends_at.isoformat()

    with time_machine.travel(first.ends_at + timedelta(minutes=30), tick=False):
        late = post_scores(
            {
                "player_id": "p",
                "points": 5,
                "match_id": "late",
                "board": "weekly",
                "ended_at": before_cutoff,
            }
        )
        new = post_scores(
            {
                "player_id": "p",
                "points": 7,
                "match_id": "new",
                "board": "weekly",
                "ended_at": after_cutoff,
            }
        )
        named = post_scores(
            {
                "player_id": "p",
                "points": 9,
                "match_id": "x",
                "board": "weekly",
                "season": first.slug,
                "ended_at": after_cutoff,
            }
        )
    with time_machine.travel(first.ends_at + timedelta(hours=1, seconds=1), tick=False):
        too_late = post_scores(
            {
                "player_id": "p",
                "points": 5,
                "match_id": "too-late",
                "board": "weekly",
                "ended_at": before_cutoff,
            }
        )

    assert (late.status_code, late.json()["season"]) == (201, first.slug)
    assert (new.status_code, new.json()["season"]) == (201, second.slug)
    assert (named.status_code, named.json()["error"]["code"]) == (409, "season_closed")
    assert (too_late.status_code, too_late.json()["error"]["code"]) == (409, "season_closed")
    assert first.totals.get().points == 5
    assert second.totals.get().points == 7


@pytest.mark.parametrize(
    ("operator", "order", "expected"),
    [
        ("best", "highest_first", [("b", 50), ("a", 50), ("c", 20)]),
        ("best", "lowest_first", [("c", 20), ("a", 30), ("b", 50)]),
        ("sum", "lowest_first", [("c", 20), ("b", 50), ("a", 80)]),
    ],
)
def test_best_and_lowest_first_boards_with_ties_close_exactly(
    client, post_scores, operator, order, expected
):
    board = BoardFactory(slug="mode", schedule="weekly", score_operator=operator, sort_order=order)
    with time_machine.travel(MONDAY + timedelta(days=1), tick=False):
        tasks.plan_seasons()
    season = Season.objects.filter(board=board).order_by("starts_at").first()
    results = [("a", 30, 100), ("a", 50, 200), ("b", 50, 150), ("c", 20, 300)]
    with time_machine.travel(MONDAY + timedelta(days=2), tick=False):
        for i, (player, points, second) in enumerate(results):
            ended_at = (season.starts_at + timedelta(seconds=second)).isoformat()
            assert (
                post_scores(
                    {
                        "player_id": player,
                        "points": points,
                        "match_id": f"m{i}",
                        "board": "mode",
                        "ended_at": ended_at,
                    }
                ).status_code
                == 201
            )
        live = client.get("/api/v1/leaderboard/top?board=mode").json()["entries"]
    with time_machine.travel(season.accepts_until + timedelta(minutes=1), tick=False):
        leaderboard_tasks.close_due_seasons()
    archived = client.get(f"/api/v1/leaderboard/top?board=mode&season={season.slug}").json()

    assert [(e["player_id"], e["points"]) for e in live] == expected
    assert [(e["player_id"], e["points"]) for e in archived["entries"]] == expected
    assert Season.objects.get(pk=season.pk).state == "closed"
