"""Every action of the boards' and seasons' console checks the permission its effect needs: a
staff account that may only look (every `view_*` permission, nothing else) is not offered close
now, rebuild, publish or hide, and a forged POST of each changes nothing in PostgreSQL or Redis;
an account with exactly the permission the action needs runs it."""

from __future__ import annotations

import pytest

from audit.models import OperatorAction
from leaderboards.models import ArchivedStanding, SeasonReward
from seasons.models import Board, Season, SeasonState
from tests.factories import BoardFactory
from tests.staff import redis_now, staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def looker(client):
    return staff(client, "support", every_view=True)


def seasons_now() -> list[tuple]:
    return list(
        Season.objects.order_by("pk").values_list(
            "pk", "slug", "state", "starts_at", "ends_at", "grace_period", "close_step"
        )
    )


def offered(client, url: str) -> list[str]:
    form = client.get(url).context["action_form"]
    return [] if form is None else [name for name, _ in form.fields["action"].choices if name]


@pytest.fixture
def scored(post_scores, season):
    assert post_scores({"player_id": "p1", "points": 50, "match_id": "m1"}).status_code == 201
    assert post_scores({"player_id": "p2", "points": 20, "match_id": "m1"}).status_code == 201
    return season


def test_a_view_only_account_is_offered_only_the_reading_actions(looker, scored):
    assert offered(looker, "/admin/seasons/season/") == [
        "preview_rewards",
        "export_csv",
        "export_parquet",
    ]
    assert offered(looker, "/admin/seasons/board/") == []


@pytest.mark.parametrize("action", ["close_now", "rebuild_standings"])
def test_a_view_only_account_cannot_close_or_rebuild_a_season_by_a_forged_post(
    looker, scored, action, django_capture_on_commit_callbacks
):
    seasons, redis = seasons_now(), redis_now()

    with django_capture_on_commit_callbacks(execute=True) as queued:
        looker.post(
            "/admin/seasons/season/",
            {"action": action, "_selected_action": [scored.pk], "post": "yes"},
        )

    assert queued == []
    assert seasons_now() == seasons
    assert Season.objects.get(pk=scored.pk).state == SeasonState.OPEN
    assert not ArchivedStanding.objects.exists()
    assert not SeasonReward.objects.exists()
    assert not OperatorAction.objects.exists()
    assert redis_now() == redis


@pytest.mark.parametrize(("action", "hidden"), [("publish", True), ("hide", False)])
def test_a_view_only_account_cannot_publish_or_hide_a_board_by_a_forged_post(
    looker, action, hidden
):
    board = BoardFactory(slug="launch", hidden=hidden)

    looker.post(
        "/admin/seasons/board/", {"action": action, "_selected_action": [board.pk], "post": "yes"}
    )

    assert Board.objects.get(pk=board.pk).hidden is hidden
    assert not OperatorAction.objects.exists()


def test_the_close_permission_alone_closes_a_season_now(
    client, scored, django_capture_on_commit_callbacks
):
    closer = staff(client, "closer", "view_season", "close_season")

    with django_capture_on_commit_callbacks(execute=True):
        closer.post(
            "/admin/seasons/season/",
            {"action": "close_now", "_selected_action": [scored.pk], "post": "yes"},
        )

    assert Season.objects.get(pk=scored.pk).state == SeasonState.CLOSED
    assert ArchivedStanding.objects.filter(season=scored).count() == 2
    assert list(OperatorAction.objects.values_list("actor_name", "action")) == [
        ("closer", "close_now")
    ]


def test_changing_seasons_does_not_grant_close_or_rebuild(client, scored):
    editor = staff(client, "editor", "view_season", "change_season")

    assert "close_now" not in offered(editor, "/admin/seasons/season/")
    assert "rebuild_standings" not in offered(editor, "/admin/seasons/season/")


def test_the_rebuild_permission_alone_rebuilds_a_season(
    client, scored, django_capture_on_commit_callbacks
):
    rebuilder = staff(client, "rebuilder", "view_season", "rebuild_season")

    with django_capture_on_commit_callbacks(execute=True):
        rebuilder.post(
            "/admin/seasons/season/",
            {"action": "rebuild_standings", "_selected_action": [scored.pk], "post": "yes"},
        )

    assert list(OperatorAction.objects.values_list("actor_name", "action", "details")) == [
        ("rebuilder", "rebuild", {"players": 2})
    ]


def test_the_publish_permission_alone_publishes_and_hides_a_board(client):
    publisher = staff(client, "publisher", "view_board", "publish_board")
    hidden = BoardFactory(slug="launch", hidden=True)
    public = BoardFactory(slug="old", hidden=False)

    for action, board in (("publish", hidden), ("hide", public)):
        publisher.post(
            "/admin/seasons/board/",
            {"action": action, "_selected_action": [board.pk], "post": "yes"},
        )

    assert offered(publisher, "/admin/seasons/board/") == ["publish", "hide"]
    assert dict(Board.objects.values_list("slug", "hidden")) == {"launch": False, "old": True}
    assert OperatorAction.objects.filter(actor_name="publisher").count() == 2


def test_a_view_only_account_sees_the_rewards_preview_and_the_dashboard(looker, scored):
    preview = looker.get(f"/admin/seasons/season/{scored.pk}/rewards-preview/")
    dashboard = looker.get("/admin/dashboard/")

    assert preview.status_code == 200
    assert dashboard.status_code == 200


def test_a_staff_account_without_view_permissions_sees_neither(client, scored):
    nobody = staff(client, "nobody")

    assert nobody.get(f"/admin/seasons/season/{scored.pk}/rewards-preview/").status_code == 403
    assert nobody.get("/admin/dashboard/").status_code == 403
