"""PostgreSQL restarted during ingest: what could not commit is refused with 503 `unavailable`,
never confirmed, and the running web process serves again as soon as the database is back."""

from __future__ import annotations

import time

import pytest

from .deployment import Deployment
from .load import GameServer, Ingest, Ledger, Results
from .procs import wait_until

pytestmark = pytest.mark.fault

REFUSALS = 5
CONFIRMATIONS_AFTER = 30


def test_requests_get_503_while_postgres_restarts_and_the_api_recovers(deployment: Deployment):
    # given: three game servers posting results one by one
    deployment.start()
    ledger = Ledger()
    results = Results(players=300, seed=5)
    servers = [GameServer(deployment.base_urls[0], deployment.key, ledger) for _ in range(3)]

    def answered_since(moment: float, *statuses: int) -> int:
        ledger.fail_on_unexpected()
        with ledger.lock:
            return sum(1 for a in ledger.answers if a.started > moment and a.status in statuses)

    with Ingest(servers=servers, next_body=lambda _: results.single(), pause=0.05) as ingest:
        ingest.wait_for_confirmed(ledger, 50, timeout=30)

        # when: PostgreSQL shuts down (fast: open transactions are rolled back) ...
        deployment.cluster.stop(mode="fast")
        down = time.monotonic()
        wait_until(
            lambda: time.monotonic() - down > 1.5 and answered_since(down, 503) >= REFUSALS,
            timeout=20,
            what=lambda: (
                f"{REFUSALS} requests refused while PostgreSQL is down "
                f"(answers {ledger.statuses()}, unexpected {ledger.unexpected[:2]})"
            ),
        )
        # ... and starts again, while the web process keeps running
        deployment.cluster.start()
        up = time.monotonic()
        wait_until(
            lambda: answered_since(up, 200, 201) >= CONFIRMATIONS_AFTER,
            timeout=20,
            what=lambda: (
                f"{CONFIRMATIONS_AFTER} results confirmed after PostgreSQL came back "
                f"(answers {ledger.statuses()}, unexpected {ledger.unexpected[:2]})"
            ),
        )

    # then: every answer was a confirmation or a 503 `unavailable`, never an error or a hang
    assert ledger.unexpected == [], ledger.unexpected[:5]
    # and: once PostgreSQL was back, every request was confirmed at once (no web restart)
    after = [a for a in ledger.answers if a.started > up]
    assert {a.status for a in after} <= {200, 201}, [(a.status, a.code) for a in after][:10]

    # when: the game servers post the refused results again
    refused = ledger.refused()
    retry = GameServer(deployment.base_urls[0], deployment.key, ledger)
    retried = [retry.post(answer.body) for answer in refused]

    # then: each is confirmed now, accepted or (when its commit had landed before the
    # connection dropped) a duplicate
    assert {a.status for a in retried} <= {200, 201}, [(a.status, a.code) for a in retried]
    print(
        f"answers {ledger.statuses()}; {len(refused)} refused, of which "
        f"{sum(a.status == 200 for a in retried)} had committed"
    )
    assert ledger.unconfirmed() == set()

    # and: the worker, running through the restart, mirrors new results by itself
    fresh = Results(players=10, seed=6, player_prefix="late")
    assert retry.post(fresh.batch(10)).status == 200
    wait_until(
        lambda: deployment.mirrored(fresh.players),
        timeout=20,
        what="the worker mirroring new results after the restart",
    )

    # and: nothing confirmed is missing, and the sweep brings Redis level with PostgreSQL
    deployment.settle(timeout=30)
    deployment.assert_invariant(confirmed=ledger.confirmed, sent=ledger.sent)
