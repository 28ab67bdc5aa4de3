"""Segments: every read of a board within one value of one of its dimensions (`country:DE`),
exact and live, kept by the same mirror, moved when a player's values change, and covered by
bans, voids, rebuilds, reconciliation and the close."""

from datetime import timedelta

import pytest

from leaderboards import closing, reconciliation, segments, services, store
from leaderboards.models import ArchivedSegmentStanding, SeasonReward
from matches.corrections import result_void
from matches.models import MatchResult, Player, PlayerSegment
from matches.services import player_ban, player_unban
from seasons.models import Board, RewardTier
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

# Who plays, where, and their points (each reached at its own second, so no two tie by time).
PLAYERS = {
    "de1": ("DE", "pc", 50),
    "fr1": ("FR", "pc", 45),
    "de2": ("DE", "console", 40),
    "de3": ("DE", "pc", 30),
    "fr2": ("FR", "console", 20),
    "none": (None, None, 10),
}


def _at(season, seconds):
    return (season.starts_at + timedelta(seconds=seconds)).isoformat()


@pytest.fixture
def ranked(server, django_capture_on_commit_callbacks):
    """A running season of a board with dimensions country and platform, and PLAYERS in it."""
    board = BoardFactory(slug="ranked", segment_dimensions=["country", "platform"])
    season = SeasonFactory(board=board, slug="r1")
    for second, (player, (country, platform, points)) in enumerate(PLAYERS.items(), start=1):
        with django_capture_on_commit_callbacks(execute=True):
            if country:
                profile = {"segments": {"country": country, "platform": platform}}
                assert server.put(
                    f"/api/v1/players/{player}", profile, format="json"
                ).status_code in (200, 201)
            posted = server.post(
                "/api/v1/scores",
                {
                    "board": "ranked",
                    "player_id": player,
                    "points": points,
                    "match_id": f"m-{player}",
                    "ended_at": _at(season, second),
                },
                format="json",
            )
        assert posted.status_code == 201
    return season


def _top(client, segment, **query):
    params = "&".join(
        f"{k}={v}" for k, v in {"board": "ranked", "segment": segment, **query}.items()
    )
    response = client.get(f"/api/v1/leaderboard/top?{params}")
    assert response.status_code == 200, response.content
    return response.json()


def _ids(body):
    return [(e["rank"], e["player_id"], e["points"]) for e in body["entries"]]


def _segment_sets(season):
    """Every segment set of the season as {name: [(player, score), ...]}, and the values held."""
    found = {}
    for shard in range(season.shards):
        shard_keys = store.season_keys(season.pk, season.shards, shard)
        for name in sorted(store.client().smembers(shard_keys.segment_names)):
            members = store.client().zrevrange(
                f"{shard_keys.standings}:{name}", 0, -1, withscores=True
            )
            if members:
                found.setdefault(name, []).extend(members)
    return {name: sorted(members) for name, members in found.items()}


def test_every_read_within_a_segment_ranks_its_members_only(client, ranked):
    de = _top(client, "country:DE")
    assert (de["board"], de["season"], de["segment"]) == ("ranked", "r1", "country:DE")
    assert de["total_players"] == 3
    assert _ids(de) == [(1, "de1", 50), (2, "de2", 40), (3, "de3", 30)]
    assert _ids(_top(client, "platform:console")) == [(1, "de2", 40), (2, "fr2", 20)]
    assert _ids(_top(client, "country:DE", offset=1, limit=1)) == [(2, "de2", 40)]

    rank = client.get("/api/v1/leaderboard/players/de3?board=ranked&segment=country:DE").json()
    assert (rank["rank"], rank["points"], rank["total_players"], rank["segment"]) == (
        3,
        30,
        3,
        "country:DE",
    )
    assert rank["percentile"] == 33.33

    around = client.get(
        "/api/v1/leaderboard/players/fr2/around?board=ranked&segment=country:FR&n=1"
    ).json()
    assert (around["rank"], around["total_players"]) == (2, 2)
    assert _ids(around) == [(1, "fr1", 45), (2, "fr2", 20)]

    many = client.post(
        "/api/v1/leaderboard/ranks?board=ranked&segment=platform:pc",
        {"player_ids": ["de3", "fr1", "de2"]},
        format="json",
    ).json()
    assert many["total_players"] == 3
    assert [(e["player_id"], e["rank"]) for e in many["entries"]] == [
        ("de3", 3),
        ("fr1", 2),
        ("de2", None),
    ]
    # The whole board is as it was, without the segment field.
    whole = _top(client, "")
    assert "segment" not in whole
    assert whole["total_players"] == 6


