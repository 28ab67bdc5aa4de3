"""Export a closed season's final standings to CSV or Parquet."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.building_blocks.errors import DomainError
from leaderboards.exports import standings_export_csv, standings_export_parquet
from seasons.models import DEFAULT_BOARD
from seasons.selectors import season_get


class Command(BaseCommand):
    help = "Write a closed season's archived standings (with rewards) to a CSV or Parquet file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--board", default=DEFAULT_BOARD)
        parser.add_argument("--season", required=True)
        parser.add_argument("--format", choices=["csv", "parquet"], default="csv")
        parser.add_argument("--output", required=True, help="File to write.")

    def handle(self, *args: object, **options: object) -> None:
        output = Path(str(options["output"]))
        try:
            season = season_get(
                board_slug=options["board"], season_slug=options["season"], include_hidden=True
            )
            if options["format"] == "csv":
                with output.open("w", newline="") as out:
                    rows = standings_export_csv(season=season, out=out)
            else:
                rows = standings_export_parquet(season=season, out=str(output))
        except DomainError as exc:
            output.unlink(missing_ok=True)
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Wrote {rows} standings to {output}.")
