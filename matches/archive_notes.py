"""A correction of a closed season reaches its archive, without this app importing the one that
keeps it: the leaderboards app (whose close writes the archive) connects its note writer here
when Django starts. Unlike the outbox's handlers it runs inside the void's transaction, so the
note and the void commit together, and a missing writer is an error."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured

ArchiveNoteWriter = Callable[..., int]

_writers: list[ArchiveNoteWriter] = []


def connect(*, note: ArchiveNoteWriter) -> None:
    """Called once per process: `note(season_id=, player_id=, note=)` writes the note on the
    player's archived standing and returns the rows it changed."""
    _writers[:] = [note]


def archived_standing_note(*, season_id: int, player_id: str, note: str) -> int:
    """In the caller's transaction: note what changed after the close on the player's archived
    standing (their rank, points and reward stay as archived)."""
    if not _writers:
        raise ImproperlyConfigured("No app keeps the archive (the leaderboards app connects).")
    return _writers[0](season_id=season_id, player_id=player_id, note=note)
