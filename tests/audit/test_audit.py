"""The audit log: each operator action leaves one row saying who, what, on what, when and why,
written in the action's own transaction; the log is read-only in the admin."""

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from audit.models import OperatorAction, OperatorActionKind
from matches.services import player_ban, player_unban
from seasons.models import Board, Season, SeasonState
from tests.factories import PlayerFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(db):
    return User.objects.create_superuser("operator", "op@example.com", "pw")


@pytest.fixture
def console(client, operator):
    client.force_login(operator)
    return client


def logged() -> list[tuple]:
    return list(
        OperatorAction.objects.order_by("id").values_list(
            "actor_name", "action", "board", "season", "player_id", "reason", "details"
        )
    )


def test_a_ban_and_an_unban_are_logged_with_who_and_why(
    operator, django_capture_on_commit_callbacks
):
    PlayerFactory(player_id="cheat")

    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot", actor=operator)
        player_ban(player_id="cheat", reason="aimbot", actor=operator)  # the same again: no change
        player_ban(player_id="cheat", reason="again", actor=operator)
        player_unban(player_id="cheat", actor=None)

    assert logged() == [
        ("operator", "ban", "", "", "cheat", "aimbot", {"until": None, "before": "not banned"}),
        ("operator", "ban", "", "", "cheat", "again", {"until": None, "before": "until lifted"}),
        ("system", "unban", "", "", "cheat", "", {"ban_reason": "again"}),
    ]
    assert OperatorAction.objects.filter(actor=operator).count() == 2


def test_close_now_from_the_admin_is_logged(
    console, post_scores, season, django_capture_on_commit_callbacks
):
    assert post_scores({"player_id": "p1", "points": 5, "match_id": "m"}).status_code == 201
    ends_at = season.ends_at

    with django_capture_on_commit_callbacks(execute=True):
        console.post(
            "/admin/seasons/season/",
            {"action": "close_now", "_selected_action": [season.pk], "post": "yes"},
        )

    assert Season.objects.get(pk=season.pk).state == SeasonState.CLOSED
    assert logged() == [
        ("operator", "close_now", "global", "s1", "", "", {"ends_at_before": ends_at.isoformat()})
    ]


def test_a_rebuild_from_the_admin_is_logged_with_its_size(
    console, post_scores, season, django_capture_on_commit_callbacks
):
    assert post_scores({"player_id": "p1", "points": 5, "match_id": "m"}).status_code == 201

    with django_capture_on_commit_callbacks(execute=True):  # the job is sent on commit
        console.post(
            "/admin/seasons/season/",
            {"action": "rebuild_standings", "_selected_action": [season.pk], "post": "yes"},
        )

    assert logged() == [("operator", "rebuild", "global", "s1", "", "", {"players": 1})]


def test_a_change_of_a_boards_rules_is_logged_with_old_and_new(console, season):
    board = Board.objects.get(pk=season.board_id)
    form = {
        "slug": "global",
        "name": "Global renamed",
        "score_operator": "best",
        "sort_order": "highest_first",
        "max_points_per_result": "500",
        "schedule": board.schedule,
        "schedule_cron": "",
        "schedule_timezone": "UTC",
        "season_grace_period": "01:00:00",
        "keep_closed_standings_days": "7",
        "reward_tiers-TOTAL_FORMS": "0",
        "reward_tiers-INITIAL_FORMS": "0",
        "seasons-TOTAL_FORMS": "0",
        "seasons-INITIAL_FORMS": "0",
    }

    saved = console.post(f"/admin/seasons/board/{board.pk}/change/", form)
    console.post(f"/admin/seasons/board/{board.pk}/change/", {**form, "name": "Again"})

    assert saved.status_code == 302
    assert logged() == [
        (
            "operator",
            "board_rules",
            "global",
            "",
            "",
            "",
            {
                "score_operator": {"from": "sum", "to": "best"},
                "max_points_per_result": {"from": None, "to": 500},
            },
        )
    ]


def test_the_database_refuses_a_ban_without_a_reason_or_a_player(operator):
    for fields in ({"player_id": "p1"}, {"reason": "aimbot"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            OperatorAction.objects.create(
                actor_name="operator", action=OperatorActionKind.BAN, **fields
            )

    assert not OperatorAction.objects.exists()


def test_the_log_is_read_only_in_the_admin(console, operator):
    entry = OperatorAction.objects.create(
        actor=operator, actor_name="operator", action="ban", player_id="p1", reason="aimbot"
    )

    listed = console.get("/admin/audit/operatoraction/")
    shown = console.get(f"/admin/audit/operatoraction/{entry.pk}/change/")
    deleted = console.post(f"/admin/audit/operatoraction/{entry.pk}/delete/", {"post": "yes"})

    assert listed.status_code == 200
    assert "aimbot" in listed.content.decode()
    assert shown.status_code == 200
    assert shown.context["has_change_permission"] is False
    assert deleted.status_code == 403
    assert OperatorAction.objects.count() == 1
