"""The periodic tasks stored under the closing tasks' old names (seasons.tasks.*) are renamed by
leaderboards 0003 to the names of the module that defines them."""

from collections.abc import Iterator

import pytest
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from tests.migrating import migrate, migrated_back

BEFORE = [("leaderboards", "0002_archive_from_seasons")]


@pytest.fixture
def before_the_rename(transactional_db: None) -> Iterator[None]:
    with migrated_back(BEFORE):
        yield


def test_stored_periodic_tasks_take_the_names_of_their_module(before_the_rename):
    # given: the periodic tasks as an earlier release stored them, and one an admin added
    every_minute = IntervalSchedule.objects.create(every=60, period=IntervalSchedule.SECONDS)
    stored = {
        "Close seasons": "seasons.tasks.close_due_seasons",
        "Remove keys": "seasons.tasks.remove_expired_standings",
        "Plan": "seasons.tasks.plan_seasons",
    }
    for name, task in stored.items():
        PeriodicTask.objects.create(name=name, task=task, interval=every_minute)

    # when
    migrate()

    # then: the two closing tasks are renamed; the seasons app's own task keeps its name
    assert dict(PeriodicTask.objects.filter(name__in=stored).values_list("name", "task")) == {
        "Close seasons": "leaderboards.tasks.close_due_seasons",
        "Remove keys": "leaderboards.tasks.remove_expired_standings",
        "Plan": "seasons.tasks.plan_seasons",
    }
