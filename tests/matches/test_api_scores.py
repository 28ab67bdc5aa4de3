"""POST /api/v1/scores: authentication, validation, idempotency and the confirmed answer."""

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from leaderboards import store
from matches.models import MatchResult, PendingStanding, Player, PlayerTotal
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def nothing_written() -> bool:
    return (
        MatchResult.objects.count() == 0
        and PlayerTotal.objects.count() == 0
        and Player.objects.count() == 0
    )


def test_accepted_result_is_confirmed_with_the_new_total(post_scores, season):
    response = post_scores({"player_id": "p104", "points": 50, "match_id": "m982"})

    assert response.status_code == 201
    assert response.json() == {
        "status": "accepted",
        "match_id": "m982",
        "player_id": "p104",
        "board": "global",
        "season": "s1",
        "points": 50,
        "total_points": 50,
    }
    result = MatchResult.objects.get()
    assert (result.season_id, result.match_id, result.player_id, result.points) == (
        season.id,
        "m982",
        "p104",
        50,
    )
    assert PlayerTotal.objects.get().points == 50
    # mirrored: on the board, and nothing left in the mirror's outbox
    assert store.read_rank(season.id, "p104")[1].rank == 1
    assert PendingStanding.objects.count() == 0


def test_results_add_up_and_reached_at_is_the_latest_ended_at(post_scores, season):
    late = timezone.now().replace(microsecond=0) - timedelta(minutes=1)
    early = late - timedelta(hours=2)

    post_scores({"player_id": "p1", "points": 10, "match_id": "a", "ended_at": late.isoformat()})
    second = post_scores(
        {"player_id": "p1", "points": 5, "match_id": "b", "ended_at": early.isoformat()}
    )

    assert second.status_code == 201
    assert second.json()["total_points"] == 15
    total = PlayerTotal.objects.get()
    assert (total.points, total.reached_at) == (15, late)


def test_same_result_again_is_a_duplicate_and_changes_nothing(post_scores, season):
    body = {"player_id": "p1", "points": 50, "match_id": "m1"}
    post_scores(body)
    first_updated_at = PlayerTotal.objects.get().updated_at

    again = post_scores(body)

    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert again.json()["total_points"] == 50
    assert MatchResult.objects.count() == 1
    total = PlayerTotal.objects.get()
    assert (total.points, total.updated_at) == (50, first_updated_at)


def test_same_match_with_different_points_is_a_conflict(post_scores, season):
    post_scores({"player_id": "p1", "points": 50, "match_id": "m1"})

    response = post_scores({"player_id": "p1", "points": 60, "match_id": "m1"})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert list(MatchResult.objects.values_list("points", flat=True)) == [50]
    assert PlayerTotal.objects.get().points == 50


def test_one_match_has_many_players(post_scores, season):
    first = post_scores({"player_id": "p1", "points": 50, "match_id": "m1"})
    second = post_scores({"player_id": "p2", "points": 30, "match_id": "m1"})

    assert (first.status_code, second.status_code) == (201, 201)
    assert MatchResult.objects.count() == 2


@pytest.mark.parametrize(
    "headers", [{}, {"HTTP_AUTHORIZATION": "Api-Key nope.nope"}, {"HTTP_AUTHORIZATION": "Bearer x"}]
)
def test_writes_need_a_valid_game_server_key(client, season, headers):
    response = client.post(
        "/api/v1/scores",
        {"player_id": "p1", "points": 5, "match_id": "m"},
        format="json",
        **headers,
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] in ("not_authenticated", "authentication_failed")
    assert response["WWW-Authenticate"] == "Api-Key"
    assert nothing_written()


