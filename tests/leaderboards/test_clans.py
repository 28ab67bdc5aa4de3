"""The clan board: clans ranked by their members' totals (summed, or their best member's), kept
by the same mirror through joins, leaves, bans, voids and rebuilds, with a clan's rank, the clans
around it and its members ranked within it; archived and rewarded at the close."""

from datetime import timedelta

import pytest
from django.test import Client

from leaderboards import closing, services, store
from leaderboards.models import ArchivedClanStanding, SeasonReward
from matches.corrections import result_void
from matches.models import Clan, MatchResult
from matches.services import player_ban, player_unban
from seasons.models import RewardTier, ScoreOperator
from tests.factories import BoardFactory, SeasonFactory
from tests.staff import staff

pytestmark = pytest.mark.django_db

# player: (clan, points); each reached at its own second.
MEMBERS = {
    "r1": ("red", 50),
    "b1": ("blue", 45),
    "r2": ("red", 30),
    "b2": ("blue", 40),
    "g1": ("green", 60),
    "solo": (None, 100),
}


@pytest.fixture
def clan_board(server, django_capture_on_commit_callbacks):
    """Make a board (of sums unless told) with MEMBERS in their clans."""

    def make(operator=ScoreOperator.SUM, shards=1):
        board = BoardFactory(slug="clans", score_operator=operator, shards=shards)
        season = SeasonFactory(board=board, slug="c1", shards=shards)
        for clan in ("red", "blue", "green"):
            assert server.put(
                f"/api/v1/clans/{clan}", {"name": clan.title()}, format="json"
            ).status_code in (200, 201)
        for second, (player, (clan, points)) in enumerate(MEMBERS.items(), start=1):
            with django_capture_on_commit_callbacks(execute=True):
                if clan:
                    server.put(f"/api/v1/players/{player}", {"clan": clan}, format="json")
                posted = server.post(
                    "/api/v1/scores",
                    {
                        "board": "clans",
                        "player_id": player,
                        "points": points,
                        "match_id": f"m-{player}",
                        "ended_at": (season.starts_at + timedelta(seconds=second)).isoformat(),
                    },
                    format="json",
                )
            assert posted.status_code == 201, posted.content
        return season

    return make


def _top(client, **query):
    params = "&".join(f"{k}={v}" for k, v in {"board": "clans", **query}.items())
    response = client.get(f"/api/v1/leaderboard/clans/top?{params}")
    assert response.status_code == 200, response.content
    return response.json()


def _board(body):
    return [(e["rank"], e["clan_id"], e["points"]) for e in body["entries"]]


def test_clans_rank_by_their_members_summed_points(client, clan_board):
    clan_board()

    top = _top(client)

    assert (top["board"], top["season"], top["total_clans"]) == ("clans", "c1", 3)
    assert _board(top) == [(1, "blue", 85), (2, "red", 80), (3, "green", 60)]
    assert top["entries"][0]["name"] == "Blue"


def test_a_clan_shows_its_rank_the_clans_around_and_its_members_within_it(client, clan_board):
    clan_board()

    response = client.get("/api/v1/leaderboard/clans/red?board=clans&n=1&limit=5")

    body = response.json()
    assert response.status_code == 200
    assert (body["clan_id"], body["name"], body["rank"], body["points"]) == ("red", "Red", 2, 80)
    assert (body["total_clans"], body["percentile"]) == (3, 66.67)
    assert [(e["rank"], e["clan_id"]) for e in body["entries"]] == [
        (1, "blue"),
        (2, "red"),
        (3, "green"),
    ]
    assert body["members"]["total_players"] == 2
    assert [(e["rank"], e["player_id"], e["points"]) for e in body["members"]["entries"]] == [
        (1, "r1", 50),
        (2, "r2", 30),
    ]


def test_an_unknown_clan_or_one_without_a_score_is_404(client, server, clan_board):
    clan_board()
    server.put("/api/v1/clans/empty", {"name": "Empty"}, format="json")

    unknown = client.get("/api/v1/leaderboard/clans/nobody?board=clans")
    empty = client.get("/api/v1/leaderboard/clans/empty?board=clans")

    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "clan_not_found")
    assert (empty.status_code, empty.json()["error"]["code"]) == (404, "clan_not_ranked")


