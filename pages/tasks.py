"""Celery entry points of the player pages: the periodic rank sampling behind the rank charts."""

from celery import shared_task

from . import sampling


@shared_task(acks_late=True)
def sample_ranks() -> int:
    # Idempotent: samples are keyed by their interval, so a redelivered run adds nothing.
    sampling.rank_samples_prune()
    return sampling.rank_samples_take()
