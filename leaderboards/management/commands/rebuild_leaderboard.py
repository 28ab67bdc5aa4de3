"""Rebuild a season's ZSET from PostgreSQL into a new key and swap it in atomically."""

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from config.building_blocks.errors import DomainError
from leaderboards.services import season_rebuild_by_operator
from leaderboards.snapshots import rebuild_size
from seasons.locks import SeasonBusy
from seasons.models import DEFAULT_BOARD
from seasons.selectors import season_get


class Command(BaseCommand):
    help = (
        "Rebuild a season's leaderboard in Redis from PostgreSQL (readers never see it half-built)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--board", default=DEFAULT_BOARD)
        parser.add_argument("--season", default=None, help="Season slug (default: the current).")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: object, **options: object) -> None:
        try:
            season = season_get(
                board_slug=options["board"], season_slug=options["season"], include_hidden=True
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        expected = rebuild_size(season)
        with tqdm(
            total=expected,
            unit="player",
            disable=bool(options["no_progress"]),
            desc=f"{season.board.slug}/{season.slug}",
        ) as bar:
            try:
                size = season_rebuild_by_operator(season=season, actor=None, on_progress=bar.update)
            except SeasonBusy as exc:
                raise CommandError(f"{exc}; try again once it is done.") from exc
        self.stdout.write(f"Rebuilt {season.board.slug}/{season.slug}: {size} players.")
