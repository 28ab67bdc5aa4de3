"""`manage.py wait_for_database`: return once PostgreSQL accepts connections.

Celery beat reads its schedule from the database as it starts and exits when it cannot (a beat
restarted while PostgreSQL restarts, found by the fault campaign); a running beat rides out an
outage. The Procfile starts beat after this, so a start during an outage waits instead of dying.
"""

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import OperationalError, connections


class Command(BaseCommand):
    help = "Wait until the database accepts connections (for processes that need it to start)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--timeout", type=float, default=300.0, help="seconds to wait at most (default 300)"
        )

    def handle(self, *args: Any, timeout: float, **options: Any) -> None:
        deadline = time.monotonic() + timeout
        told = False
        connection = connections["default"]
        while True:
            try:
                connection.ensure_connection()
            except OperationalError as exc:
                if time.monotonic() >= deadline:
                    raise CommandError(f"the database did not answer within {timeout:g} s") from exc
                if not told:
                    self.stderr.write(f"waiting for the database: {exc}".splitlines()[0])
                    told = True
                connection.close()
                time.sleep(1)
                continue
            connection.close()
            return
