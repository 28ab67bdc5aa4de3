"""Close a season now: archive its standings, check them, give rewards (with a progress bar).
With --force before the season is due it is an operator's close now, audited as such."""

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from config.building_blocks.errors import DomainError
from leaderboards.closing import season_close
from seasons.locks import SeasonBusy, season_job
from seasons.models import DEFAULT_BOARD
from seasons.operator_actions import season_close_forced_record
from seasons.selectors import season_get


class Command(BaseCommand):
    help = "Close a season (or finish closing it). Idempotent: safe to run again after a crash."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--board", default=DEFAULT_BOARD)
        parser.add_argument("--season", required=True)
        parser.add_argument(
            "--force",
            action="store_true",
            help="Close even though the grace period is not over yet.",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: object, **options: object) -> None:
        try:
            season = season_get(
                board_slug=options["board"], season_slug=options["season"], include_hidden=True
            )
            with tqdm(
                unit="player",
                disable=bool(options["no_progress"]),
                desc=f"closing {season.board.slug}/{season.slug}",
            ) as bar:

                def progress(step: str, done: int, total: int) -> None:
                    bar.total = total
                    bar.n = done
                    bar.set_postfix_str(step)
                    bar.refresh()

                # Held across the record and the close (the close takes it again), so a close
                # refused as busy leaves no row behind.
                with season_job(season.pk):
                    if options["force"]:
                        season_close_forced_record(season=season, actor=None)
                    season = season_close(
                        season=season, force=bool(options["force"]), on_progress=progress
                    )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        except SeasonBusy as exc:
            raise CommandError(f"{exc}; try again once it is done.") from exc
        self.stdout.write(
            f"Season {season.board.slug}/{season.slug} is {season.state}: "
            f"{season.archived_players} players archived, {season.rewards.count()} rewards."
        )
