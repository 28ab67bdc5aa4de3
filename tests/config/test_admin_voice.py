"""The admin speaks the product's words: its own name, counts in words ("1 result", never
"result(s)"), a ban filter of "Banned" / "Not banned", times that say their zone (UTC, and a
board's own beside it), and no library banner on the console."""

import subprocess
import sys
from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import User

from config.building_blocks.admin import counted, in_zones
from matches.models import Player
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def test_the_admin_names_the_service_not_django(operator):
    index = operator.get("/admin/").content.decode()

    assert "Leaderboard administration" in index
    assert "Django administration" not in index


@pytest.mark.parametrize(
    ("count", "noun", "said"),
    [(0, "result", "0 results"), (1, "result", "1 result"), (2, "player", "2 players")],
)
def test_counts_are_said_in_words(count, noun, said):
    assert counted(count, noun) == said


def test_players_filter_by_banned_or_not(operator, post_scores, season):
    body = [{"player_id": p, "points": 10, "match_id": "m1"} for p in ("fair", "cheat")]
    assert post_scores(body).status_code == 200
    Player.objects.filter(player_id="cheat").update(banned_at=season.starts_at)

    listing = operator.get("/admin/matches/player/").content.decode()
    banned = operator.get("/admin/matches/player/?banned=yes").content.decode()
    fair = operator.get("/admin/matches/player/?banned=no").content.decode()

    assert "Not banned" in listing
    assert "Empty" not in listing
    assert ("cheat" in banned, "fair" in banned) == (True, False)
    assert ("cheat" in fair, "fair" in fair) == (False, True)


def test_a_management_command_prints_no_library_banner():
    done = subprocess.run(
        [sys.executable, "manage.py", "check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "AXES" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("zone", "said"),
    [
        ("UTC", "2026-06-08 00:00 UTC"),
        ("Europe/Berlin", "2026-06-08 00:00 UTC (02:00 Europe/Berlin)"),
        ("America/New_York", "2026-06-08 00:00 UTC (2026-06-07 20:00 America/New_York)"),
    ],
)
def test_times_say_utc_and_the_boards_zone(zone, said):
    assert in_zones(datetime(2026, 6, 8, tzinfo=UTC), zone) == said


def test_the_seasons_list_says_utc_and_the_boards_zone(operator):
    board = BoardFactory(slug="tokyo", schedule_timezone="Asia/Tokyo")
    SeasonFactory(
        board=board,
        slug="t1",
        starts_at=datetime(2026, 6, 8, tzinfo=UTC),
        ends_at=datetime(2026, 6, 15, tzinfo=UTC),
    )

    listing = operator.get("/admin/seasons/season/").content.decode()

    assert "2026-06-08 00:00 UTC (09:00 Asia/Tokyo)" in listing
    assert "Starts (UTC, and in the board&#x27;s zone)" in listing
