"""Seasons lost with their Redis are healed by the rebuilds worker: while their rebuilds wait on
a long read of PostgreSQL, the mirror's worker keeps mirroring every other board."""

from __future__ import annotations

import pytest
from celery import Celery

from seasons.scoring import composite_sql

from .deployment import Deployment
from .load import GameServer, Ledger, Results
from .procs import wait_until

pytestmark = pytest.mark.fault

MIRROR_TASK = "leaderboards.tasks.mirror_standings"
LOST = ["lost-a", "lost-b"]
# Each season's standings as the write path's messages carry them (outbox id 0 is no row).
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
WHERE t.season_id = %s ORDER BY t.player_id LIMIT 2
"""


def test_heals_of_large_lost_seasons_leave_the_mirror_to_the_other_boards(deployment: Deployment):
    # given: three boards with players, mirrored, and the rebuilds worker running beside the
    # mirror's (two processes each)
    deployment.start(rebuilds=True)
    deployment.boards_add(LOST)
    seasons = deployment.running_seasons()
    server = GameServer(deployment.base_urls[0], deployment.key, Ledger())
    results = Results(players=40, seed=21)
    for board in seasons:
        answer = server.post([{**result, "board": board} for result in results.batch(20)])
        assert answer.status == 200, answer
    deployment.settle(timeout=30, sweep=False)
    messages = {
        board: [list(row) for row in deployment.db().execute(STANDINGS_NOW, [season_id])]
        for board, season_id in seasons.items()
    }
    # A client as the deployment's web processes are, its queues under the deployment's prefix
    # (CELERY_BROKER_TRANSPORT_OPTIONS).
    celery = Celery("heal-tests", broker=deployment.broker_url, set_as_current=False)
    celery.conf.broker_transport_options = {"global_keyprefix": f"{deployment.prefix}celery:"}

    # and: two seasons lose their keys (their Redis node restarted empty)
    with deployment.data_redis() as r:
        for board in LOST:
            lost_keys = list(r.scan_iter(match=f"{deployment.prefix}{{s{seasons[board]}}}:*"))
            assert lost_keys
            r.delete(*lost_keys)

    # and: the lost seasons are large: their rebuilds' read of the totals takes long (a lock
    # held on the table stands for a sort of 100 million rows)
    blocker = deployment.cluster.connect(deployment.database)
    try:
        with blocker.transaction():
            blocker.execute("LOCK TABLE matches_playertotal IN ACCESS EXCLUSIVE MODE")

            # when: results for the lost seasons are mirrored: the mirror finds them lost and
            # queues their heals
            for board in LOST:
                celery.send_task(MIRROR_TASK, args=[messages[board]])

            def heals_received() -> int:
                workers = [deployment.worker, deployment.rebuilds_worker]
                return sum(
                    w.log.read_text(errors="replace").count("heal_season[") for w in workers if w
                )

            def heals_done() -> int:
                assert deployment.rebuilds_worker is not None
                log = deployment.rebuilds_worker.log.read_text(errors="replace")
                return sum(
                    1 for line in log.splitlines() if "heal_season[" in line and "succeeded" in line
                )

            wait_until(lambda: heals_received() >= len(LOST), timeout=20, what="the heals queued")

            # then: a result of the healthy board is mirrored at once all the same
            healthy = celery.send_task(MIRROR_TASK, args=[messages["global"]])
            assert deployment.worker is not None
            wait_until(
                lambda: healthy.id in deployment.worker.tasks()[1],
                timeout=15,
                what="the healthy board's mirror task done while the lost seasons heal",
            )
            assert heals_done() == 0
    finally:
        blocker.close()
        celery.close()

    # and: once their read ends, the lost seasons are whole again, healed by the rebuilds worker
    wait_until(lambda: heals_done() == len(LOST), timeout=30, what="the heals done")
    deployment.settle(timeout=30, sweep=False)
    assert "heal_season[" not in deployment.worker.log.read_text(errors="replace")
