"""Celery entry points of the webhooks' delivery, on their own queue (CELERY_WEBHOOKS_QUEUE) so
no endpoint, however slow, holds up the mirror. Idempotent: a run posts only what is due and
unclaimed, so a task delivered twice, or a hint and the sweep together, post nothing twice."""

from __future__ import annotations

import logging

from celery import shared_task
from django.core.cache import cache

from . import delivery, history

logger = logging.getLogger(__name__)

# A run claims for a minute, then finishes its POSTs (each bounded by its endpoint's timeout,
# at most a minute); past this, the worker stops it and the claims run out for the next run.
DELIVERY_TIME_LIMIT_SECONDS = 5 * 60


# A run queued for an endpoint and not started yet answers every later hint for it: busy
# writers (a mirror telling threshold crossings many times a second) queue one run at a time per
# endpoint, not one per commit. The run forgets the mark as it starts, before it reads what is
# due, so a delivery committed after that gets a run of its own. A run lost with the broker
# leaves its mark for QUEUED_SECONDS at most; the sweep delivers meanwhile.
QUEUED_KEY = "webhooks:run-queued:{}"
QUEUED_SECONDS = 30


@shared_task(acks_late=True, time_limit=DELIVERY_TIME_LIMIT_SECONDS)
def deliver_webhooks(endpoint_ids: list[int] | None = None) -> int:
    """The deliveries due now, of these endpoints or (the periodic sweep) of every endpoint."""
    if endpoint_ids:
        cache.delete_many([QUEUED_KEY.format(pk) for pk in endpoint_ids])
    return delivery.deliveries_send_due(endpoint_ids=endpoint_ids)


@shared_task
def prune_webhook_history() -> int:
    """Old events and their finished deliveries, a batch an hour (WEBHOOK_KEEP_DAYS)."""
    return history.webhook_history_prune()


def deliveries_queue(*, endpoint_ids: list[int]) -> None:
    """After a commit that made deliveries: start them now rather than at the next sweep. The
    change is committed already, so the broker away only delays them until the sweep."""
    # add() is False only for a mark that is there: Redis away (None) queues all the same.
    fresh = [
        pk
        for pk in endpoint_ids
        if cache.add(QUEUED_KEY.format(pk), 1, QUEUED_SECONDS) is not False
    ]
    if not fresh:
        return
    try:
        deliver_webhooks.apply_async((fresh,), retry=False)
    except Exception:
        cache.delete_many([QUEUED_KEY.format(pk) for pk in fresh])
        logger.warning("could not queue webhooks to %s; the sweep sends them", fresh, exc_info=True)
