"""`manage.py wait_for_database`, which the Procfile runs before Celery beat: beat exits when it
starts during a PostgreSQL outage, so it is started once the database answers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection

from scripts.processes import free_port

ROOT = Path(__file__).resolve().parents[2]


def _wait(database_url: str, *timeout: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
    }
    return subprocess.run(
        [sys.executable, "manage.py", "wait_for_database", *timeout],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_it_returns_at_once_when_the_database_answers():
    db = connection.settings_dict
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    url = f"postgres://{db['USER'] or 'postgres'}@{host}:{port}/postgres"

    done = _wait(url)

    assert (done.returncode, done.stderr.count("waiting for the database")) == (0, 0)


def test_it_waits_and_then_gives_up_when_nothing_answers():
    url = f"postgres://postgres@127.0.0.1:{free_port()}/postgres"
    started = time.monotonic()

    done = _wait(url, "--timeout", "2")

    assert done.returncode == 1
    assert "waiting for the database" in done.stderr
    assert "the database did not answer within 2 s" in done.stderr
    assert time.monotonic() - started >= 2