def test_a_key_sent_as_a_bearer_token_is_told_which_scheme_to_use(client, season, api_key):
    response = client.post(
        "/api/v1/scores",
        {"player_id": "p1", "points": 5, "match_id": "m"},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {api_key}",
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
    assert "Authorization: Api-Key <key>" in response.json()["error"]["message"]
    assert "'Bearer'" in response.json()["error"]["message"]
    assert nothing_written()


def test_a_revoked_key_fails_at_once(client, season, api_key):
    from matches.models import GameServer

    GameServer.objects.update(revoked=True)

    response = client.post(
        "/api/v1/scores",
        {"player_id": "p1", "points": 5, "match_id": "m"},
        format="json",
        HTTP_AUTHORIZATION=f"Api-Key {api_key}",
    )

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"
    assert nothing_written()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"points": 5, "match_id": "m"}, "player_id"),
        ({"player_id": "", "points": 5, "match_id": "m"}, "player_id"),
        ({"player_id": "a" * 65, "points": 5, "match_id": "m"}, "player_id"),
        ({"player_id": "bad id", "points": 5, "match_id": "m"}, "player_id"),
        ({"player_id": "é", "points": 5, "match_id": "m"}, "player_id"),
        ({"player_id": 12, "points": 5, "match_id": "m"}, "player_id"),
        ({"player_id": "p1", "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": 0, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": -3, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": 2**29, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": 10**30, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": 5.5, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": 5.0, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": "5", "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": True, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": None, "match_id": "m"}, "points"),
        ({"player_id": "p1", "points": 5}, "match_id"),
        ({"player_id": "p1", "points": 5, "match_id": ""}, "match_id"),
        ({"player_id": "p1", "points": 5, "match_id": "x" * 129}, "match_id"),
        ({"player_id": "p1", "points": 5, "match_id": "a\nb"}, "match_id"),
        ({"player_id": "p1", "points": 5, "match_id": "m", "ended_at": "yesterday"}, "ended_at"),
        ({"player_id": "p1", "points": 5, "match_id": "m", "ended_at": 1700000000}, "ended_at"),
        ({"player_id": "p1", "points": 5, "match_id": "m", "ended_at": None}, "ended_at"),
        (
            {"player_id": "p1", "points": 5, "match_id": "m", "ended_at": "2026-13-45T00:00:00Z"},
            "ended_at",
        ),
        ({"player_id": "p1", "points": 5, "match_id": "m", "board": 7}, "board"),
        ({"player_id": "p1", "points": 5, "match_id": "m", "season": ""}, "season"),
        ({"player_id": "p1", "points": 5, "match_id": "m", "extra": 1}, "extra"),
        # The database's check constraint refuses a final newline; so must the API, with a 400
        # rather than the 503 of a refused commit.
        ({"player_id": "p1\n", "points": 5, "match_id": "m"}, "player_id"),
    ],
)
def test_invalid_result_is_rejected_and_nothing_is_written(post_scores, season, body, field):
    response = post_scores(body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert field in error["details"]["fields"]
    assert nothing_written()


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"[1,",
        b"NaN",
        b'{"player_id": "p1", "points": NaN}',
        b'{"player_id": "p1", "points": 1e400, "match_id": "m"}',
        b'{"player_id": "p1", "points": Infinity, "match_id": "m"}',
    ],
)
def test_malformed_json_is_rejected(server, season, raw):
    response = server.post("/api/v1/scores", raw, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] in ("malformed_json", "validation_error")
    assert nothing_written()


def test_a_body_that_is_not_an_object_is_rejected(post_scores, season):
    response = post_scores("just a string")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "validation_error"
    assert nothing_written()


def test_ended_at_in_the_future_is_rejected(post_scores, season):
    future = timezone.now() + timedelta(hours=1)

    response = post_scores(
        {"player_id": "p1", "points": 5, "match_id": "m", "ended_at": future.isoformat()}
    )

    assert response.status_code == 400
    assert "ended_at" in response.json()["error"]["details"]["fields"]
    assert nothing_written()


def test_unknown_board_is_404(post_scores, season):
    response = post_scores({"player_id": "p1", "points": 5, "match_id": "m", "board": "nope"})

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "board_not_found"
    assert nothing_written()


def test_unknown_season_is_404(post_scores, season):
    response = post_scores({"player_id": "p1", "points": 5, "match_id": "m", "season": "nope"})

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "season_not_found"
    assert nothing_written()


def test_result_outside_the_named_season_window_is_season_closed(post_scores, season):
    before = season.starts_at - timedelta(minutes=1)

    response = post_scores(
        {
            "player_id": "p1",
            "points": 5,
            "match_id": "m",
            "season": "s1",
            "ended_at": before.isoformat(),
        }
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "season_closed"
    assert nothing_written()


def test_season_past_its_grace_period_is_closed(post_scores, db):
    now = timezone.now()
    SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="old",
        starts_at=now - timedelta(days=10),
        ends_at=now - timedelta(days=2),
        grace_period=timedelta(hours=1),
    )
    ended = now - timedelta(days=3)

    response = post_scores(
        {"player_id": "p1", "points": 5, "match_id": "m", "ended_at": ended.isoformat()}
    )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "season_closed"
    assert nothing_written()


