"""The periodic tasks' admin (django-celery-beat's) checks the change permission on periodic tasks
for its actions: a staff account that may only look cannot stop the closes or the mirror's sweep,
nor run a task, by a forged POST."""

from __future__ import annotations

import pytest
from django_celery_beat.models import PeriodicTask

from leaderboards.schedules import periodic_tasks_ensure
from tests.staff import staff

pytestmark = pytest.mark.django_db


def offered(client, url: str) -> list[str]:
    form = client.get(url).context["action_form"]
    return [] if form is None else [name for name, _ in form.fields["action"].choices if name]


CHANGELIST = "/admin/django_celery_beat/periodictask/"


@pytest.mark.parametrize("action", ["disable_tasks", "toggle_tasks", "run_tasks"])
def test_a_view_only_account_cannot_stop_or_run_periodic_tasks(client, action):
    periodic_tasks_ensure()
    looker = staff(client, "support", every_view=True)
    closes = PeriodicTask.objects.get(task="leaderboards.tasks.close_due_seasons")
    before = list(PeriodicTask.objects.order_by("pk").values_list("pk", "enabled", "last_run_at"))

    looker.post(CHANGELIST, {"action": action, "_selected_action": [closes.pk]})

    assert offered(looker, CHANGELIST) == []
    assert (
        list(PeriodicTask.objects.order_by("pk").values_list("pk", "enabled", "last_run_at"))
        == before
    )


def test_the_change_permission_on_periodic_tasks_disables_one(client):
    periodic_tasks_ensure()
    operator = staff(client, "operator", "change_periodictask")
    closes = PeriodicTask.objects.get(task="leaderboards.tasks.close_due_seasons")

    operator.post(CHANGELIST, {"action": "disable_tasks", "_selected_action": [closes.pk]})

    assert offered(operator, CHANGELIST) == [
        "enable_tasks",
        "disable_tasks",
        "toggle_tasks",
        "run_tasks",
    ]
    assert PeriodicTask.objects.get(pk=closes.pk).enabled is False
