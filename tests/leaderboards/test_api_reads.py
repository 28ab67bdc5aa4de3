"""Public reads: top, a player's rank, around-me, many ranks; ties and rank styles."""

from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboards import closing
from matches.models import Player
from tests.factories import BoardFactory, SeasonFactory
from tests.leaderboards.conftest import at

pytestmark = pytest.mark.django_db


def test_top_lists_ranks_from_one_with_profiles(client, board):
    Player.objects.filter(player_id="p1").update(display_name="Ada", avatar_url="https://x/a.png")

    response = client.get("/api/v1/leaderboard/top?limit=3")

    assert response.status_code == 200
    body = response.json()
    assert (body["board"], body["season"]) == ("global", "s1")
    assert "as_of" in body
    assert body["entries"] == [
        {
            "rank": 1,
            "player_id": "p1",
            "display_name": "Ada",
            "avatar_url": "https://x/a.png",
            "points": 30,
        },
        {"rank": 2, "player_id": "p3", "display_name": "p3", "avatar_url": "", "points": 20},
        {"rank": 3, "player_id": "p2", "display_name": "p2", "avatar_url": "", "points": 20},
    ]


def test_top_pages_through_the_board_with_offset(client, board):
    response = client.get("/api/v1/leaderboard/top?limit=2&offset=2")

    assert [(e["rank"], e["player_id"]) for e in response.json()["entries"]] == [
        (3, "p2"),
        (4, "p4"),
    ]


def test_competition_ranks_share_a_rank_for_equal_points(client, board):
    response = client.get("/api/v1/leaderboard/top?rank_style=competition&offset=2&limit=2")

    assert [(e["rank"], e["player_id"]) for e in response.json()["entries"]] == [
        (2, "p2"),
        (4, "p4"),
    ]
    rank = client.get("/api/v1/leaderboard/players/p2?rank_style=competition").json()["rank"]
    assert rank == 2


def test_a_players_rank_points_and_percentile(client, board):
    response = client.get("/api/v1/leaderboard/players/p2")

    assert response.status_code == 200
    assert response.json() == {
        "player_id": "p2",
        "board": "global",
        "season": "s1",
        "rank": 3,
        "points": 20,
        "total_players": 4,
        "percentile": 50.0,
    }


def test_a_player_without_a_score_is_404(client, board):
    response = client.get("/api/v1/leaderboard/players/nobody")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "player_not_ranked"


def test_around_reads_contiguous_ranks(client, board):
    response = client.get("/api/v1/leaderboard/players/p3/around?n=1")

    body = response.json()
    assert (body["player_id"], body["rank"]) == ("p3", 2)
    assert [(e["rank"], e["player_id"]) for e in body["entries"]] == [
        (1, "p1"),
        (2, "p3"),
        (3, "p2"),
    ]


def test_around_the_leader_starts_at_rank_one(client, board):
    body = client.get("/api/v1/leaderboard/players/p1/around?n=2").json()

    assert [e["rank"] for e in body["entries"]] == [1, 2, 3]


def test_around_with_n_zero_is_the_player_alone(client, board):
    body = client.get("/api/v1/leaderboard/players/p4/around?n=0").json()

    assert [(e["rank"], e["player_id"]) for e in body["entries"]] == [(4, "p4")]