def test_late_result_inside_the_grace_period_is_accepted(post_scores, db):
    now = timezone.now()
    season = SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="ending",
        starts_at=now - timedelta(days=10),
        ends_at=now - timedelta(minutes=10),
        grace_period=timedelta(hours=1),
    )
    ended = season.ends_at - timedelta(seconds=1)

    response = post_scores(
        {"player_id": "p1", "points": 5, "match_id": "m", "ended_at": ended.isoformat()}
    )

    assert response.status_code == 201
    assert response.json()["season"] == "ending"


def test_no_running_season_is_409(post_scores, db):
    BoardFactory(slug="global")

    response = post_scores({"player_id": "p1", "points": 5, "match_id": "m"})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "no_active_season"
    assert nothing_written()


def test_a_total_may_not_pass_the_points_limit(post_scores, season):
    post_scores({"player_id": "p1", "points": 2**29 - 10, "match_id": "m1"})

    response = post_scores({"player_id": "p1", "points": 10, "match_id": "m2"})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "total_limit_exceeded"
    assert MatchResult.objects.count() == 1
    assert PlayerTotal.objects.get().points == 2**29 - 10
    # the refused statement left the connection's prepared statements usable
    assert post_scores({"player_id": "p2", "points": 3, "match_id": "m3"}).status_code == 201


def test_the_write_paths_statements_are_prepared_once_per_connection(post_scores, season):
    """Planned once per connection, not per request: their planning was a sixth of PostgreSQL's
    work for a batch."""
    for match in ("m1", "m2"):
        assert post_scores({"player_id": "p1", "points": 3, "match_id": match}).status_code == 201

    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [statement for (statement,) in cursor.fetchall()]
    assert sum("INSERT INTO matches_matchresult" in s for s in prepared) == 1
    assert sum("INSERT INTO matches_playertotal" in s for s in prepared) == 1


def test_a_new_player_on_two_boards_in_one_batch_is_created_once(post_scores, season):
    SeasonFactory(board=BoardFactory(slug="ranked-eu"), slug="s1")
    batch = [
        {"player_id": "p-new", "points": 4, "match_id": "m1"},
        {"player_id": "p-new", "points": 6, "match_id": "m1", "board": "ranked-eu"},
    ]

    response = post_scores(batch)

    assert response.status_code == 200
    assert Player.objects.filter(player_id="p-new").count() == 1
    assert sorted(PlayerTotal.objects.values_list("points", flat=True)) == [4, 6]


def test_results_go_to_the_named_board(post_scores, season):
    other = SeasonFactory(board=BoardFactory(slug="ranked-eu"), slug="s1")

    response = post_scores({"player_id": "p1", "points": 7, "match_id": "m", "board": "ranked-eu"})

    assert response.status_code == 201
    assert response.json()["board"] == "ranked-eu"
    assert PlayerTotal.objects.get().season_id == other.id
    assert store.read_rank(other.id, "p1")[1].composite // 2**24 == 7
    assert store.read_rank(season.id, "p1")[1] is None


def test_results_that_together_pass_the_points_limit_are_refused_not_an_outage(post_scores, season):
    # given: five results of the largest allowed points for one player in one batch
    batch = [{"player_id": "p1", "points": 2**29 - 1, "match_id": f"m{i}"} for i in range(5)]

    response = post_scores(batch)

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "total_limit_exceeded"
    assert nothing_written()


def test_a_retry_after_the_cutoff_is_still_a_duplicate(post_scores, season):
    # given: a result stored while its season ran
    ended = timezone.now() - timedelta(minutes=5)
    body = {"player_id": "p1", "points": 5, "match_id": "m1", "ended_at": ended.isoformat()}
    assert post_scores(body).status_code == 201

    # when: the season is over (and past its grace period) by the time the retry arrives
    with time_machine.travel(season.accepts_until + timedelta(minutes=1)):
        again = post_scores(body)

    # then: the game server learns the result is stored, not that the season closed
    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert again.json()["season"] == season.slug
    assert again.json()["total_points"] == 5
    assert MatchResult.objects.count() == 1