def test_a_members_later_results_raise_the_clans_sum_by_their_points(
    client, server, clan_board, django_capture_on_commit_callbacks
):
    season = clan_board()

    for second, points in ((10, 7), (11, 3)):
        with django_capture_on_commit_callbacks(execute=True):
            posted = server.post(
                "/api/v1/scores",
                {
                    "board": "clans",
                    "player_id": "r2",
                    "points": points,
                    "match_id": f"m-r2-{second}",
                    "ended_at": (season.starts_at + timedelta(seconds=second)).isoformat(),
                },
                format="json",
            )
        assert posted.status_code == 201, posted.content

    assert _board(_top(client)) == [(1, "red", 90), (2, "blue", 85), (3, "green", 60)]


def test_every_read_takes_a_clans_members_as_a_segment(client, clan_board):
    clan_board()

    top = client.get("/api/v1/leaderboard/top?board=clans&segment=clan:red").json()
    rank = client.get("/api/v1/leaderboard/players/r2?board=clans&segment=clan:red").json()
    around = client.get("/api/v1/leaderboard/players/r1/around?board=clans&n=1&segment=clan:red")
    outsider = client.get("/api/v1/leaderboard/players/b1?board=clans&segment=clan:red")
    malformed = client.get("/api/v1/leaderboard/top?board=clans&segment=clan:no%20such")

    assert (top["segment"], top["total_players"]) == ("clan:red", 2)
    assert [(e["rank"], e["player_id"], e["points"]) for e in top["entries"]] == [
        (1, "r1", 50),
        (2, "r2", 30),
    ]
    assert (rank["rank"], rank["total_players"], rank["percentile"]) == (2, 2, 50.0)
    assert [e["player_id"] for e in around.json()["entries"]] == ["r1", "r2"]
    assert (outsider.status_code, outsider.json()["error"]["code"]) == (404, "player_not_ranked")
    assert outsider.json()["error"]["details"]["segment"] == "clan:red"
    assert (malformed.status_code, malformed.json()["error"]["code"]) == (400, "invalid_segment")


def test_joining_and_leaving_moves_the_members_total_between_clans(
    client, server, clan_board, django_capture_on_commit_callbacks
):
    clan_board()

    with django_capture_on_commit_callbacks(execute=True):
        server.put("/api/v1/players/solo", {"clan": "green"}, format="json")
    assert _board(_top(client))[0] == (1, "green", 160)

    with django_capture_on_commit_callbacks(execute=True):
        server.put("/api/v1/players/g1", {"clan": None}, format="json")
        server.put("/api/v1/players/solo", {"clan": "red"}, format="json")
    assert _board(_top(client)) == [(1, "red", 180), (2, "blue", 85)]


def test_bans_and_voids_reach_the_clan_board(
    client, clan_board, django_capture_on_commit_callbacks
):
    clan_board()

    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="b1", reason="cheat", actor=None)
    assert _board(_top(client)) == [(1, "red", 80), (2, "green", 60), (3, "blue", 40)]

    with django_capture_on_commit_callbacks(execute=True):
        result_void(result_id=MatchResult.objects.get(match_id="m-r1").pk, reason="x", actor=None)
    assert _board(_top(client)) == [(1, "green", 60), (2, "blue", 40), (3, "red", 30)]

    with django_capture_on_commit_callbacks(execute=True):
        player_unban(player_id="b1", reason="appeal", actor=None)
    assert _board(_top(client))[0] == (1, "blue", 85)


def test_a_board_of_bests_ranks_clans_by_their_best_member(
    client, clan_board, django_capture_on_commit_callbacks
):
    clan_board(ScoreOperator.BEST)

    assert _board(_top(client)) == [(1, "green", 60), (2, "red", 50), (3, "blue", 45)]

    with django_capture_on_commit_callbacks(execute=True):
        result_void(result_id=MatchResult.objects.get(match_id="m-r1").pk, reason="x", actor=None)
    assert _board(_top(client)) == [(1, "green", 60), (2, "blue", 45), (3, "red", 30)]


