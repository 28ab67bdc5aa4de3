"""Boards and seasons as clients see them."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError
from django.utils import timezone

from seasons.models import MAX_SEASON_SECONDS, Season
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def test_boards_list_their_current_and_next_season(client, season):
    upcoming = SeasonFactory(
        board=season.board,
        slug="s2",
        starts_at=season.ends_at,
        ends_at=season.ends_at + timedelta(days=30),
    )

    response = client.get("/api/v1/boards")

    assert response.status_code == 200
    [board] = response.json()
    assert (board["slug"], board["score_operator"], board["sort_order"]) == (
        "global",
        "sum",
        "highest_first",
    )
    assert board["current_season"]["slug"] == "s1"
    assert board["current_season"]["status"] == "running"
    assert board["next_season"]["slug"] == upcoming.slug
    assert board["next_season"]["status"] == "scheduled"


def test_seasons_list_and_detail(client, season):
    listed = client.get("/api/v1/seasons?board=global").json()
    detail = client.get("/api/v1/seasons/s1?board=global").json()

    assert [s["slug"] for s in listed] == ["s1"]
    assert detail == listed[0]
    assert detail == {
        "slug": "s1",
        "name": season.name,
        "board": "global",
        "starts_at": season.starts_at.isoformat().replace("+00:00", "Z"),
        "ends_at": season.ends_at.isoformat().replace("+00:00", "Z"),
        "grace_period": "P0DT01H00M00S",
        "grace_period_seconds": 3600,
        "accepts_results_until": (season.ends_at + timedelta(hours=1))
        .isoformat()
        .replace("+00:00", "Z"),
        "status": "running",
    }


def test_season_status_follows_the_clock_and_the_close_job(db):
    now = timezone.now()
    season = SeasonFactory(starts_at=now + timedelta(days=1), ends_at=now + timedelta(days=2))

    assert season.status_at(now) == "scheduled"
    assert season.status_at(now + timedelta(days=1, hours=1)) == "running"
    assert season.status_at(now + timedelta(days=2)) == "closing"
    season.state = "closed"
    assert season.status_at(now + timedelta(days=3)) == "closed"


def test_unknown_board_or_season_is_404(client, season):
    assert client.get("/api/v1/seasons?board=nope").status_code == 404
    response = client.get("/api/v1/seasons/nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "season_not_found"


def test_a_season_window_must_fit_24_bits(db):
    board = BoardFactory()
    start = timezone.now()
    season = Season(
        board=board,
        slug="long",
        name="Long",
        starts_at=start,
        ends_at=start + timedelta(seconds=MAX_SEASON_SECONDS + 1),
    )

    with pytest.raises(ValidationError) as error:
        season.full_clean()
    assert "2^24" in str(error.value)
    with pytest.raises(IntegrityError):
        season.save()


def test_a_season_must_end_after_it_starts(db):
    start = timezone.now()
    season = Season(board=BoardFactory(), slug="x", name="X", starts_at=start, ends_at=start)

    with pytest.raises(ValidationError):
        season.full_clean()
