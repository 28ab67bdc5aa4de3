"""Redis tied to the PostgreSQL database it mirrors: the identity claim that keeps another
database's standings from being read as this one's, and the sweep of the deployment's keys."""

from __future__ import annotations

import logging
import threading

from django.conf import settings

from config.building_blocks.redis import Connection, ScriptCall, leaderboard, profiles, script_run

from ..identity import database_identity
from .keys import identity_key
from .profiles import keys_pattern as profile_keys_pattern
from .scripts import IDENTITY_CLAIM

logger = logging.getLogger(__name__)


# Season ids repeat from one PostgreSQL database to the next (leaderboards/identity.py), so what
# Redis holds is tied to the database it mirrors. The deployment's identity key names that database,
# and each whole marker holds its identity. A process's first use of the store claims the key: one
# that finds another database's identity there deletes that database's keys (the seasons' and the
# profiles'), so nothing of it is taken for this database's; reconciliation claims it again every
# run. The markers are the second line: a set marked by another database (a Redis brought back from
# elsewhere while running, or kept from before the identity was, marked '1') is never read: reads
# answer 503, the mirror does not mark it, and the season is rebuilt from PostgreSQL.


_claimed: str | None = None  # the identity this process claimed Redis for
_claim_lock = threading.Lock()


def claimed_identity() -> str:
    """This database's identity; the first use in a process claims Redis for it."""
    identity = database_identity()
    if _claimed != identity:
        with _claim_lock:
            if _claimed != identity:
                identity_claim()
    return identity


def claim_forget() -> None:
    """Claim Redis again at the next use (tests that point this process at another database,
    as a new process would be)."""
    global _claimed
    _claimed = None


def identity_claim() -> str | None:
    """Claim Redis for this database: where the identity key named another database, delete that
    database's keys and return its identity (None: Redis held this database's, or nothing)."""
    global _claimed
    identity = database_identity()
    held = script_run(ScriptCall(IDENTITY_CLAIM, [identity_key()], [identity]))
    if held:
        # The seasons' keys (each behind its hash tag) and the profile directory's (their names
        # and avatars are that database's).
        removed = _keys_delete(leaderboard(), f"{settings.LEADERBOARD_KEY_PREFIX}{{*")
        removed += _keys_delete(profiles(), profile_keys_pattern())
        logger.warning(
            "Redis held the standings of another database (%s, this one is %s): "
            "deleted its %d keys; seasons are rebuilt from PostgreSQL",
            held,
            identity,
            removed,
        )
    _claimed = identity
    return held or None


def identity_current() -> bool:
    """Whether Redis holds this database's standings: claimed by this process (at its first use,
    now if not yet) and not claimed by another database since (a second deployment on the same
    key prefix, which the readiness probe reports)."""
    identity = claimed_identity()
    return leaderboard().client().get(identity_key()) in (identity, None)


def delete_prefixed_keys() -> int:
    """Remove every key under this deployment's prefix (used by the test suite's cleanup)."""
    removed = _keys_delete(leaderboard(), f"{settings.LEADERBOARD_KEY_PREFIX}*")
    if profiles() is not leaderboard():  # the directory on a Redis of its own
        removed += _keys_delete(profiles(), profile_keys_pattern())
    return removed


def _keys_delete(connection: Connection, *patterns: str) -> int:
    """Remove every key matching one of the patterns (a SCAN of the whole keyspace)."""
    r = connection.client()
    removed = 0
    for pattern in patterns:
        batch: list[str] = []
        for key in r.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) >= 500:
                removed += r.unlink(*batch)
                batch.clear()
        if batch:
            removed += r.unlink(*batch)
    return removed


def ping() -> bool:
    return bool(leaderboard().client().ping())
