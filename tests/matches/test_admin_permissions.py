"""Ban, unban and void check the permission their effect needs: a staff account that may only
look (every `view_*` permission, nothing else) is not offered them, and a forged POST of each,
from the player list or the player's own page, changes nothing in PostgreSQL or Redis; the
change permission on players (results, for a void) runs them."""

from __future__ import annotations

import pytest

from audit.models import OperatorAction
from matches.models import MatchResult, Player, PlayerTotal
from matches.services import player_ban
from tests.staff import redis_now, staff

pytestmark = pytest.mark.django_db


@pytest.fixture
def looker(client):
    return staff(client, "support", every_view=True)


def bans_now() -> list[tuple]:
    return list(
        Player.objects.order_by("player_id").values_list(
            "player_id", "banned_at", "banned_until", "ban_reason"
        )
    )


def offered(client, url: str) -> list[str]:
    form = client.get(url).context["action_form"]
    return [] if form is None else [name for name, _ in form.fields["action"].choices if name]


@pytest.fixture
def scored(post_scores, season):
    assert post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"}).status_code == 201
    assert post_scores({"player_id": "fair", "points": 20, "match_id": "m1"}).status_code == 201
    return season


def test_a_view_only_account_is_offered_no_ban_unban_or_void(looker, scored):
    assert offered(looker, "/admin/matches/player/") == []
    assert offered(looker, "/admin/matches/matchresult/") == []


@pytest.mark.parametrize("banned", [False, True])
def test_a_view_only_account_cannot_ban_or_unban_by_a_forged_post(
    looker, scored, banned, django_capture_on_commit_callbacks
):
    if banned:
        with django_capture_on_commit_callbacks(execute=True):
            player_ban(player_id="cheat", reason="aimbot")
        OperatorAction.objects.all().delete()
    action = "unban" if banned else "ban"
    bans, redis = bans_now(), redis_now()

    with django_capture_on_commit_callbacks(execute=True) as queued:
        looker.post(
            "/admin/matches/player/",
            {"action": action, "_selected_action": ["cheat"], "post": "yes", "reason": "forged"},
        )
        own_page = looker.post(f"/admin/matches/player/cheat/{action}/", {"reason": "forged"})

    assert own_page.status_code == 403
    assert queued == []
    assert bans_now() == bans
    assert not OperatorAction.objects.exists()
    assert redis_now() == redis


def test_a_view_only_account_cannot_void_by_a_forged_post(
    looker, scored, django_capture_on_commit_callbacks
):
    result = MatchResult.objects.get(player_id="cheat")
    redis = redis_now()

    with django_capture_on_commit_callbacks(execute=True) as queued:
        looker.post(
            "/admin/matches/matchresult/",
            {"action": "void", "_selected_action": [result.pk], "post": "yes", "reason": "x"},
        )

    assert queued == []
    assert MatchResult.objects.get(pk=result.pk).voided_at is None
    assert PlayerTotal.objects.get(player_id="cheat").points == 90
    assert not OperatorAction.objects.exists()
    assert redis_now() == redis


def test_the_change_permission_on_players_bans_and_unbans(
    client, scored, django_capture_on_commit_callbacks
):
    moderator = staff(client, "moderator", "change_player")

    with django_capture_on_commit_callbacks(execute=True):
        moderator.post(
            "/admin/matches/player/",
            {"action": "ban", "_selected_action": ["cheat"], "post": "yes", "reason": "aimbot"},
        )
        banned = Player.objects.get(player_id="cheat").ban_reason
        moderator.post(
            "/admin/matches/player/",
            {"action": "unban", "_selected_action": ["cheat"], "post": "yes", "reason": "appeal"},
        )

    assert offered(moderator, "/admin/matches/player/") == ["ban", "unban"]
    assert banned == "aimbot"
    assert Player.objects.get(player_id="cheat").banned_at is None
    assert list(OperatorAction.objects.order_by("id").values_list("actor_name", "action")) == [
        ("moderator", "ban"),
        ("moderator", "unban"),
    ]
