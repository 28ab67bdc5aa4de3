"""Correct a closed season's archive after bans or voids in it: prints what would change (who
moves, the rewards revoked, granted and changed) and, with --apply, corrects it (audited as the
command line's, told to the webhooks)."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from config.building_blocks.errors import DomainError
from leaderboards.archive_corrections import (
    ArchiveCorrection,
    season_archive_correct,
    season_archive_correction_preview,
)
from seasons.selectors import season_get

# Moves the command prints; the webhooks and the admin's pages have them all.
MOVES_PRINTED = 100


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def correction_lines(correction: ArchiveCorrection) -> list[str]:
    season = correction.season
    rewards = correction.rewards
    lines = [
        f"{season.board.slug}/{season.slug}: {correction.players_before} players archived, "
        f"{correction.players_after} after the correction; {correction.moved} standings change, "
        f"rewards: {rewards.get('revoked', 0)} revoked, {rewards.get('granted', 0)} granted, "
        f"{rewards.get('changed', 0)} changed ({rewards.get('re-ranked', 0)} follow their "
        f"player's new rank); {correction.clans} clans and {correction.segment_rows} segment "
        "ranks change."
    ]
    for change in correction.reward_changes:
        segment = f" in {change.segment}" if change.segment else ""
        if change.kind == "revoked":
            what = f"{change.old_reward_code} (rank {change.old_rank})"
        elif change.kind == "granted":
            what = f"{change.new_reward_code} (rank {change.new_rank})"
        else:
            what = (
                f"{change.old_reward_code} -> {change.new_reward_code} "
                f"(rank {change.old_rank} -> {change.new_rank})"
            )
        lines.append(f"  {change.kind:<8} {change.player_id} {what}{segment}")
    for move in correction.moves[:MOVES_PRINTED]:
        lines.append(
            f"  moves    {move.player_id} rank {_rank(move.old_rank)} -> {_rank(move.new_rank)}, "
            f"points {_rank(move.old_points)} -> {_rank(move.new_points)}"
        )
    if correction.moved > MOVES_PRINTED:
        lines.append(f"  ... and {correction.moved - MOVES_PRINTED} more moves")
    return lines


class Command(BaseCommand):
    help = "Preview (or, with --apply, make) the correction of a closed season's archive."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("board")
        parser.add_argument("season")
        parser.add_argument("--apply", action="store_true", help="Correct the archive.")
        parser.add_argument("--reason", default="", help="Why, for the audit log.")

    def handle(self, *args: object, **options: object) -> None:
        try:
            season = season_get(
                board_slug=options["board"], season_slug=options["season"], include_hidden=True
            )
            preview = season_archive_correction_preview(season=season, limit=MOVES_PRINTED)
            for line in correction_lines(preview):
                self.stdout.write(line)
            if preview.changes_nothing:
                self.stdout.write("The archive is correct already: nothing to change.")
                return
            if not options["apply"]:
                self.stdout.write("Nothing written: run again with --apply to correct it.")
                return
            applied = season_archive_correct(
                season=season, actor=None, reason=str(options["reason"])
            )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"Corrected: {applied.moved} standings changed, audited and told to the webhooks."
        )
