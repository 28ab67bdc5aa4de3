"""Mirror tasks delivered many times and out of order, and one batch posted twice at once:
every result counts once and the board converges on PostgreSQL's totals."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from seasons.scoring import composite_sql

from .deployment import Deployment
from .load import Answer, Body, GameServer, Ledger, Results
from .procs import Timeout, wait_until

pytestmark = pytest.mark.fault

ROUNDS = 20
DELIVERIES = 150
MIRROR_TASK = "leaderboards.tasks.mirror_standings"
# Messages as the write path queues them, built from the totals as they are now: sent again
# later, they carry standings that newer results have since passed. Outbox id 0 is no row.
STANDINGS_NOW = f"""
SELECT 0, t.season_id, t.player_id,
       {
    composite_sql(
        points="t.points",
        reached_at="t.reached_at",
        starts_at="s.starts_at",
        lowest_first="b.sort_order = 'lowest_first'",
    )
},
       b.score_operator = 'sum' AND b.sort_order = 'lowest_first'
FROM matches_playertotal t
JOIN seasons_season s ON s.id = t.season_id JOIN seasons_board b ON b.id = s.board_id
"""


def _post_at_barrier(server: GameServer, body: Body, barrier: threading.Barrier) -> Answer:
    """Post when the other game server does; post again while refused with 503, as the API
    asks a game server to do."""
    barrier.wait()
    give_up = time.monotonic() + 30
    answer = server.post(body)
    while answer.status == 503:
        if time.monotonic() > give_up:
            raise Timeout(f"a batch still refused after 30 s: {answer.code}")
        time.sleep(0.2)
        answer = server.post(body)
    return answer


class MirrorDeliveries(threading.Thread):
    """Sends mirror tasks for random sets of standings to the worker, each message three times
    under one task id (as a redelivery does) and with countdowns that make the worker run them
    in another order than they were sent; goes on until stopped and `DELIVERIES` are out."""

    def __init__(self, deployment: Deployment) -> None:
        super().__init__(name="mirror-deliveries", daemon=True)
        self.deployment = deployment
        self.random = random.Random(8)
        self.posting = threading.Event()
        self.posting.set()
        self.sent = 0
        self.sent_while_posting = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        celery = self.deployment.celery()
        deadline = time.monotonic() + 120
        try:
            # A connection of its own: psycopg connections are not shared between threads.
            with self.deployment.cluster.connect(self.deployment.database) as conn:
                while (self.posting.is_set() or self.sent < DELIVERIES) and (
                    time.monotonic() < deadline
                ):
                    time.sleep(0.01)
                    standings = [list(row) for row in conn.execute(STANDINGS_NOW)]
                    if not standings:
                        continue
                    subset = self.random.sample(
                        standings, self.random.randint(1, min(len(standings), 40))
                    )
                    task_id = str(uuid.uuid4())
                    for _ in range(3):
                        celery.send_task(
                            MIRROR_TASK,
                            args=[subset],
                            task_id=task_id,
                            countdown=self.random.choice([0, 0, 0.2, 0.5, 1.0]),
                        )
                        self.sent += 1
                        self.sent_while_posting += self.posting.is_set()
        except BaseException as exc:  # reported by finish()
            self.error = exc

    def finish(self) -> None:
        self.posting.clear()
        self.join(timeout=60)
        assert not self.is_alive(), "delivering mirror tasks did not end within 60 s"
        assert self.error is None, f"delivering mirror tasks failed: {self.error!r}"


def test_redelivered_out_of_order_tasks_and_a_batch_posted_twice_count_once(
    deployment: Deployment,
):
    # given: two web processes, so the same batch really commits concurrently
    deployment.start(web_servers=2)
    ledger = Ledger()
    results = Results(players=60, seed=7)
    servers = [GameServer(url, deployment.key, ledger) for url in deployment.base_urls]
    deliveries = MirrorDeliveries(deployment)
    accepted: Counter[tuple[str, str]] = Counter()

    # when: each round's batch is posted by both game servers at the same moment (in reverse
    # order every other round), while mirror tasks are delivered over and over
    deliveries.start()
    try:
        with ThreadPoolExecutor(2) as pool:
            for round_ in range(ROUNDS):
                batch = results.batch(100)
                bodies = [batch, batch if round_ % 2 == 0 else batch[::-1]]
                barrier = threading.Barrier(2, timeout=20)
                futures = [
                    pool.submit(_post_at_barrier, s, b, barrier)
                    for s, b in zip(servers, bodies, strict=True)
                ]
                answers = [future.result(timeout=60) for future in futures]
                assert [a.status for a in answers] == [200, 200], ledger.unexpected[:3]
                for answer in answers:
                    assert isinstance(answer.body, list)
                    for item, outcome in zip(answer.body, answer.outcomes, strict=True):
                        accepted[(item["match_id"], item["player_id"])] += outcome == "accepted"
    finally:
        deliveries.finish()

    # then: each result was accepted by exactly one of the two posts
    assert ledger.unexpected == [], ledger.unexpected[:5]
    assert len(accepted) == ROUNDS * 100
    assert set(accepted.values()) == {1}, [k for k, n in accepted.items() if n != 1][:5]
    assert deliveries.sent_while_posting > 0
    print(
        f"answers {ledger.statuses()}; {deliveries.sent} mirror tasks delivered, "
        f"{deliveries.sent_while_posting} while posting"
    )

    # and: the worker's deliveries alone, whatever order they ran in, leave every score
    # exactly where PostgreSQL says (no sweep yet)
    wait_until(
        lambda: not deployment.standings_problems(),
        timeout=30,
        interval=0.5,
        what=lambda: f"the ZSET agreeing with PostgreSQL: {deployment.standings_problems()}",
    )
    deployment.settle(timeout=30)
    deployment.assert_invariant(confirmed=ledger.confirmed, sent=ledger.sent)
