"""The write path and the players in PostgreSQL, a module per job: recording results
(`results.py`, with `resolving.py` finding their seasons and `statements.py` the SQL that
stores them), players' profiles (`players.py`) and friends (`friends.py`), and bans with
their refresh outbox (`bans.py`). Callers import from here."""

from .bans import BANS_LOCK, player_ban, player_unban, players_unban_expired
from .friends import friends_limit_check, friends_replace
from .memberships import clan_upsert, player_memberships
from .players import player_upsert
from .posted import PostedResult, ResultOutcome
from .resolving import board_lookups_cache
from .results import results_record

__all__ = [
    "BANS_LOCK",
    "PostedResult",
    "ResultOutcome",
    "board_lookups_cache",
    "clan_upsert",
    "friends_limit_check",
    "friends_replace",
    "player_ban",
    "player_memberships",
    "player_unban",
    "player_upsert",
    "players_unban_expired",
    "results_record",
]
