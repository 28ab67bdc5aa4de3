"""The mirror through a real Celery worker on each broker the service supports: Redis and
RabbitMQ (CELERY_BROKER_URL). A Redis Cluster cannot be a broker (kombu knows no Cluster)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .deployment import Deployment
from .load import GameServer, Ledger, Results
from .procs import RabbitVhost, rabbitmq_answers, wait_until

pytestmark = pytest.mark.fault


@pytest.fixture(params=["redis", "rabbitmq"])
def broker_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    """None: a Redis of the deployment's own; else a RabbitMQ virtual host of this test's own."""
    if request.param == "redis":
        yield None
        return
    if not rabbitmq_answers():
        pytest.skip("no RabbitMQ on 127.0.0.1:5672 (with rabbitmqctl) to test the amqp broker")
    vhost = RabbitVhost().create()
    try:
        yield vhost.url()
    finally:
        vhost.delete()


def test_results_are_mirrored_by_a_worker_on_each_broker(
    deployment: Deployment, broker_url: str | None
):
    # given: a deployment whose broker is a Redis of its own, or RabbitMQ
    deployment.start(separate_broker=broker_url is None, broker_url=broker_url)
    ledger = Ledger()
    results = Results(players=50, seed=3)
    server = GameServer(deployment.base_urls[0], deployment.key, ledger)

    # when: a game server posts two batches
    for _ in range(2):
        assert server.post(results.batch(50)).status == 200

    # then: the worker mirrors them through that broker, with no sweep's help
    wait_until(
        lambda: deployment.mirrored(results.players),
        timeout=30,
        what=f"the worker mirroring through {deployment.broker_url}",
    )
    deployment.settle(timeout=30, sweep=False)
    deployment.assert_invariant(confirmed=ledger.confirmed, sent=ledger.sent)
    received, finished = deployment.worker.tasks() if deployment.worker else (set(), set())
    assert received and received == finished