def test_ranks_of_many_players_in_one_call(client, board):
    response = client.post(
        "/api/v1/leaderboard/ranks", {"player_ids": ["p4", "nobody", "p1"]}, format="json"
    )

    assert response.status_code == 200
    assert [(e["player_id"], e["rank"], e["points"]) for e in response.json()["entries"]] == [
        ("p4", 4, 10),
        ("nobody", None, None),
        ("p1", 1, 30),
    ]


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/leaderboard/top?limit=0",
        "/api/v1/leaderboard/top?limit=101",
        "/api/v1/leaderboard/top?limit=abc",
        "/api/v1/leaderboard/top?offset=-1",
        "/api/v1/leaderboard/top?rank_style=dense",
        "/api/v1/leaderboard/players/p1/around?n=51",
        "/api/v1/leaderboard/players/p1/around?n=-1",
        "/api/v1/leaderboard/players/bad%20id",
        "/api/v1/leaderboard/players/bad%20id/around",
    ],
)
def test_bad_read_parameters_are_400(client, board, url):
    response = client.get(url)

    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("validation_error", "invalid_player_id")


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"player_ids": []},
        {"player_ids": ["ok"] * 201},
        {"player_ids": ["bad id"]},
        {"player_ids": "p1"},
        {"player_ids": ["p1"], "extra": 1},
        [1],
    ],
)
def test_bad_ranks_requests_are_400(client, board, body):
    response = client.post("/api/v1/leaderboard/ranks", body, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"


def test_unknown_board_or_season_is_404(client, board):
    assert client.get("/api/v1/leaderboard/top?board=nope").json()["error"]["code"] == (
        "board_not_found"
    )
    response = client.get("/api/v1/leaderboard/top?season=nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "season_not_found"


def test_reads_name_a_board_and_season(client, post_scores, board):
    other = SeasonFactory(board=BoardFactory(slug="duo"), slug="w1")
    post_scores({"player_id": "z", "points": 3, "match_id": "m", "board": "duo"})

    body = client.get("/api/v1/leaderboard/top?board=duo&season=w1").json()

    assert (body["board"], body["season"]) == ("duo", other.slug)
    assert [e["player_id"] for e in body["entries"]] == ["z"]


def test_ties_in_the_same_second_are_ordered_by_player_id_descending(client, post_scores, season):
    for player in ("alice", "carol", "bob"):
        post_scores({"player_id": player, "points": 5, "match_id": "m", "ended_at": at(season, 60)})

    entries = client.get("/api/v1/leaderboard/top").json()["entries"]

    assert [e["player_id"] for e in entries] == ["carol", "bob", "alice"]


def test_whoever_reached_the_total_first_ranks_higher_whatever_the_arrival_order(
    client, post_scores, season
):
    post_scores({"player_id": "late", "points": 5, "match_id": "m", "ended_at": at(season, 99)})
    post_scores({"player_id": "early", "points": 5, "match_id": "m", "ended_at": at(season, 7)})

    entries = client.get("/api/v1/leaderboard/top").json()["entries"]

    assert [e["player_id"] for e in entries] == ["early", "late"]


def test_a_players_seasons_list_the_running_ones_first_with_their_live_rank(
    client, post_scores, db
):
    # given: a season that ended half an hour ago (late results still taken), the next one
    # running, results in both, and the first one closed into its archive
    board = BoardFactory(slug="global")
    now = timezone.now().replace(microsecond=0)
    past = SeasonFactory(
        board=board,
        slug="past",
        starts_at=now - timedelta(days=9),
        ends_at=now - timedelta(minutes=30),
        grace_period=timedelta(hours=1),
    )
    SeasonFactory(board=board, slug="now", starts_at=past.ends_at, ends_at=now + timedelta(days=5))
    ended = (past.ends_at - timedelta(hours=1)).isoformat()
    post_scores(
        [
            {"player_id": "ann", "points": 5, "match_id": "a", "season": "past", "ended_at": ended},
            {"player_id": "bob", "points": 9, "match_id": "a", "season": "past", "ended_at": ended},
        ]
    )
    closing.season_close(season=past, force=True)
    post_scores({"player_id": "ann", "points": 30, "match_id": "b"})
    post_scores({"player_id": "cat", "points": 40, "match_id": "b"})

    # when
    seasons = client.get("/api/v1/players/ann/seasons").json()["seasons"]

    # then
    assert [
        (r["season"], r["status"], r["rank"], r["final_rank"], r["points"], r["total_players"])
        for r in seasons
    ] == [("now", "running", 2, None, 30, 2), ("past", "closed", 2, 2, 5, 2)]
    assert client.get("/api/v1/players/nobody/seasons").json() == {
        "player_id": "nobody",
        "seasons": [],
    }
