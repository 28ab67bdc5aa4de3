"""Mirror tasks coalesced per process: standings committed close together go as one task."""

import threading
import time

from leaderboards.coalescing import TASK_CHANGES, MirrorCoalescer
from matches.outbox import StandingChange


def change(n: int) -> StandingChange:
    return StandingChange(n, 1, f"p{n}", 1000 + n, False)


class Sent:
    """What the coalescer handed over, as the worker would receive it."""

    def __init__(self) -> None:
        self.tasks: list[list[StandingChange]] = []
        self.arrived = threading.Event()

    def __call__(self, changes: list[StandingChange]) -> None:
        self.tasks.append(changes)
        self.arrived.set()


def first_task_sent(sent: Sent, coalescer: MirrorCoalescer) -> None:
    """Let the coalescer send change 0 as a task of its own, so a window starts now."""
    coalescer.add([change(0)])
    assert sent.arrived.wait(timeout=5)
    sent.arrived.clear()


def test_after_a_quiet_spell_the_first_standing_goes_at_once():
    sent = Sent()
    coalescer = MirrorCoalescer(sent, window=lambda: 5.0)
    added = time.monotonic()

    coalescer.add([change(1)])

    assert sent.arrived.wait(timeout=2)
    assert time.monotonic() - added < 2.0
    assert sent.tasks == [[change(1)]]


def test_standings_arriving_within_a_window_of_the_last_task_go_as_one_task():
    sent = Sent()
    coalescer = MirrorCoalescer(sent, window=lambda: 0.5)
    first_task_sent(sent, coalescer)
    first_sent = time.monotonic()

    for n in range(1, 4):
        coalescer.add([change(n)])

    assert sent.arrived.wait(timeout=5)
    # not before the window after the first task ended (less the time the test took to see it)
    assert time.monotonic() - first_sent > 0.3
    time.sleep(0.05)
    assert sent.tasks == [[change(0)], [change(1), change(2), change(3)]]


def test_a_standing_waits_at_most_about_the_window():
    sent = Sent()
    coalescer = MirrorCoalescer(sent, window=lambda: 0.02)
    first_task_sent(sent, coalescer)
    added = time.monotonic()

    coalescer.add([change(1)])

    assert sent.arrived.wait(timeout=5)
    assert time.monotonic() - added < 1.0
    assert sent.tasks == [[change(0)], [change(1)]]


def test_without_a_window_each_commit_is_sent_at_once_in_the_callers_thread():
    sent = Sent()
    coalescer = MirrorCoalescer(sent, window=lambda: 0.0)

    coalescer.add([change(1)])
    coalescer.add([change(2)])

    assert sent.tasks == [[change(1)], [change(2)]]


def test_a_large_window_is_split_into_tasks_of_bounded_size():
    sent = Sent()
    coalescer = MirrorCoalescer(sent, window=lambda: 0.0)
    changes = [change(n) for n in range(TASK_CHANGES + 1)]

    coalescer.add(changes)

    assert [len(task) for task in sent.tasks] == [TASK_CHANGES, 1]


def test_a_writes_standings_go_in_one_task_as_their_outbox_row_is_deleted_whole():
    sent = Sent()
    coalescer = MirrorCoalescer(sent, window=lambda: 0.0)
    # two writes' rows, the second of which would straddle a cut at TASK_CHANGES
    first = [StandingChange(1, 1, f"a{n}", n, False) for n in range(TASK_CHANGES - 10)]
    second = [StandingChange(2, 1, f"b{n}", n, False) for n in range(20)]

    coalescer.add(first + second)

    assert sent.tasks == [first, second]


def test_a_send_that_fails_is_left_to_the_sweep(caplog):
    def broker_down(changes):
        raise ConnectionError("broker down")

    coalescer = MirrorCoalescer(broker_down, window=lambda: 0.0)

    # no exception reaches the request: its results are confirmed already
    coalescer.add([change(1)])

    assert "could not queue the mirror of 1 standings; the sweep will" in caplog.text
