"""The periodic tasks Celery beat runs, stored in the database (django-celery-beat) so admins
can see and change them."""

from django.db import transaction
from django_celery_beat.models import IntervalSchedule, PeriodicTask

# name -> (task, every N seconds)
PERIODIC_TASKS: dict[str, tuple[str, int]] = {
    "Mirror committed results not yet in Redis": ("leaderboards.tasks.sweep_unmirrored", 5),
    "Create upcoming seasons from board schedules": ("seasons.tasks.plan_seasons", 60),
    "Close seasons whose grace period is over": ("seasons.tasks.close_due_seasons", 60),
    "Reconcile Redis with PostgreSQL": ("leaderboards.tasks.reconcile", 60),
    "Remove expired Redis keys of closed seasons": ("seasons.tasks.remove_expired_standings", 3600),
    "Sample active players' ranks for the rank charts": ("pages.tasks.sample_ranks", 300),
    "Lift temporary bans that ended": ("matches.tasks.unban_expired_players", 60),
}


def periodic_tasks_ensure() -> list[str]:
    """Create the periodic tasks that are missing; leaves ones an admin changed alone."""
    created = []
    with transaction.atomic():
        for name, (task, seconds) in PERIODIC_TASKS.items():
            interval, _ = IntervalSchedule.objects.get_or_create(
                every=seconds, period=IntervalSchedule.SECONDS
            )
            _, was_created = PeriodicTask.objects.get_or_create(
                name=name, defaults={"task": task, "interval": interval}
            )
            if was_created:
                created.append(name)
    return created