def test_bad_segments_are_refused_with_their_error_and_a_player_outside_is_not_ranked(
    client, ranked
):
    unknown = client.get("/api/v1/leaderboard/top?board=ranked&segment=galaxy:M31")
    malformed = client.get("/api/v1/leaderboard/players/de1?board=ranked&segment=country")
    bad_value = client.get(
        "/api/v1/leaderboard/players/de1/around?board=ranked&segment=country:D%20E"
    )
    outside = client.get("/api/v1/leaderboard/players/fr1?board=ranked&segment=country:DE")

    assert unknown.status_code == 400
    assert unknown.json()["error"]["code"] == "unknown_segment_dimension"
    assert unknown.json()["error"]["details"]["declared"] == ["country", "platform"]
    assert malformed.status_code == 400
    assert malformed.json()["error"]["code"] == "invalid_segment"
    assert bad_value.status_code == 400
    assert bad_value.json()["error"]["code"] == "invalid_segment"
    assert outside.status_code == 404
    assert outside.json()["error"]["code"] == "player_not_ranked"
    assert outside.json()["error"]["details"] == {"segment": "country:DE"}


def test_a_change_of_segment_mid_season_moves_the_whole_standing(
    client, server, ranked, django_capture_on_commit_callbacks
):
    # when: de1 moves to FR and leaves their platform
    with django_capture_on_commit_callbacks(execute=True):
        moved = server.put(
            "/api/v1/players/de1",
            {"segments": {"country": "FR", "platform": None}},
            format="json",
        )
    assert moved.status_code == 200

    # then: their season total goes with them, at once
    assert _ids(_top(client, "country:FR")) == [(1, "de1", 50), (2, "fr1", 45), (3, "fr2", 20)]
    assert _ids(_top(client, "country:DE")) == [(1, "de2", 40), (2, "de3", 30)]
    assert _ids(_top(client, "platform:pc")) == [(1, "fr1", 45), (2, "de3", 30)]
    assert Player.objects.get(player_id="de1").segments_changes == 2

    # and: a copy of the old values still on its way (a mirror task that read PostgreSQL before
    # the change) writes the score but does not move them back
    store.mirror_standings(
        [
            store.StandingWrite(
                season_id=ranked.pk,
                player_id="de1",
                composite=store.scores_of(ranked.pk, ["de1"])[0] + 1,
                segments="1|country:DE|platform:pc",
            )
        ]
    )
    assert [e["player_id"] for e in _top(client, "country:DE")["entries"]] == ["de2", "de3"]
    assert _top(client, "country:FR")["entries"][0]["player_id"] == "de1"


def test_a_profile_write_without_a_change_of_values_owes_no_refresh(server, ranked):
    server.put("/api/v1/players/de1", {"segments": {"country": "DE"}}, format="json")

    assert Player.objects.get(player_id="de1").segments_changes == 1


