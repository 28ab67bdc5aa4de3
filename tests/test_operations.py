"""Commands, schema, docs and admin as an operator uses them."""

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django_celery_beat.models import PeriodicTask

from leaderboards import store
from matches.models import GameServer
from seasons.models import Board, Season
from tests.factories import PlayerTotalFactory

pytestmark = pytest.mark.django_db


def test_create_game_server_prints_a_working_key_on_its_last_line(capsys, client, season):
    call_command("create_game_server", "eu-west-1")

    key = capsys.readouterr().out.strip().splitlines()[-1]
    assert GameServer.objects.get_from_key(key).name == "eu-west-1"
    response = client.post(
        "/api/v1/scores",
        {"player_id": "p", "points": 1, "match_id": "m"},
        format="json",
        HTTP_AUTHORIZATION=f"Api-Key {key}",
    )
    assert response.status_code == 201


def test_bootstrap_is_idempotent(capsys):
    call_command("bootstrap")
    call_command("bootstrap")

    assert Board.objects.get(slug="global").schedule == "monthly"
    statuses = [s.status for s in Season.objects.filter(board__slug="global")]
    assert sorted(statuses) == ["running", "scheduled"]
    assert PeriodicTask.objects.filter(task="leaderboards.tasks.sweep_unmirrored").count() == 1


def test_rebuild_leaderboard_command(capsys, season):
    PlayerTotalFactory.create_batch(5, season=season)

    call_command("rebuild_leaderboard", "--board", "global", "--season", "s1", "--no-progress")

    assert "5 players" in capsys.readouterr().out
    assert store.board_size(season.id) == 5


def test_the_openapi_schema_and_docs_are_served(client):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    docs = client.get("/api/v1/docs/")

    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in (
        "/api/v1/scores",
        "/api/v1/leaderboard/top",
        "/api/v1/boards",
        "/api/v1/leaderboard/players/{player_id}/around",
    ):
        assert path in paths
    assert docs.status_code == 200
    assert b"swagger" in docs.content.lower()


def test_the_admin_needs_a_staff_login_and_shows_seasons(client, season):
    assert client.get("/admin/seasons/season/").status_code == 302
    User.objects.create_superuser("admin", "admin@example.com", "pw")
    client.force_login(User.objects.get(username="admin"))

    page = client.get("/admin/seasons/season/")
    results = client.get("/admin/matches/matchresult/")
    keys = client.get("/admin/matches/gameserver/")

    assert page.status_code == 200
    assert b"s1" in page.content
    assert results.status_code == 200
    assert keys.status_code == 200


def test_the_admin_rebuild_action(client, season, django_capture_on_commit_callbacks):
    PlayerTotalFactory.create_batch(2, season=season)
    User.objects.create_superuser("admin", "admin@example.com", "pw")
    client.force_login(User.objects.get(username="admin"))

    action = {"action": "rebuild_standings", "_selected_action": [season.pk]}

    asked = client.post("/admin/seasons/season/", action)
    assert asked.status_code == 200
    assert b"Yes, rebuild them" in asked.content
    assert store.board_size(season.id) == 0  # nothing until confirmed
    with django_capture_on_commit_callbacks(execute=True):  # the job is sent on commit
        response = client.post("/admin/seasons/season/", {**action, "post": "yes"})

    assert response.status_code == 302
    assert store.board_size(season.id) == 2


def test_the_admin_rejects_a_season_too_long(client, db):
    board = Board.objects.create(slug="b", name="B")
    User.objects.create_superuser("admin", "admin@example.com", "pw")
    client.force_login(User.objects.get(username="admin"))

    response = client.post(
        "/admin/seasons/season/add/",
        {
            "board": board.pk,
            "slug": "long",
            "name": "Long",
            "starts_at_0": "2026-01-01",
            "starts_at_1": "00:00:00",
            "ends_at_0": "2026-12-31",
            "ends_at_1": "00:00:00",
            "grace_period": "01:00:00",
        },
    )

    assert response.status_code == 200
    assert b"2^24" in response.content
    assert not Season.objects.exists()


def test_healthz(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_the_admin_bans_and_unbans_a_player(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    from matches.models import Player

    post_scores({"player_id": "cheat", "points": 5, "match_id": "m"})
    User.objects.create_superuser("admin", "admin@example.com", "pw")
    client.force_login(User.objects.get(username="admin"))

    ban = {"action": "ban", "_selected_action": ["cheat"]}
    asked = client.post("/admin/matches/player/", ban)
    assert b"Yes, ban them" in asked.content
    assert Player.objects.get().banned_at is None  # nothing until confirmed
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/admin/matches/player/", {**ban, "post": "yes", "reason": "aimbot"})
    assert Player.objects.get().banned_at is not None
    assert store.board_size(season.id) == 0
    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            "/admin/matches/player/",
            {"action": "unban", "_selected_action": ["cheat"], "post": "yes"},
        )
    assert Player.objects.get().banned_at is None
    assert store.board_size(season.id) == 1
    assert client.get("/admin/leaderboards/reconciliationrun/").status_code == 200
