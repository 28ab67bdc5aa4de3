"""The write path and the players in PostgreSQL, a module per job: recording results
(`results.py`, with `resolving.py` finding their seasons and `statements.py` the SQL that
stores them), players' profiles (`players.py`), and bans with their refresh outbox (`bans.py`).
Callers import from here."""

from .bans import BANS_LOCK, player_ban, player_unban, players_unban_expired
from .players import player_upsert
from .posted import PostedResult, ResultOutcome
from .resolving import board_lookups_cache
from .results import results_record

__all__ = [
    "BANS_LOCK",
    "PostedResult",
    "ResultOutcome",
    "board_lookups_cache",
    "player_ban",
    "player_unban",
    "player_upsert",
    "players_unban_expired",
    "results_record",
]
