"""Fill the boards' profile directory from PostgreSQL: every player's name and avatar."""

import time

from django.core.management.base import BaseCommand

from leaderboards.profiles import profiles_backfill


class Command(BaseCommand):
    help = (
        "File every player's display name and avatar in the profile directory in Redis, where it "
        "lacks them or holds older ones (after a Redis that kept nothing came back, or on a first "
        "deploy; the boards read names from PostgreSQL meanwhile)."
    )

    def handle(self, *args: object, **options: object) -> None:
        started = time.perf_counter()
        walked, filed = profiles_backfill()
        seconds = time.perf_counter() - started
        self.stdout.write(
            f"{walked} players walked, {filed} profiles filed in {seconds:.1f} s "
            f"({walked / max(seconds, 1e-9):,.0f} players/s)"
        )
