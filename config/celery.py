"""The Celery application: the mirror into Redis and the periodic sweeps run here."""

import os
from typing import Any

from celery import Celery
from celery.signals import task_prerun
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("leaderboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
def _check_database_connections(task: Any = None, **kwargs: Any) -> None:
    """Before each task, as Django does before each request: drop connections that broke or
    aged out (CONN_HEALTH_CHECKS tests the rest on first use). Without it, a worker whose
    PostgreSQL restarted would keep failing on its dead connection. A task run eagerly, inside
    the caller's transaction, leaves the caller's connection alone."""
    if task is not None and getattr(task.request, "is_eager", False):
        return
    close_old_connections()
