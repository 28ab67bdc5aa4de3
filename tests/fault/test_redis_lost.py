"""Redis lost while results arrive: PostgreSQL's commit is the confirmation, and the sweep and a
rebuild bring the empty Redis back to exactly PostgreSQL's standings."""

from __future__ import annotations

import time

import pytest

from .deployment import Deployment
from .load import GameServer, Ingest, Ledger, Results
from .procs import wait_until

pytestmark = pytest.mark.fault

OUTAGE_CONFIRMATIONS = 30
# How long a game server waits for an answer. Writing a result needs PostgreSQL only; a
# request that waits this long on the lost Redis counts as unanswered.
REQUEST_TIMEOUT = 4.0


@pytest.mark.parametrize(
    "separate_broker",
    [
        pytest.param(True, id="separate-broker"),
        pytest.param(False, id="broker-is-the-same-redis"),
    ],
)
def test_results_are_confirmed_while_redis_is_down_and_the_board_comes_back(
    deployment: Deployment, separate_broker: bool
):
    # given: three game servers posting results one by one
    deployment.start(separate_broker=separate_broker)
    ledger = Ledger()
    results = Results(players=300, seed=3)
    servers = [
        GameServer(deployment.base_urls[0], deployment.key, ledger, timeout=REQUEST_TIMEOUT)
        for _ in range(3)
    ]

    with Ingest(servers=servers, next_body=lambda _: results.single()) as ingest:
        ingest.wait_for_confirmed(ledger, 50, timeout=30)

        # when: Redis dies, and results keep arriving for a while
        deployment.redis.kill()
        down = time.monotonic()

        def confirmed_while_down() -> int:
            ledger.fail_on_unexpected()
            with ledger.lock:
                return sum(1 for a in ledger.answers if a.started > down and a.status in (200, 201))

        wait_until(
            lambda: confirmed_while_down() >= OUTAGE_CONFIRMATIONS and time.monotonic() - down > 2,
            timeout=20,
            what=lambda: (
                f"{OUTAGE_CONFIRMATIONS} results confirmed while Redis is down (got "
                f"{confirmed_while_down()}; answers {ledger.statuses()}; "
                f"{ledger.unexpected[:2]})"
            ),
        )
        # and: Redis comes back empty (it keeps nothing on disk)
        deployment.redis.start()
        up = time.monotonic()
        time.sleep(1.0)

    # then: the API confirmed every result, during the outage too
    assert ledger.unexpected == [], ledger.unexpected[:5]
    assert ledger.unconfirmed() == set()
    slowest = max(
        (a.finished - a.started for a in ledger.answers if down < a.started < up), default=0
    )
    print(f"answers {ledger.statuses()}, slowest during the outage {slowest:.2f} s")

    # when: the operator runs the sweep and rebuilds the season
    deployment.sweep()
    for season in deployment.season_slugs():
        deployment.rebuild(season)

    # then: Redis holds exactly PostgreSQL's standings again
    deployment.settle(timeout=30)
    deployment.assert_invariant(confirmed=ledger.confirmed, sent=ledger.sent)
