"""Long season jobs: one runner per season, each season on its own, and off the mirror's queue."""

from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from config.celery import app
from leaderboards import closing, services, store
from leaderboards.schedules import PERIODIC_TASKS
from seasons.locks import SEASON_JOBS, SeasonBusy
from seasons.models import Season, SeasonState
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def ended_season(slug: str) -> Season:
    now = timezone.now()
    return SeasonFactory(
        board=BoardFactory(slug=slug),
        starts_at=now - timedelta(days=8),
        ends_at=now - timedelta(days=1),
        grace_period=timedelta(hours=1),
    )


@pytest.fixture
def other_worker():
    """A second PostgreSQL session, as another Celery worker would hold."""
    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        dbname=settings["NAME"],
        autocommit=True,
    ) as conn:
        yield conn


def test_a_season_another_worker_is_closing_is_left_to_it(other_worker):
    # given: two seasons due, and another worker in the middle of closing the first
    busy, free = ended_season("busy"), ended_season("free")
    other_worker.execute("SELECT pg_advisory_lock(%s, %s)", [SEASON_JOBS, busy.pk])

    # when
    closed = closing.seasons_close_due()

    # then: the first is untouched by this run, the second closed
    assert closed == [free.pk]
    busy.refresh_from_db()
    free.refresh_from_db()
    assert (busy.state, busy.close_step) == (SeasonState.OPEN, "")
    assert free.state == SeasonState.CLOSED

    # and: once the other worker is gone, the next run closes it
    other_worker.execute("SELECT pg_advisory_unlock(%s, %s)", [SEASON_JOBS, busy.pk])
    assert closing.seasons_close_due() == [busy.pk]


def test_a_rebuild_waits_for_no_one_and_refuses_while_the_season_is_closing(other_worker):
    season = ended_season("busy")
    other_worker.execute("SELECT pg_advisory_lock(%s, %s)", [SEASON_JOBS, season.pk])

    with pytest.raises(SeasonBusy):
        services.season_rebuild_standings(season=season)


def test_a_season_that_fails_to_close_does_not_hold_back_the_others():
    # given: two seasons due; the first one's Redis key is broken (not a sorted set)
    broken, fine = ended_season("broken"), ended_season("fine")
    store.client().set(store.standings_key(broken.pk), "not a sorted set")

    # when
    closed = closing.seasons_close_due()

    # then
    assert closed == [fine.pk]
    broken.refresh_from_db()
    assert broken.state == SeasonState.CLOSING
    assert Season.objects.get(pk=fine.pk).state == SeasonState.CLOSED


@pytest.mark.parametrize(
    ("task", "queue"),
    [
        ("leaderboards.tasks.mirror_standings", "celery"),
        ("leaderboards.tasks.sweep_unmirrored", "celery"),
        ("leaderboards.tasks.close_due_seasons", "jobs"),
        ("leaderboards.tasks.reconcile", "jobs"),
        # Heals and the operator's jobs: neither on the mirror's queue nor behind the
        # periodic jobs' hour-long closes.
        ("leaderboards.tasks.heal_season", "rebuilds"),
        ("leaderboards.tasks.rebuild_season", "rebuilds"),
        ("leaderboards.tasks.close_season", "rebuilds"),
        # The closes' names up to 0.1.0, still accepted (until 0.3.0), keep their queues.
        ("seasons.tasks.close_due_seasons", "jobs"),
        ("seasons.tasks.close_season", "rebuilds"),
    ],
)
def test_long_jobs_have_their_own_queue_and_the_mirror_keeps_the_default(task, queue):
    route = app.amqp.router.route({}, task)

    assert route["queue"].name == queue


@pytest.mark.parametrize("task", sorted({task for task, _ in PERIODIC_TASKS.values()}))
def test_every_periodic_task_names_a_task_the_workers_know(task):
    app.loader.import_default_modules()

    assert task in app.tasks
