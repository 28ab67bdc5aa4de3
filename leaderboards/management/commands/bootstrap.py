"""Make a fresh database ready to serve: the default board with a running season, and the
periodic tasks. Safe to run any number of times."""

from django.core.management.base import BaseCommand

from leaderboards.schedules import periodic_tasks_ensure
from seasons.planning import default_board_ensure


class Command(BaseCommand):
    help = "Create the `global` board, a season running now and the periodic tasks, if missing."

    def handle(self, *args: object, **options: object) -> None:
        board, season = default_board_ensure()
        self.stdout.write(
            f"Board '{board.slug}': season '{season.slug}' "
            f"{season.starts_at.isoformat()} to {season.ends_at.isoformat()}"
        )
        for name in periodic_tasks_ensure():
            self.stdout.write(f"Scheduled: {name}")