def test_a_retry_without_ended_at_that_crosses_into_the_next_season_counts_once(post_scores, db):
    # given: a season ending in a minute, the next one after it, and a result posted now
    board = BoardFactory(slug="global")
    now = timezone.now().replace(microsecond=0)
    first = SeasonFactory(
        board=board,
        slug="first",
        starts_at=now - timedelta(days=1),
        ends_at=now + timedelta(minutes=1),
    )
    SeasonFactory(
        board=board,
        slug="second",
        starts_at=first.ends_at,
        ends_at=first.ends_at + timedelta(days=7),
    )
    body = {"player_id": "p1", "points": 5, "match_id": "m1"}
    assert post_scores(body).json()["season"] == "first"

    # when: the game server's retry arrives once the next season runs
    with time_machine.travel(first.ends_at + timedelta(seconds=30)):
        again = post_scores(body)

    # then: found as stored in the first season, not stored again in the second
    assert again.status_code == 200
    assert (again.json()["status"], again.json()["season"]) == ("duplicate", "first")
    assert MatchResult.objects.count() == 1
    assert list(PlayerTotal.objects.values_list("season__slug", "points")) == [("first", 5)]


def test_a_retry_with_other_points_after_the_cutoff_is_a_conflict(post_scores, season):
    ended = timezone.now() - timedelta(minutes=5)
    post_scores({"player_id": "p1", "points": 5, "match_id": "m1", "ended_at": ended.isoformat()})

    with time_machine.travel(season.accepts_until + timedelta(minutes=1)):
        response = post_scores(
            {"player_id": "p1", "points": 6, "match_id": "m1", "ended_at": ended.isoformat()}
        )

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"
    assert MatchResult.objects.get().points == 5


def test_a_new_player_is_created_with_their_first_total(post_scores, season):
    before = timezone.now()
    post_scores([{"player_id": "new", "points": 5, "match_id": "m1"}])

    player = Player.objects.get(player_id="new")
    assert player.created_at >= before
    assert player.banned_at is None
    assert PlayerTotal.objects.get(player_id="new").points == 5


def test_a_known_player_starting_a_new_season_keeps_their_profile(post_scores, season):
    other = SeasonFactory(board=BoardFactory(slug="weekly"), slug="w1")
    Player.objects.create(player_id="vet", display_name="Veteran")
    post_scores({"player_id": "vet", "points": 5, "match_id": "m1"})

    second = post_scores({"player_id": "vet", "points": 7, "match_id": "m1", "board": "weekly"})

    assert second.status_code == 201
    assert Player.objects.get(player_id="vet").display_name == "Veteran"
    assert set(PlayerTotal.objects.values_list("season_id", "points")) == {
        (season.id, 5),
        (other.id, 7),
    }


def test_players_of_a_batch_are_created_once_each(post_scores, season):
    response = post_scores(
        [
            {"player_id": "a", "points": 1, "match_id": "m1"},
            {"player_id": "a", "points": 2, "match_id": "m2"},
            {"player_id": "b", "points": 3, "match_id": "m1"},
        ]
    )

    assert response.status_code == 200
    assert sorted(Player.objects.values_list("player_id", flat=True)) == ["a", "b"]
    assert dict(PlayerTotal.objects.values_list("player_id", "points")) == {"a": 3, "b": 3}


def test_writes_and_reads_name_an_unknown_board_in_one_voice(client, server, season):
    written = server.post(
        "/api/v1/scores",
        {"board": "nope", "player_id": "p1", "points": 5, "match_id": "m"},
        format="json",
    )
    batch = server.post(
        "/api/v1/scores",
        [{"board": "nope", "player_id": "p1", "points": 5, "match_id": "m"}],
        format="json",
    )
    read = client.get("/api/v1/leaderboard/top?board=nope")

    assert [r.status_code for r in (written, batch, read)] == [404, 404, 404]
    assert written.json()["error"]["message"] == read.json()["error"]["message"]
    assert read.json()["error"]["message"] == "Unknown board 'nope'."
    assert batch.json()["error"]["message"] == "Item 0: Unknown board 'nope'."
    assert nothing_written()
