"""Batches arriving while the worker mirrors earlier ones are confirmed at the first try: the
write path and the mirror lock the same totals, and must never deadlock."""

from __future__ import annotations

import pytest

from .deployment import Deployment
from .load import GameServer, Ingest, Ledger, Results

pytestmark = pytest.mark.fault

GAME_SERVERS = 4
BATCHES = 20  # per game server


def test_batches_and_the_mirror_never_deadlock(deployment: Deployment):
    # given: two web processes and a worker mirroring every committed batch
    deployment.start(web_servers=2)
    ledger = Ledger()
    results = Results(players=150, seed=9)
    servers = [
        GameServer(deployment.base_urls[i % 2], deployment.key, ledger) for i in range(GAME_SERVERS)
    ]

    # when: game servers post batches of 100 largely overlapping players without pause
    with Ingest(servers=servers, next_body=lambda _: results.batch(100), limit=BATCHES) as ingest:
        ingest.wait_until_done(timeout=90)

    # then: every batch was confirmed the first time; none was refused for a deadlock
    assert ledger.unexpected == [], ledger.unexpected[:5]
    assert ledger.statuses() == {200: GAME_SERVERS * BATCHES}
    deployment.settle(timeout=30)
    deployment.assert_invariant(confirmed=ledger.confirmed, sent=ledger.sent)
