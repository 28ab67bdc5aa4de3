"""Mirror tasks coalesced per web process: a process queues the mirror at most once a window,
and committed standings that arrive meanwhile go to the worker together, as one task.

At thousands of results a second, one task per request meant hundreds of tasks a second, and
the worker's cost per task (the message, two database round trips, the Redis pipeline, the live
notice: about 2 ms, against 4 us per standing) outweighed the writes themselves. With a window
(MIRROR_COALESCE_SECONDS, 100 ms by default) a process sends at most ten tasks a second
however fast results arrive. After a quiet spell the first standing goes at once, so a game that
posts now and then sees no wait; under load a standing waits at most one window. Publishing
happens off the request's thread. Nothing is lost if the process dies with standings in memory:
they are in PostgreSQL's outbox already, and the sweep mirrors them.
"""

from __future__ import annotations

import atexit
import logging
import math
import os
import threading
import time
from collections.abc import Callable

from matches.outbox import StandingChange

logger = logging.getLogger(__name__)

# Standings one task carries at most.
TASK_CHANGES = 5000

Send = Callable[[list[StandingChange]], None]


class MirrorCoalescer:
    """Collects committed standings and hands them to `send` at most once every `window`
    seconds, at once after a quiet spell (in the caller's thread when `window` is 0)."""

    def __init__(self, send: Send, *, window: Callable[[], float]) -> None:
        self._send = send
        self._window = window
        self._pending: list[StandingChange] = []
        self._arrived = threading.Condition()
        self._pid = 0

    def add(self, changes: list[StandingChange]) -> None:
        if self._window() <= 0:
            self._send_in_tasks(changes)
            return
        with self._arrived:
            # A forked child inherits the object but not its thread.
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._pending = []
                threading.Thread(target=self._run, name="mirror-coalescer", daemon=True).start()
                atexit.register(self.flush)
            self._pending.extend(changes)
            self._arrived.notify()

    def flush(self) -> None:
        """Send what is waiting now (the thread's loop, and once more at exit)."""
        with self._arrived:
            changes, self._pending = self._pending, []
        if changes:
            self._send_in_tasks(changes)

    def _run(self) -> None:
        sent_at = -math.inf
        while True:
            with self._arrived:
                while not self._pending:
                    self._arrived.wait()
            # One task a window at most: what arrives within a window of the last task waits for
            # the window to end; after a quiet spell the window has ended already.
            wait = sent_at + self._window() - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            sent_at = time.monotonic()
            self.flush()

    def _send_in_tasks(self, changes: list[StandingChange]) -> None:
        for task in _tasks(changes):
            try:
                self._send(task)
            except Exception:
                # Confirmed already: the outbox keeps them for the sweep.
                logger.warning(
                    "could not queue the mirror of %d standings; the sweep will",
                    len(task),
                    exc_info=True,
                )


def _tasks(changes: list[StandingChange]) -> list[list[StandingChange]]:
    """The changes in tasks of about TASK_CHANGES, each outbox row's standings in one task: the
    task that mirrors a row deletes it, so a row split across two tasks would leave the second
    one's standings outside the outbox, lost to the sweep if that task were lost."""
    rows: dict[int, list[StandingChange]] = {}
    for change in changes:
        rows.setdefault(change.pending_id, []).append(change)
    tasks: list[list[StandingChange]] = [[]]
    for row in rows.values():
        if tasks[-1] and len(tasks[-1]) + len(row) > TASK_CHANGES:
            tasks.append([])
        tasks[-1].extend(row)
    return [task for task in tasks if task]
