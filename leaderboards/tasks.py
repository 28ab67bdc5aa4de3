"""Celery entry points into the mirror; each is idempotent, so redelivery is harmless."""

from celery import shared_task
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from . import services


@shared_task(
    acks_late=True,
    autoretry_for=(RedisConnectionError, RedisTimeoutError),
    retry_backoff=True,
    retry_backoff_max=30,
    max_retries=5,
)
def mirror_totals(total_ids: list[int]) -> int:
    # If every retry fails (Redis down for long), the sweep mirrors these totals later.
    return services.totals_mirror(total_ids=total_ids)


@shared_task(acks_late=True)
def sweep_unmirrored() -> int:
    return services.totals_mirror_pending()


@shared_task(acks_late=True)
def rebuild_season(season_id: int) -> int:
    from seasons.models import Season

    season = Season.objects.select_related("board").get(pk=season_id)
    return services.season_rebuild_standings(season=season)
