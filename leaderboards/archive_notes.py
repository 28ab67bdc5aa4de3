"""Notes on a closed season's archive: a correction after the close (a voided result) leaves the
archived rank, points and reward as they were, since they were final and given, and says here
what the total is now and why. The void (matches/corrections.py) asks for it through
matches/archive_notes.py, inside its own transaction."""

from __future__ import annotations

from .models import ArchivedStanding


def archived_standing_note(*, season_id: int, player_id: str, note: str) -> int:
    """Set the note on the player's archived standing in the season; returns the rows changed
    (none when the player was not archived, e.g. banned at the close)."""
    return ArchivedStanding.objects.filter(season_id=season_id, player_id=player_id).update(
        note=note
    )
