"""The periodic tasks beat sends expire before the next one is due, so a queue held up by a long
job never fills with runs of the same task."""

import pytest
from django_celery_beat.models import IntervalSchedule, PeriodicTask
from django_celery_beat.schedulers import ModelEntry

from config.celery import app
from leaderboards.schedules import PERIODIC_TASKS, periodic_tasks_ensure

pytestmark = pytest.mark.django_db

EXPIRES = {
    "Mirror committed results not yet in Redis": 4,
    "Create upcoming seasons from board schedules": 54,
    "Close seasons whose grace period is over": 54,
    "Reconcile Redis with PostgreSQL": 54,
    "Sample the service for the dashboard's charts": 54,
    "Remove expired Redis keys of closed seasons": 3240,
    "Sample active players' ranks for the rank charts": 270,
    "Lift temporary bans that ended": 54,
    "Deliver webhooks that are due": 9,
}


def test_every_periodic_task_expires_a_little_before_the_next_run_is_sent():
    periodic_tasks_ensure()

    stored = dict(PeriodicTask.objects.values_list("name", "expire_seconds"))
    assert {name: stored[name] for name in EXPIRES} == EXPIRES
    assert all(0 < stored[name] < every for name, (_, every) in PERIODIC_TASKS.items())
    # and: beat sends them with that expiry (the message's `expires`)
    closing = PeriodicTask.objects.get(name="Close seasons whose grace period is over")
    assert ModelEntry(closing, app=app).options["expires"] == 54


def test_periodic_tasks_installed_before_they_expired_are_given_an_expiry():
    # given: the rows an earlier release installed, one with an interval an admin changed
    every_minute, _ = IntervalSchedule.objects.get_or_create(
        every=60, period=IntervalSchedule.SECONDS
    )
    every_two, _ = IntervalSchedule.objects.get_or_create(
        every=120, period=IntervalSchedule.SECONDS
    )
    PeriodicTask.objects.create(
        name="Reconcile Redis with PostgreSQL",
        task="leaderboards.tasks.reconcile",
        interval=every_two,
    )
    PeriodicTask.objects.create(
        name="Close seasons whose grace period is over",
        task="seasons.tasks.close_due_seasons",
        interval=every_minute,
    )

    # when
    created = periodic_tasks_ensure()

    # then: the missing ones are created, and the old ones expire too (by their own interval)
    assert sorted(created) == sorted(
        set(PERIODIC_TASKS)
        - {"Reconcile Redis with PostgreSQL", "Close seasons whose grace period is over"}
    )
    reconcile = PeriodicTask.objects.get(name="Reconcile Redis with PostgreSQL")
    assert (reconcile.interval.every, reconcile.expire_seconds) == (120, 108)
    stored = dict(PeriodicTask.objects.values_list("name", "expire_seconds"))
    assert stored["Close seasons whose grace period is over"] == 54


def test_an_expiry_an_admin_chose_is_kept():
    periodic_tasks_ensure()
    PeriodicTask.objects.filter(name="Reconcile Redis with PostgreSQL").update(expire_seconds=30)

    periodic_tasks_ensure()

    assert PeriodicTask.objects.get(name="Reconcile Redis with PostgreSQL").expire_seconds == 30
