""" "Close now" before a season's end resets the board: the season ends at the close, and the
next season takes results from that moment."""

from datetime import timedelta

import pytest
from django.utils import timezone

from leaderboards import closing
from seasons.models import Season, SeasonState
from tests.factories import BoardFactory, PlayerTotalFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def weekly(db):
    """`global`: week 1 started two days ago, week 2 follows it."""
    board = BoardFactory(slug="global", name="Global")
    start = timezone.now().replace(microsecond=0) - timedelta(days=2)
    current = SeasonFactory(
        board=board, slug="w1", starts_at=start, ends_at=start + timedelta(days=7)
    )
    upcoming = SeasonFactory(
        board=board,
        slug="w2",
        starts_at=current.ends_at,
        ends_at=current.ends_at + timedelta(days=7),
    )
    return current, upcoming


def result(player: str, match: str, ended_at) -> dict:  # noqa: ANN001
    return {"player_id": player, "points": 10, "match_id": match, "ended_at": ended_at.isoformat()}


def test_closing_now_ends_the_season_now_and_the_next_one_starts(post_scores, client, weekly):
    current, upcoming = weekly
    before = timezone.now() - timedelta(minutes=5)
    assert post_scores(result("p1", "m1", before)).status_code == 201
    reset_at = timezone.now().replace(microsecond=0)

    closing.season_close(season=current, force=True, now=reset_at)

    current.refresh_from_db()
    upcoming.refresh_from_db()
    assert current.state == SeasonState.CLOSED
    assert (current.ends_at, current.accepts_until) == (reset_at, reset_at)
    assert upcoming.starts_at == reset_at
    shown = client.get("/api/v1/seasons/w1").json()
    assert shown["ends_at"] == shown["accepts_results_until"]
    assert client.get("/api/v1/seasons/w2").json()["status"] == "running"


def test_after_a_reset_results_count_in_the_next_season_and_late_ones_are_refused(
    post_scores, weekly
):
    current, upcoming = weekly
    reset_at = timezone.now().replace(microsecond=0) - timedelta(seconds=30)
    closing.season_close(season=current, force=True, now=reset_at)

    late = post_scores(result("p1", "m-late", reset_at - timedelta(seconds=10)))
    fresh = post_scores(result("p1", "m-new", reset_at + timedelta(seconds=10)))

    assert late.status_code == 409
    assert late.json()["error"]["code"] == "season_closed"
    assert fresh.status_code == 201
    assert fresh.json()["season"] == "w2"
    assert not Season.objects.get(pk=current.pk).results.filter(match_id="m-late").exists()


def test_a_next_season_that_already_has_results_keeps_its_start_and_a_bridge_fills_the_gap(
    weekly,
):
    current, upcoming = weekly
    # A result of week 2 already (a game clock a little ahead): its start cannot move, as its
    # scores count time from it.
    PlayerTotalFactory(season=upcoming)
    reset_at = timezone.now().replace(microsecond=0)

    closing.season_close(season=current, force=True, now=reset_at)

    bridge = Season.objects.get(board=current.board, starts_at=reset_at)
    assert bridge.ends_at == upcoming.starts_at
    assert Season.objects.get(pk=upcoming.pk).starts_at == upcoming.starts_at