def test_a_new_result_after_a_move_lands_in_the_new_segment(
    client, server, ranked, post_scores, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        server.put("/api/v1/players/fr2", {"segments": {"country": "DE"}}, format="json")
    server.post(
        "/api/v1/scores",
        {"board": "ranked", "player_id": "fr2", "points": 100, "match_id": "m-fr2-2"},
        format="json",
    )
    services.totals_mirror_pending(older_than=timedelta(0))

    assert _ids(_top(client, "country:DE"))[0] == (1, "fr2", 120)
    assert _ids(_top(client, "platform:console")) == [(1, "fr2", 120), (2, "de2", 40)]
    assert "fr2" not in [e["player_id"] for e in _top(client, "country:FR")["entries"]]


def test_a_ban_takes_the_player_off_their_segments_and_an_unban_brings_them_back(
    client, ranked, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="de1", reason="cheat", actor=None)
    assert _ids(_top(client, "country:DE")) == [(1, "de2", 40), (2, "de3", 30)]
    assert _ids(_top(client, "platform:pc")) == [(1, "fr1", 45), (2, "de3", 30)]

    with django_capture_on_commit_callbacks(execute=True):
        player_unban(player_id="de1", reason="appeal", actor=None)
    assert _ids(_top(client, "country:DE"))[0] == (1, "de1", 50)


def test_a_void_moves_the_player_within_their_segments(
    client, ranked, django_capture_on_commit_callbacks
):
    result = MatchResult.objects.get(match_id="m-de1")
    with django_capture_on_commit_callbacks(execute=True):
        assert result_void(result_id=result.pk, reason="aimbot", actor=None) is True

    assert _ids(_top(client, "country:DE")) == [(1, "de2", 40), (2, "de3", 30)]
    assert "de1" not in str(_segment_sets(ranked))


@pytest.mark.parametrize("banned_meanwhile", [False, True])
def test_a_player_voided_off_the_board_who_moves_lands_in_the_new_segment_with_the_next_result(
    client, ranked, post_scores, django_capture_on_commit_callbacks, server, banned_meanwhile
):
    # fr2's only result voided (while banned, or not): no total, off the board. The move then
    # owes a refresh of no season (fr2 has no standing anywhere), so the next result must read
    # where fr2 is now, not trust the values Redis held from before the void.
    result = MatchResult.objects.get(match_id="m-fr2")
    if banned_meanwhile:
        with django_capture_on_commit_callbacks(execute=True):
            player_ban(player_id="fr2", reason="cheat", actor=None)
    with django_capture_on_commit_callbacks(execute=True):
        assert result_void(result_id=result.pk, reason="aimbot", actor=None) is True
    if banned_meanwhile:
        with django_capture_on_commit_callbacks(execute=True):
            player_unban(player_id="fr2", reason="appeal", actor=None)

    _moves_to_de_and_plays(client, server, post_scores, django_capture_on_commit_callbacks, "fr2")
    assert [e["player_id"] for e in _top(client, "platform:console")["entries"]] == ["de2", "fr2"]


def _moves_to_de_and_plays(client, server, post_scores, capture, player_id):
    """The player moves to DE, then scores 5: ranked 4th in DE, and not in FR."""
    with capture(execute=True):
        server.put(f"/api/v1/players/{player_id}", {"segments": {"country": "DE"}}, format="json")
    posted = post_scores(
        {"board": "ranked", "player_id": player_id, "points": 5, "match_id": f"m-{player_id}-5"}
    )

    assert posted.status_code == 201, posted.content
    assert (4, player_id, 5) in _ids(_top(client, "country:DE"))
    assert player_id not in [e["player_id"] for e in _top(client, "country:FR")["entries"]]


def test_a_rebuild_gives_identical_segment_sets_and_a_lost_redis_gets_them_back(ranked):
    before = _segment_sets(ranked)
    assert set(before) == {
        "country:DE",
        "country:FR",
        "platform:console",
        "platform:pc",
    }

    services.season_rebuild_standings(season=ranked)
    assert _segment_sets(ranked) == before

    store.delete_standings(ranked.pk)
    assert _segment_sets(ranked) == {}
    services.season_rebuild_standings(season=ranked)
    assert _segment_sets(ranked) == before


def test_reconciliation_moves_a_player_whose_values_redis_lost(client, ranked):
    # given: Redis came back from an older copy, holding de1 in no segment
    keys = store.season_keys(ranked.pk)
    store.client().hdel(keys.segments, "de1")
    for name in ("country:DE", "platform:pc"):
        store.client().zrem(f"{keys.standings}:{name}", "de1")
    assert "de1" not in [e["player_id"] for e in _top(client, "country:DE")["entries"]]

    # when
    tally = reconciliation.season_reconcile(season=ranked)

    # then
    assert (tally.drift, tally.fixed) == (1, 1)
    assert _ids(_top(client, "country:DE"))[0] == (1, "de1", 50)
    assert _ids(_top(client, "platform:pc"))[0] == (1, "de1", 50)


def test_a_stranger_removed_by_reconciliation_lands_in_their_segment_with_their_first_result(
    client, server, ranked, post_scores, django_capture_on_commit_callbacks
):
    # given: Redis holds "ghost" (in FR), whom PostgreSQL has no total for (an older copy of
    # Redis came back); ghost's values are FR in PostgreSQL too
    with django_capture_on_commit_callbacks(execute=True):
        server.put("/api/v1/players/ghost", {"segments": {"country": "FR"}}, format="json")
    (entry,) = segments.segment_entries(["ghost"], ranked.board).values()
    write = store.StandingWrite(ranked.pk, "ghost", 2**40, segments=entry)
    store.write_standings([write])
    assert "ghost" in [e["player_id"] for e in _top(client, "country:FR")["entries"]]

    # when: reconciliation removes the stranger; ghost then moves (no standing anywhere to
    # refresh) and plays
    assert reconciliation.season_reconcile(season=ranked).fixed == 1

    # then: ghost is ranked where PostgreSQL has them now
    _moves_to_de_and_plays(client, server, post_scores, django_capture_on_commit_callbacks, "ghost")


def test_the_dimensions_of_a_board_with_scores_cannot_change(ranked):
    board = Board.objects.get(slug="ranked")
    board.segment_dimensions = ["country"]

    with pytest.raises(Exception, match="segment dimensions cannot change"):
        board.full_clean()


def test_the_close_archives_each_segment_and_rewards_its_tiers(client, ranked):
    board = ranked.board
    RewardTier.objects.create(board=board, reward_code="champion", rank_from=1, rank_to=1)
    RewardTier.objects.create(
        board=board,
        reward_code="national-top-2",
        rank_from=1,
        rank_to=2,
        segment_dimension="country",
    )

    closing.season_close(season=ranked, force=True, now=ranked.ends_at + timedelta(days=1))

    archived = {
        (row.segment, row.rank): row.player_id
        for row in ArchivedSegmentStanding.objects.filter(season=ranked)
    }
    assert archived == {
        ("country:DE", 1): "de1",
        ("country:DE", 2): "de2",
        ("country:DE", 3): "de3",
        ("country:FR", 1): "fr1",
        ("country:FR", 2): "fr2",
        ("platform:console", 1): "de2",
        ("platform:console", 2): "fr2",
        ("platform:pc", 1): "de1",
        ("platform:pc", 2): "fr1",
        ("platform:pc", 3): "de3",
    }
    rewards = sorted(
        SeasonReward.objects.filter(season=ranked).values_list(
            "segment", "rank", "player_id", "reward_code"
        )
    )
    assert rewards == [
        ("", 1, "de1", "champion"),
        ("country:DE", 1, "de1", "national-top-2"),
        ("country:DE", 2, "de2", "national-top-2"),
        ("country:FR", 1, "fr1", "national-top-2"),
        ("country:FR", 2, "fr2", "national-top-2"),
    ]
    listed = client.get("/api/v1/seasons/r1/rewards?board=ranked").json()["rewards"]
    assert [(r.get("segment"), r["player_id"]) for r in listed][:2] == [
        (None, "de1"),
        ("country:DE", "de1"),
    ]
    assert "segment" not in listed[0]

    # and: the closed season's segment reads answer from the archive once its key is gone
    store.delete_standings(ranked.pk, shards=ranked.shards)
    de = _top(client, "country:DE", season="r1")
    assert _ids(de) == [(1, "de1", 50), (2, "de2", 40), (3, "de3", 30)]
    rank = client.get("/api/v1/leaderboard/players/fr2?board=ranked&season=r1&segment=country:FR")
    assert (rank.json()["rank"], rank.json()["total_players"]) == (2, 2)


def test_a_reward_tier_names_one_of_its_boards_dimensions(ranked):
    tier = RewardTier(
        board=ranked.board, reward_code="x", rank_from=1, rank_to=1, segment_dimension="galaxy"
    )

    with pytest.raises(Exception, match="segment dimensions"):
        tier.full_clean()
    assert not PlayerSegment.objects.filter(dimension="galaxy").exists()


def test_a_friends_view_within_a_segment_is_refused_with_its_error(client, ranked):
    response = client.get("/api/v1/leaderboard/players/de1/friends?board=ranked&segment=country:DE")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_segment"
