"""The periodic tasks Celery beat runs, stored in the database (django-celery-beat) so admins
can see and change them."""

from django.db import transaction
from django_celery_beat.models import IntervalSchedule, PeriodicTask

# name -> (task, every N seconds)
PERIODIC_TASKS: dict[str, tuple[str, int]] = {
    "Mirror committed results not yet in Redis": ("leaderboards.tasks.sweep_unmirrored", 5),
    "Refresh boards for bans not yet in Redis": ("leaderboards.tasks.sweep_player_refreshes", 5),
    "Create upcoming seasons from board schedules": ("seasons.tasks.plan_seasons", 60),
    "Close seasons whose grace period is over": ("leaderboards.tasks.close_due_seasons", 60),
    "Reconcile Redis with PostgreSQL": ("leaderboards.tasks.reconcile", 60),
    "Sample the service for the dashboard's charts": ("leaderboards.tasks.sample_operations", 60),
    "Remove expired Redis keys of closed seasons": (
        "leaderboards.tasks.remove_expired_standings",
        3600,
    ),
    "Sample active players' ranks for the rank charts": ("pages.tasks.sample_ranks", 300),
    "Lift temporary bans that ended": ("matches.tasks.unban_expired_players", 60),
    "Deliver webhooks that are due": ("webhooks.tasks.deliver_webhooks", 10),
    "Prune old webhook events": ("webhooks.tasks.prune_webhook_history", 3600),
}


def expire_seconds_for(every: int) -> int:
    """How long a run beat sent may wait in its queue: a little less than the interval, so
    while a long job holds the queue's worker at most one run of each task waits, and the ones
    it outlived are dropped unrun (never run late, nor twice after a broker's redelivery)."""
    return max(1, every * 9 // 10)


def periodic_tasks_ensure() -> list[str]:
    """Create the periodic tasks that are missing; leaves ones an admin changed alone, but
    gives an expiry to those installed without one (by their interval, whatever it is now)."""
    created = []
    with transaction.atomic():
        for name, (task, seconds) in PERIODIC_TASKS.items():
            interval, _ = IntervalSchedule.objects.get_or_create(
                every=seconds, period=IntervalSchedule.SECONDS
            )
            periodic, was_created = PeriodicTask.objects.get_or_create(
                name=name,
                defaults={
                    "task": task,
                    "interval": interval,
                    "expire_seconds": expire_seconds_for(seconds),
                },
            )
            if was_created:
                created.append(name)
            elif (
                periodic.expire_seconds is None
                and periodic.expires is None
                and periodic.interval is not None
            ):
                every = int(periodic.interval.schedule.run_every.total_seconds())
                periodic.expire_seconds = expire_seconds_for(every)
                periodic.save(update_fields=["expire_seconds"])
    return created
