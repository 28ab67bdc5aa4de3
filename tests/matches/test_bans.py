"""Bans as an operator gives them: with a reason, for good or until a time, from the player's
own admin page or the player list; a banned player's rank lookup says so; a temporary ban ends
by itself."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import User
from django.utils import timezone

from audit.models import OperatorAction
from config.building_blocks.errors import InvalidInput
from leaderboards import closing, store
from matches.corrections import result_void
from matches.models import MatchResult, Player, PlayerTotal
from matches.services import player_ban, player_unban, players_unban_expired
from matches.tasks import unban_expired_players

pytestmark = pytest.mark.django_db


@pytest.fixture
def console(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def top(client) -> list[tuple[str, int]]:
    entries = client.get("/api/v1/leaderboard/top").json()["entries"]
    return [(e["player_id"], e["points"]) for e in entries]


def test_a_temporary_ban_counts_results_again_from_its_end_and_the_task_lifts_it(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "fair", "points": 10, "match_id": "m1"})
    start = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="smurfing", until=start + timedelta(minutes=30))
    during = post_scores({"player_id": "cheat", "points": 5, "match_id": "m2"})

    with time_machine.travel(start + timedelta(minutes=31), tick=False):
        # Ended, not lifted yet: the write path counts the result already.
        after = post_scores({"player_id": "cheat", "points": 7, "match_id": "m3"})
        with django_capture_on_commit_callbacks(execute=True):
            lifted = unban_expired_players.delay().get()
        again = players_unban_expired()

    assert during.json()["total_points"] == 90
    assert after.json()["total_points"] == 97
    assert list(
        MatchResult.objects.order_by("match_id", "player_id").values_list(
            "match_id", "player_id", "counted"
        )
    ) == [
        ("m1", "cheat", True),
        ("m1", "fair", True),
        ("m2", "cheat", False),
        ("m3", "cheat", True),
    ]
    assert (lifted, again) == (1, [])
    assert Player.objects.filter(player_id="cheat").values_list(
        "banned_at", "banned_until", "ban_reason"
    ).get() == (None, None, "")
    assert top(client) == [("cheat", 97), ("fair", 10)]
    assert list(
        OperatorAction.objects.order_by("id").values_list("actor_name", "action", "reason")
    ) == [
        ("system", "ban", "smurfing"),
        ("system", "unban", "temporary ban ended"),
    ]


def test_a_ban_extended_before_the_task_runs_is_not_lifted(season):
    Player.objects.create(player_id="cheat")
    now = timezone.now()
    player_ban(player_id="cheat", reason="smurfing", until=now + timedelta(minutes=1))
    player_ban(player_id="cheat", reason="smurfing again", until=now + timedelta(days=1))

    assert players_unban_expired(now=now + timedelta(minutes=2)) == []
    assert Player.objects.get(player_id="cheat").ban_reason == "smurfing again"


def test_a_ban_that_ends_in_the_past_is_refused_and_writes_nothing(season):
    Player.objects.create(player_id="cheat")

    with pytest.raises(InvalidInput) as refused:
        player_ban(player_id="cheat", reason="x", until=timezone.now() - timedelta(seconds=1))

    assert refused.value.code == "ban_already_over"
    assert Player.objects.get(player_id="cheat").banned_at is None
    assert not OperatorAction.objects.exists()


def test_a_banned_players_rank_lookup_says_banned_not_no_score(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")

    rank = client.get("/api/v1/leaderboard/players/cheat")
    around = client.get("/api/v1/leaderboard/players/cheat/around")
    nobody = client.get("/api/v1/leaderboard/players/nobody")

    assert (rank.status_code, rank.json()["error"]["code"]) == (404, "player_banned")
    assert rank.json()["error"]["message"] == "Player 'cheat' is banned from season 's1'."
    assert (around.status_code, around.json()["error"]["code"]) == (404, "player_banned")
    assert (nobody.status_code, nobody.json()["error"]["code"]) == (404, "player_not_ranked")


def test_a_player_unbanned_after_their_only_result_was_voided_is_ranked_by_their_next_one(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    # The void took cheat's last total in the season while banned: the unban owes a refresh of
    # no standing there, yet must lift the ban's mark, or the next results would be skipped.
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")
    with django_capture_on_commit_callbacks(execute=True):
        result_void(
            result_id=MatchResult.objects.get(match_id="m1").pk, reason="aimbot", actor=None
        )
    with django_capture_on_commit_callbacks(execute=True):
        player_unban(player_id="cheat", reason="appeal")

    assert post_scores({"player_id": "cheat", "points": 7, "match_id": "m2"}).status_code == 201
    rank = client.get("/api/v1/leaderboard/players/cheat")

    assert (rank.status_code, rank.json()["rank"], rank.json()["points"]) == (200, 1, 7)
    assert top(client) == [("cheat", 7)]


def test_ban_from_the_players_page_asks_for_the_reason_first(
    console, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    page = console.get("/admin/matches/player/cheat/change/").content.decode()
    asked = console.get("/admin/matches/player/cheat/ban/")
    no_reason = console.post("/admin/matches/player/cheat/ban/", {"reason": "", "post": "yes"})
    past = console.post(
        "/admin/matches/player/cheat/ban/", {"reason": "x", "until": "2000-01-01 00:00"}
    )
    nonsense = console.post(
        "/admin/matches/player/cheat/ban/", {"reason": "x", "until": "next tuesday"}
    )
    nothing_written = Player.objects.get(player_id="cheat").banned_at is None

    with django_capture_on_commit_callbacks(execute=True):
        done = console.post(
            "/admin/matches/player/cheat/ban/", {"reason": "aimbot", "until": "2099-01-01 12:00"}
        )

    assert "/admin/matches/player/cheat/ban/" in page
    assert "/admin/matches/playertotal/?q=cheat" in page
    assert "/admin/matches/matchresult/?q=cheat" in page
    assert asked.status_code == 200
    assert "their new results stop counting" in asked.content.decode()
    assert no_reason.status_code == 200
    assert "This field is required." in no_reason.content.decode()
    assert past.status_code == 200
    assert "must be in the future" in past.content.decode()
    assert nonsense.status_code == 200
    assert "Enter a valid date/time." in nonsense.content.decode()
    assert nothing_written
    assert done.status_code == 302
    cheat = Player.objects.get(player_id="cheat")
    assert (cheat.ban_reason, cheat.banned_until.isoformat()) == (
        "aimbot",
        "2099-01-01T12:00:00+00:00",
    )
    assert store.board_size(season.pk) == 0
    assert list(OperatorAction.objects.values_list("actor_name", "action", "reason")) == [
        ("operator", "ban", "aimbot")
    ]


def test_unban_from_the_players_page_puts_them_back(
    console, client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")
        asked = console.get("/admin/matches/player/cheat/unban/")
        done = console.post("/admin/matches/player/cheat/unban/", {"reason": "appeal won"})

    assert asked.status_code == 200
    assert done.status_code == 302
    assert top(client) == [("cheat", 90)]
    assert list(OperatorAction.objects.order_by("id").values_list("action", "reason")) == [
        ("ban", "aimbot"),
        ("unban", "appeal won"),
    ]


def test_the_ban_action_on_the_list_asks_for_the_reason(
    console, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "a", "points": 1, "match_id": "m1"})
    post_scores({"player_id": "b", "points": 1, "match_id": "m1"})
    chosen = {"action": "ban", "_selected_action": ["a", "b"]}

    asked = console.post("/admin/matches/player/", chosen)
    no_reason = console.post("/admin/matches/player/", {**chosen, "post": "yes", "reason": ""})
    with django_capture_on_commit_callbacks(execute=True):
        done = console.post("/admin/matches/player/", {**chosen, "post": "yes", "reason": "bots"})

    assert asked.status_code == 200
    assert no_reason.status_code == 200
    assert "This field is required." in no_reason.content.decode()
    assert done.status_code == 302
    assert list(Player.objects.order_by("player_id").values_list("ban_reason", flat=True)) == [
        "bots",
        "bots",
    ]


def test_the_results_list_shows_whether_each_result_counted(
    console, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")
    post_scores({"player_id": "cheat", "points": 5, "match_id": "m2"})

    page = console.get("/admin/matches/matchresult/?q=cheat")

    assert "column-counted" in page.content.decode()
    assert sorted((r.match_id, r.counted) for r in page.context["cl"].result_list) == [
        ("m1", True),
        ("m2", False),
    ]
    assert PlayerTotal.objects.get(player_id="cheat").points == 90


def test_after_an_unban_a_closed_season_answers_by_its_archive_not_banned(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "fair", "points": 50, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")
    closing.season_close(season=season, force=True, now=season.ends_at + timedelta(days=1))
    banned = client.get("/api/v1/leaderboard/players/cheat?season=s1")

    with django_capture_on_commit_callbacks(execute=True):
        player_unban(player_id="cheat", reason="appeal")
    after = client.get("/api/v1/leaderboard/players/cheat?season=s1")
    fair = client.get("/api/v1/leaderboard/players/fair?season=s1")

    assert (banned.status_code, banned.json()["error"]["code"]) == (404, "player_banned")
    # Banned when the season closed, so not in its archive: not ranked there, but not banned.
    assert (after.status_code, after.json()["error"]["code"]) == (404, "player_not_ranked")
    assert (fair.status_code, fair.json()["rank"]) == (200, 1)
