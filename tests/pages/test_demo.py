"""`make demo` (pages/demo.py) says at once when no server answers, and its game-server key is
revoked however it is stopped (Ctrl-C, SIGTERM, a closed terminal), and expires soon after a
hard kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from matches.models import GameServer
from scripts.processes import free_port

pytestmark = pytest.mark.django_db(transaction=True)


def _demo() -> subprocess.Popen[str]:
    database = connection.settings_dict
    url = f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    return subprocess.Popen(
        [sys.executable, "-m", "pages.demo", "--url", f"http://127.0.0.1:{free_port()}"],
        env={**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings.local"},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_the_demo_says_it_waits_and_revokes_its_key_however_it_is_stopped(stop):
    demo = _demo()
    try:
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = demo.stdout.readline()
            lines.append(line)
            if "waiting up to" in line:
                break
        key = GameServer.objects.get(name__startswith="demo ")
        active_before = (key.revoked, key.expiry_date - timezone.now())

        demo.send_signal(stop)
        output = demo.communicate(timeout=30)[0]
    finally:
        if demo.poll() is None:
            demo.kill()

    assert any("start `make run` in another terminal" in line for line in lines), lines
    assert active_before[0] is False
    assert timedelta(minutes=9) < active_before[1] <= timedelta(minutes=10)
    assert "its key is revoked" in output
    assert GameServer.objects.get(pk=key.pk).revoked is True
