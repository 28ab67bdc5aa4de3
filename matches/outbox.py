"""How committed totals reach the ranking store, without this app importing it.

The write path records the totals it changed in a PendingStanding row in its own transaction
(one row per write) and, once that commits, hands the new standings to whatever the ranking
store connected here (the leaderboards app connects its mirror task when Django starts). A
handler that is missing or fails loses nothing: the rows stay until the sweep mirrors them.

Bans go the same way: a ban, an unban or a lifted temporary ban writes a PendingPlayerRefresh
row in its own transaction, and once that commits the player is handed up to have their live
boards refreshed; the row stays until Redis holds the player's ban state, so a refresh lost
here is applied by the sweep.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class StandingChange:
    """A player's new standing in a season, as the write path committed it."""

    # The PendingStanding row to delete once Redis shows it (shared by the write's standings),
    # and the standing's stamp against corrections.
    pending_id: int
    season_id: int
    player_id: str
    composite: int
    # Sum totals on lowest-first boards only get worse as results arrive; every other rule
    # only gets better. The mirror moves a score in that direction only.
    worsening: bool

    def as_message(self) -> list[object]:
        """A compact JSON-ready form for a task message."""
        return [self.pending_id, self.season_id, self.player_id, self.composite, self.worsening]

    @classmethod
    def from_message(cls, message: Sequence[object]) -> StandingChange:
        pending_id, season_id, player_id, composite, worsening = message
        return cls(int(pending_id), int(season_id), str(player_id), int(composite), bool(worsening))


StandingsHandler = Callable[[list[StandingChange]], None]
PlayerHandler = Callable[[str], None]
ProfilesHandler = Callable[[list[str]], None]
CorrectionHandler = Callable[[int, str], None]
BanHandler = Callable[[str], None]

_standings_handlers: list[StandingsHandler] = []
_correction_handlers: list[CorrectionHandler] = []
_player_handlers: list[PlayerHandler] = []
_profiles_handlers: list[ProfilesHandler] = []
_ban_handlers: list[BanHandler] = []


def connect(
    *,
    standings_changed: StandingsHandler,
    player_changed: PlayerHandler,
    profiles_changed: ProfilesHandler,
    standing_corrected: CorrectionHandler | None = None,
    player_banned: BanHandler | None = None,
) -> None:
    """Called once per process by the app that keeps the ranking store."""
    if player_banned is not None and player_banned not in _ban_handlers:
        _ban_handlers.append(player_banned)
    if standing_corrected is not None and standing_corrected not in _correction_handlers:
        _correction_handlers.append(standing_corrected)
    if standings_changed not in _standings_handlers:
        _standings_handlers.append(standings_changed)
    if player_changed not in _player_handlers:
        _player_handlers.append(player_changed)
    if profiles_changed not in _profiles_handlers:
        _profiles_handlers.append(profiles_changed)


def standings_committed(changes: list[StandingChange]) -> None:
    """After a commit: the results are confirmed already, so a failing handler is only logged."""
    for handler in _standings_handlers:
        try:
            handler(changes)
        except Exception:
            logger.warning("could not hand %d standings to the mirror", len(changes), exc_info=True)


def profiles_committed(player_ids: list[str]) -> None:
    """After a change of names or avatars committed: the boards' copies are out of date. The
    change is committed already, so a failing handler is only logged (the old names show until
    the reconciliation's walk files the new ones)."""
    for handler in _profiles_handlers:
        try:
            handler(player_ids)
        except Exception:
            logger.warning("could not file %d changed profiles", len(player_ids), exc_info=True)


def player_committed(player_id: str) -> None:
    """After a ban or an unban committed: the player's standings must follow. The change is
    committed already and its PendingPlayerRefresh row stays until Redis holds it, so a failing
    handler is only logged (the sweep applies the refresh)."""
    for handler in _player_handlers:
        try:
            handler(player_id)
        except Exception:
            logger.warning("could not refresh the boards of %s yet", player_id, exc_info=True)


def standing_corrected_committed(season_id: int, player_id: str) -> None:
    """After a correction (a voided result) committed: the player's standing in the season must
    be set to what PostgreSQL now has, even if that is worse. Committed already, so a failing
    handler is only logged; the reconciliation repairs the entry."""
    for handler in _correction_handlers:
        try:
            handler(season_id, player_id)
        except Exception:
            logger.warning(
                "could not hand the correction of %s to the store", player_id, exc_info=True
            )


def player_banned_committed(player_id: str) -> None:
    """After a ban committed: the closed seasons' archives that the player's board corrects on a
    ban are to be corrected. Committed already, so a failing handler is only logged; an operator
    corrects those archives from the admin."""
    for handler in _ban_handlers:
        try:
            handler(player_id)
        except Exception:
            logger.warning(
                "could not queue the archive corrections after the ban of %s",
                player_id,
                exc_info=True,
            )