def test_a_rebuild_gives_the_same_clan_board(client, clan_board):
    season = clan_board()
    before = store.client().zrange(
        f"{store.standings_key(season.pk)}:clans", 0, -1, withscores=True
    )

    services.season_rebuild_standings(season=season)

    after = store.client().zrange(f"{store.standings_key(season.pk)}:clans", 0, -1, withscores=True)
    assert after == before
    assert _board(_top(client)) == [(1, "blue", 85), (2, "red", 80), (3, "green", 60)]


@pytest.mark.parametrize("engine", ["one-redis", "cluster"])
def test_a_sharded_boards_clans_are_put_together_from_every_shard(
    request, engine, client, clan_board
):
    if engine == "cluster":
        request.getfixturevalue("leaderboard_on_cluster")
    season = clan_board(shards=3)
    assert len({store.shard_of(p, 3) for p in MEMBERS}) > 1

    assert _board(_top(client)) == [(1, "blue", 85), (2, "red", 80), (3, "green", 60)]
    body = client.get("/api/v1/leaderboard/clans/red?board=clans&n=0").json()
    assert (body["rank"], body["points"]) == (2, 80)
    assert [e["player_id"] for e in body["members"]["entries"]] == ["r1", "r2"]

    services.season_rebuild_standings(season=season)
    assert _board(_top(client)) == [(1, "blue", 85), (2, "red", 80), (3, "green", 60)]


def test_the_close_archives_the_clan_board_and_rewards_clans_and_members(client, clan_board):
    season = clan_board()
    RewardTier.objects.create(
        board=season.board, reward_code="clan-cup", rank_from=1, rank_to=1,
        segment_dimension="clan", members_too=True,
    )  # fmt: skip
    RewardTier.objects.create(
        board=season.board,
        reward_code="clan-silver",
        rank_from=2,
        rank_to=2,
        segment_dimension="clan",
    )

    closing.season_close(season=season, force=True, now=season.ends_at + timedelta(days=1))

    archived = list(
        ArchivedClanStanding.objects.filter(season=season)
        .order_by("rank")
        .values_list("rank", "clan_id", "points", "members", "reward_code")
    )
    assert archived == [
        (1, "blue", 85, 2, "clan-cup"),
        (2, "red", 80, 2, "clan-silver"),
        (3, "green", 60, 1, ""),
    ]
    rewards = sorted(
        SeasonReward.objects.filter(season=season, segment__startswith="clan:").values_list(
            "player_id", "rank", "reward_code", "segment"
        )
    )
    assert rewards == [("b1", 1, "clan-cup", "clan:blue"), ("b2", 2, "clan-cup", "clan:blue")]

    viewer = staff(Client(), "viewer", every_view=True)
    clans_admin = viewer.get("/admin/leaderboards/archivedclanstanding/").content.decode()
    segments_admin = viewer.get("/admin/leaderboards/archivedsegmentstanding/?q=r2")
    assert "clan-cup" in clans_admin
    assert segments_admin.status_code == 200
    assert "clan:red" in segments_admin.content.decode()

    store.delete_standings(season.pk, shards=season.shards)
    assert _board(_top(client, season="c1")) == [(1, "blue", 85), (2, "red", 80), (3, "green", 60)]
    red = client.get("/api/v1/leaderboard/clans/red?board=clans&season=c1").json()
    assert [e["player_id"] for e in red["members"]["entries"]] == ["r1", "r2"]
    archived_red = client.get("/api/v1/leaderboard/top?board=clans&season=c1&segment=clan:red")
    assert [e["player_id"] for e in archived_red.json()["entries"]] == ["r1", "r2"]


def test_a_clan_may_not_take_the_clan_boards_own_address(server):
    response = server.put("/api/v1/clans/top", {"name": "Top"}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_clan_id"
    assert not Clan.objects.filter(clan_id="top").exists()
