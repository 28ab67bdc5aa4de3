"""Prometheus metrics of the leaderboard: results accepted, mirror lag, queue depth, drift.

Request latency comes from django-prometheus' middleware. Gauges that describe shared state
(lag, queue depth, drift) are read when Prometheus scrapes, so every web process reports the
same truth whichever one is scraped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta

from amqp.exceptions import ChannelError
from django.db.models import Sum
from django.utils import timezone
from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from config.celery import app

from .models import ReconciliationRun
from .services import mirror_lag_seconds

logger = logging.getLogger(__name__)


def celery_queue_depth(queue: str = "celery") -> int | None:
    try:
        with app.connection_for_read() as connection:
            connection.ensure_connection(max_retries=1, timeout=1)
            try:
                declared = connection.default_channel.queue_declare(queue=queue, passive=True)
            except ChannelError:
                return 0  # the queue does not exist until the first task is sent
            return int(declared.message_count)
    except Exception:
        logger.warning("could not read the depth of Celery queue %s", queue, exc_info=True)
        return None


def reconciliation_drift() -> int:
    """Drift found by the latest reconciliation of each season (last 10 minutes)."""
    recent = ReconciliationRun.objects.filter(
        finished_at__gte=timezone.now() - timedelta(minutes=10)
    )
    return int(recent.aggregate(total=Sum("drift"))["total"] or 0)


class LeaderboardCollector(Collector):
    def describe(self) -> list[GaugeMetricFamily]:
        # Without describe(), registering would call collect() and query the database while
        # Django is still starting.
        return []

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            lag = mirror_lag_seconds()
            drift = reconciliation_drift()
        except Exception:
            logger.warning("could not read mirror metrics", exc_info=True)
            return
        yield GaugeMetricFamily(
            "leaderboard_mirror_lag_seconds",
            "Age of the oldest committed total not yet mirrored into Redis.",
            value=lag,
        )
        yield GaugeMetricFamily(
            "leaderboard_reconciliation_drift",
            "Entries that disagreed with PostgreSQL in the last 10 minutes of reconciliation.",
            value=drift,
        )
        depth = celery_queue_depth()
        if depth is not None:
            yield GaugeMetricFamily(
                "leaderboard_celery_queue_depth",
                "Tasks waiting in the Celery queue.",
                value=depth,
            )


_registered = False


def register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(LeaderboardCollector())
        _registered = True
