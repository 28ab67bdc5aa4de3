"""The players' names and avatars as the boards show them: from the profile directory in Redis
(leaderboards/store/profiles.py), which holds every player's without expiry, and from
PostgreSQL for the ones it lacks, which are filed there on the way.

The directory stays true by versions: each entry carries its player's `profile_changes` + 1
(0 for a player PostgreSQL does not know), and Redis keeps an entry only over an older one. A
changed profile is filed once its change has committed; a reader that read the row before the
change and files it after cannot put the old name back. Should that filing fail (Redis away at
that moment), the reconciliation's walk finds the older version and files the new one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import redis
from django.db import connection

from matches.models import Player

from . import store

logger = logging.getLogger(__name__)

Names = dict[str, tuple[str, str]]  # player_id -> (display_name, avatar_url)


def names_of(found: dict[str, store.Profile]) -> Names:
    return {player_id: (p.display_name, p.avatar_url) for player_id, p in found.items()}


_COLUMNS = ("player_id", "display_name", "avatar_url", "profile_changes")


def _profiles_of(rows: Iterable[tuple[str, str, str, int]]) -> dict[str, store.Profile]:
    """Rows of _COLUMNS as the directory's entries: a player's version is their count of
    profile changes + 1."""
    return {
        player_id: store.Profile(changes + 1, display_name, avatar_url)
        for player_id, display_name, avatar_url, changes in rows
    }


# The players named in one text parameter, split by PostgreSQL (as reconciliation's reads do):
# the reconciliation's walk reads a thousand at a time, and an ORM `__in` of them cost more in
# Python than PostgreSQL took to answer. A player id holds no comma (its check constraint).
_PROFILES = (
    f"SELECT {', '.join(_COLUMNS)} FROM {Player._meta.db_table}"  # noqa: S608 - fixed names
    " WHERE player_id = ANY(string_to_array(%s, ','))"
)


def _rows(player_ids: Sequence[str]) -> dict[str, store.Profile]:
    """The players' profiles as PostgreSQL holds them now, a version-0 one for those it lacks."""
    with connection.cursor() as cursor:
        cursor.execute(_PROFILES, [",".join(player_ids)])
        found = _profiles_of(cursor.fetchall())
    wanted = set(player_ids)
    # Only the players asked for: an id that is not one (a comma in it) names no one else.
    found = {player_id: row for player_id, row in found.items() if player_id in wanted}
    for player_id in player_ids:
        found.setdefault(player_id, store.Profile(0, "", ""))
    return found


def profiles_get(player_ids: Iterable[str]) -> Names:
    """(display_name, avatar_url) for each player: the directory, then one query for those it
    lacks. With Redis away, everything comes from PostgreSQL."""
    ids = list(dict.fromkeys(player_ids))
    if not ids:
        return {}
    try:
        found = store.profiles_read(ids)
    except redis.RedisError:
        found = {}
    names = names_of(found)
    missing = [i for i in ids if i not in names]
    if missing:
        names.update(profiles_load(missing))
    return names


def profiles_load(player_ids: Sequence[str]) -> Names:
    """The profiles from PostgreSQL, filed in the directory (where it holds none or older)."""
    found = _rows(player_ids)
    try:
        store.profiles_file(found)
    except redis.RedisError:
        logger.warning("profile directory unavailable; names read from PostgreSQL")
    return names_of(found)


def profiles_refresh(player_ids: Sequence[str]) -> None:
    """The players' profiles changed and the change has committed: file the new ones."""
    store.profiles_file(_rows(player_ids))


def profiles_repair(player_ids: Sequence[str]) -> int:
    """File the profiles the directory lacks or holds older than PostgreSQL (a filing after a
    change that failed); how many were filed."""
    if not player_ids:
        return 0
    held, rows = store.profiles_read(player_ids), _rows(player_ids)
    stale = {
        player_id: row
        for player_id, row in rows.items()
        if (entry := held.get(player_id)) is None or entry.version < row.version
    }
    return store.profiles_file(stale) if stale else 0


def profiles_backfill(*, page_size: int = 20_000) -> tuple[int, int]:
    """File every player's profile the directory lacks or holds older (after a Redis that kept
    nothing came back, or on a first deploy), a page of players at a time in the order of their
    ids; (players walked, profiles filed)."""
    walked = filed = 0
    last = ""
    while True:
        page = _profiles_of(
            Player.objects.filter(player_id__gt=last)
            .order_by("player_id")
            .values_list(*_COLUMNS)[:page_size]
        )
        if not page:
            return walked, filed
        walked += len(page)
        filed += store.profiles_file(page)
        last = next(reversed(page))  # in the database's order, which may not be Python's
