"""Voiding a single result: kept but uncounted, the total recomputed by the board's rule, the live
board set exactly (up or down), a closed season's archive noted, audited, and idempotent."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.contrib.messages import get_messages

from audit.models import OperatorAction, OperatorActionKind
from config.building_blocks.errors import Conflict
from leaderboards import closing, store
from leaderboards.models import ArchivedStanding
from matches.corrections import result_void
from matches.models import MatchResult, PlayerTotal
from seasons.models import ScoreOperator, SeasonState, SortOrder

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator():
    return User.objects.create_superuser("operator", "op@example.com", "pw")


def top(client, board="global") -> list[tuple[str, int]]:
    entries = client.get(f"/api/v1/leaderboard/top?board={board}").json()["entries"]
    return [(e["player_id"], e["points"]) for e in entries]


def result(match_id: str, player_id: str = "cheat") -> MatchResult:
    return MatchResult.objects.get(match_id=match_id, player_id=player_id)


def void(match_id, django_capture_on_commit_callbacks, operator=None, reason="aimbot") -> bool:
    with django_capture_on_commit_callbacks(execute=True):
        return result_void(result_id=result(match_id).pk, reason=reason, actor=operator)


def at(season, seconds):
    return (season.starts_at + timedelta(seconds=seconds)).isoformat()


def test_voiding_a_result_of_a_sum_board_lowers_the_total_and_the_rank(
    client, post_scores, season, operator, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1", "ended_at": at(season, 1)})
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m2", "ended_at": at(season, 2)})
    post_scores({"player_id": "fair", "points": 50, "match_id": "m3"})
    assert top(client) == [("cheat", 100), ("fair", 50)]

    assert void("m1", django_capture_on_commit_callbacks, operator) is True

    assert top(client) == [("fair", 50), ("cheat", 10)]
    voided = result("m1")
    assert (voided.counted, voided.void_reason, voided.voided_at is not None) == (
        False,
        "aimbot",
        True,
    )
    total = PlayerTotal.objects.get(player_id="cheat")
    assert (total.points, total.reached_at.isoformat()) == (10, at(season, 2))
    action = OperatorAction.objects.get()
    assert (action.action, action.actor_name, action.board, action.season, action.player_id) == (
        OperatorActionKind.VOID_RESULT,
        "operator",
        "global",
        "s1",
        "cheat",
    )
    assert action.reason == "aimbot"
    assert action.details == {
        "result_id": voided.pk,
        "match_id": "m1",
        "points": 90,
        "was_counted": True,
        "total_before": 100,
        "total_after": 10,
    }


def test_voiding_the_best_result_falls_back_to_the_next_best_and_its_time(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    season.board.score_operator = ScoreOperator.BEST
    season.board.save(update_fields=["score_operator"])
    for match_id, points, seconds in (("m1", 90, 1), ("m2", 40, 5), ("m3", 40, 3)):
        post_scores(
            {
                "player_id": "cheat",
                "points": points,
                "match_id": match_id,
                "ended_at": at(season, seconds),
            }
        )

    void("m1", django_capture_on_commit_callbacks)

    total = PlayerTotal.objects.get(player_id="cheat")
    assert (total.points, total.reached_at.isoformat()) == (40, at(season, 3))
    assert top(client) == [("cheat", 40)]


def test_a_void_on_a_lowest_first_sum_board_moves_the_score_against_the_mirror(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    season.board.sort_order = SortOrder.LOWEST_FIRST
    season.board.save(update_fields=["sort_order"])
    post_scores({"player_id": "slow", "points": 30, "match_id": "m1"})
    post_scores({"player_id": "slow", "points": 20, "match_id": "m2"})
    post_scores({"player_id": "fast", "points": 40, "match_id": "m3"})
    assert top(client) == [("fast", 40), ("slow", 50)]

    with django_capture_on_commit_callbacks(execute=True):
        result_void(result_id=result("m2", "slow").pk, reason="lag exploit", actor=None)

    assert top(client) == [("slow", 30), ("fast", 40)]


def test_voiding_a_players_only_result_takes_them_off_the_board(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})

    void("m1", django_capture_on_commit_callbacks)

    assert PlayerTotal.objects.filter(player_id="cheat").count() == 0
    assert top(client) == []
    assert client.get("/api/v1/leaderboard/players/cheat").status_code == 404


def test_a_voided_result_posted_again_stays_voided(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "cheat", "points": 5, "match_id": "m2"})
    void("m1", django_capture_on_commit_callbacks)

    again = post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})

    assert again.status_code == 200
    assert again.json()["status"] == "duplicate"
    assert result("m1").counted is False
    assert PlayerTotal.objects.get(player_id="cheat").points == 5
    assert top(client) == [("cheat", 5)]


def test_voiding_twice_changes_and_records_nothing_the_second_time(
    post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "cheat", "points": 5, "match_id": "m2"})
    void("m1", django_capture_on_commit_callbacks, reason="first")

    assert void("m1", django_capture_on_commit_callbacks, reason="second") is False

    assert result("m1").void_reason == "first"
    assert OperatorAction.objects.count() == 1


def test_a_void_without_a_reason_writes_nothing(post_scores, season):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})

    with pytest.raises(ValueError, match="A void needs a reason."):
        result_void(result_id=result("m1").pk, reason="  ", actor=None)

    assert (result("m1").counted, result("m1").voided_at) == (True, None)
    assert PlayerTotal.objects.get(player_id="cheat").points == 90
    assert OperatorAction.objects.count() == 0


def test_a_season_being_closed_refuses_a_void_and_nothing_is_written(post_scores, season):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    season.state = SeasonState.CLOSING
    season.save(update_fields=["state"])

    with pytest.raises(Conflict) as refused:
        result_void(result_id=result("m1").pk, reason="aimbot", actor=None)

    assert refused.value.code == "season_closing"
    assert (result("m1").counted, result("m1").voided_at) == (True, None)
    assert PlayerTotal.objects.get(player_id="cheat").points == 90
    assert OperatorAction.objects.count() == 0


def test_a_void_in_a_closed_season_notes_the_archive_and_keeps_its_rank(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m2"})
    post_scores({"player_id": "fair", "points": 50, "match_id": "m3"})
    closing.season_close(season=season, force=True)
    kept = store.scores_of(season.pk, ["cheat"])

    void("m1", django_capture_on_commit_callbacks)

    row = ArchivedStanding.objects.get(season=season, player_id="cheat")
    assert (row.rank, row.points) == (1, 100)
    assert "result m1 (90 points) voided after the close: aimbot. Total now 10" in row.note
    assert "rank and reward kept as archived" in row.note
    assert PlayerTotal.objects.get(player_id="cheat").points == 10
    assert store.scores_of(season.pk, ["cheat"]) == kept


def test_the_admin_asks_for_the_reason_then_voids(
    client, post_scores, season, operator, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "cheat", "points": 10, "match_id": "m2"})
    client.force_login(operator)
    form = {"action": "void", "_selected_action": [str(result("m1").pk)]}

    asked = client.post("/admin/matches/matchresult/", form)
    no_reason = client.post("/admin/matches/matchresult/", {**form, "post": "yes", "reason": ""})

    assert "Void these results?" in asked.content.decode()
    assert "This field is required." in no_reason.content.decode()
    assert (result("m1").counted, OperatorAction.objects.count()) == (True, 0)

    with django_capture_on_commit_callbacks(execute=True):
        done = client.post(
            "/admin/matches/matchresult/", {**form, "post": "yes", "reason": "aimbot"}
        )

    assert done.status_code == 302
    assert "Voided 1 result." in [m.message for m in get_messages(done.wsgi_request)]
    assert result("m1").void_reason == "aimbot"
    assert top(client) == [("cheat", 10)]
    listed = client.get("/admin/matches/matchresult/").content.decode()
    assert "voided: aimbot" in listed
