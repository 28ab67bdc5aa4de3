"""The Celery tasks' names: each that of the module and function defining it. The closing tasks'
names up to 0.1.0 (seasons.tasks.*, from when they lived in the seasons app) are still accepted
until 0.3.0: a message or a stored periodic task under one runs the same code."""

from datetime import timedelta

import pytest
from django.utils import timezone

from config.celery import app
from leaderboards import store
from seasons.models import Season, SeasonState
from tests.factories import BoardFactory, PlayerTotalFactory, SeasonFactory

pytestmark = pytest.mark.django_db

OLD_NAMES = {
    "seasons.tasks.close_due_seasons": "leaderboards.tasks.close_due_seasons",
    "seasons.tasks.close_season": "leaderboards.tasks.close_season",
    "seasons.tasks.remove_expired_standings": "leaderboards.tasks.remove_expired_standings",
}


def ended_season(slug: str) -> Season:
    now = timezone.now()
    season = SeasonFactory(
        board=BoardFactory(slug=slug),
        starts_at=now - timedelta(days=8),
        ends_at=now - timedelta(days=1),
        grace_period=timedelta(hours=1),
    )
    PlayerTotalFactory(season=season, player__player_id="p1", points=5)
    return season


def test_every_task_is_named_after_the_module_and_function_that_define_it():
    app.loader.import_default_modules()

    named_otherwise = {
        name
        for name, task in app.tasks.items()
        if not name.startswith("celery.") and name != f"{task.__module__}.{task.__name__}"
    }

    assert named_otherwise == set(OLD_NAMES)
    assert set(OLD_NAMES.values()) <= set(app.tasks)


@pytest.mark.parametrize(("old", "new"), sorted(OLD_NAMES.items()))
def test_an_old_name_runs_with_its_new_names_limits(old, new):
    app.loader.import_default_modules()
    by_old, by_new = app.tasks[old], app.tasks[new]

    assert (by_old.acks_late, by_old.time_limit) == (by_new.acks_late, by_new.time_limit)


def test_the_periodic_close_sent_under_its_old_name_closes_the_seasons_due():
    due = ended_season("due")

    closed = app.signature("seasons.tasks.close_due_seasons").apply_async().get()

    assert closed == [due.pk]
    due.refresh_from_db()
    assert due.state == SeasonState.CLOSED


def test_an_operators_close_sent_under_its_old_name_closes_the_season():
    season = ended_season("asked")

    state = (
        app.signature("seasons.tasks.close_season", args=(season.pk,), kwargs={"force": True})
        .apply_async()
        .get()
    )

    assert state == SeasonState.CLOSED
    season.refresh_from_db()
    assert season.state == SeasonState.CLOSED


def test_the_removal_of_expired_keys_sent_under_its_old_name_removes_them():
    # given: a closed season whose board keeps its key no longer
    season = ended_season("kept")
    app.signature("leaderboards.tasks.close_season", args=(season.pk,)).apply_async()
    Season.objects.filter(pk=season.pk).update(closed_at=timezone.now() - timedelta(days=400))
    assert store.standings_exist(season.pk)

    # when
    removed = app.signature("seasons.tasks.remove_expired_standings").apply_async().get()

    # then
    assert removed == 1
    assert not store.standings_exist(season.pk)
