"""A Celery worker SIGKILLed in the middle of mirroring loses nothing that was confirmed."""

from __future__ import annotations

import time

import pytest

from .deployment import Deployment
from .load import GameServer, Ingest, Ledger, Results
from .procs import CeleryWorker, wait_until

pytestmark = pytest.mark.fault

KILLS = 3


def _holding_tasks(worker: CeleryWorker) -> bool:
    received, finished = worker.tasks()
    return bool(received - finished)


def test_a_worker_killed_while_mirroring_batches_loses_nothing(deployment: Deployment):
    # given: a deployment taking batches of 100 results from three game servers, which post
    # a refused batch again (the API's 503 says: not confirmed, retry)
    deployment.start()
    ledger = Ledger()
    results = Results(players=400, seed=1)
    servers = [GameServer(deployment.base_urls[0], deployment.key, ledger) for _ in range(3)]
    interrupted: set[str] = set()

    # when: the worker is SIGKILLed (its whole process group) while it holds mirror tasks,
    # and a new one is started each time, all while batches keep arriving
    with Ingest(servers=servers, next_body=lambda _: results.batch(100), retry=True) as ingest:
        ingest.wait_for_confirmed(ledger, 500, timeout=30)
        for _ in range(KILLS):
            worker = deployment.worker
            assert worker is not None
            wait_until(
                lambda worker=worker: _holding_tasks(worker),
                timeout=20,
                interval=0.005,
                what="the worker holding a mirror task",
            )
            worker.kill()
            received, finished = worker.tasks()
            interrupted |= received - finished
            time.sleep(0.3)  # results keep arriving while no worker runs
            deployment.start_worker()
            time.sleep(0.5)

    # then: every batch was confirmed, the workers' deaths notwithstanding
    assert ledger.unexpected == [], ledger.unexpected[:5]
    assert ledger.unconfirmed() == set()
    assert interrupted, "no kill caught the worker holding a mirror task"

    # and: the restarted worker mirrors new results by itself
    fresh = Results(players=20, seed=2, player_prefix="late")
    late = GameServer(deployment.base_urls[0], deployment.key, ledger)
    assert late.post(fresh.batch(20)).status == 200
    wait_until(
        lambda: deployment.mirrored(fresh.players),
        timeout=20,
        what="the restarted worker mirroring new results",
    )

    # and: the sweep repairs what the killed workers lost; PostgreSQL and Redis agree exactly
    deployment.settle(timeout=30)
    deployment.assert_invariant(confirmed=ledger.confirmed, sent=ledger.sent)
