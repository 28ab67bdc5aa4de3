"""Rank sampling for the rank charts: who is sampled, with what, and that reruns add nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from leaderboards import store
from leaderboards.schedules import PERIODIC_TASKS
from matches.models import MatchResult
from pages import sampling
from pages.models import RankSample
from pages.tasks import sample_ranks

from . import data

pytestmark = pytest.mark.django_db


def samples() -> list[tuple[str, int, int, datetime]]:
    return list(
        RankSample.objects.order_by("sampled_at", "rank").values_list(
            "player_id", "rank", "points", "sampled_at"
        )
    )


def test_the_sampling_instant_is_the_start_of_its_five_minutes():
    at = datetime(2026, 11, 30, 12, 34, 56, 789, tzinfo=UTC)

    assert sampling.sampling_instant(at) == datetime(2026, 11, 30, 12, 30, tzinfo=UTC)


def test_players_who_played_in_the_last_interval_are_sampled_with_their_live_rank(season, scores):
    scores({"p1": 30, "p2": 20, "p3": 10})
    now = timezone.now()
    instant = sampling.sampling_instant(now)
    # p3 last played before the previous instant: nothing new to plot.
    MatchResult.objects.filter(player_id="p3").update(received_at=instant - timedelta(minutes=6))

    taken = sampling.rank_samples_take(now=now)

    assert taken == 2
    assert samples() == [("p1", 1, 30, instant), ("p2", 2, 20, instant)]


def test_a_rerun_in_the_same_interval_writes_nothing_twice(season, scores):
    scores({"p1": 30, "p2": 20})
    now = timezone.now()
    sampling.rank_samples_take(now=now)

    sampling.rank_samples_take(now=now)

    assert RankSample.objects.count() == 2


def test_the_next_interval_adds_a_point_with_the_new_rank(season, scores):
    scores({"p1": 30, "p2": 20})
    now = timezone.now()
    sampling.rank_samples_take(now=now)
    scores({"p2": 50})

    sampling.rank_samples_take(now=now + sampling.SAMPLE_INTERVAL)

    later = sampling.sampling_instant(now + sampling.SAMPLE_INTERVAL)
    assert [s for s in samples() if s[3] == later] == [("p2", 1, 70, later), ("p1", 2, 30, later)]


def test_players_missing_from_the_live_board_are_skipped(season, scores):
    scores({"p1": 30, "p2": 20})
    store.remove_players(season.pk, ["p1"])

    sampling.rank_samples_take(now=timezone.now())

    assert [s[:3] for s in samples()] == [("p2", 1, 20)]


def test_seasons_not_running_are_not_sampled_and_closed_ones_are_pruned(board, season, scores):
    scores({"p1": 30})
    sampling.rank_samples_take(now=timezone.now())
    closed = data.closed_season(board, [("p1", 5)], rewards={})
    RankSample.objects.create(
        season=closed, player_id="p1", rank=1, points=5, sampled_at=closed.ends_at
    )

    assert sampling.rank_samples_take(now=closed.ends_at - timedelta(minutes=1)) == 0
    assert sampling.rank_samples_prune() == 1
    assert list(RankSample.objects.values_list("season__slug", flat=True)) == ["s12"]


def test_the_periodic_task_prunes_then_samples_every_five_minutes(board, season, scores):
    scores({"p1": 30})

    assert sample_ranks() == 1
    assert PERIODIC_TASKS["Sample active players' ranks for the rank charts"] == (
        "pages.tasks.sample_ranks",
        300,
    )
