"""What the gateway caches beside the standings: answers shared by every process for a moment (the
top pages) and the players' profiles for the boards' names; synchronous and from the event loop."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from config.building_blocks.redis import client, loop_mget, loop_send, mget

from .keys import season_key


# Answers built once and shared by every process for a moment (the top pages): the rendered body,
# its validator and the times it was built and goes stale, one string per answer, in the
# season's slot.
@dataclass(frozen=True, slots=True)
class SharedAnswer:
    body: str
    etag: str
    built_at_ms: int
    expires_at_ms: int


def top_answer_key(
    season_id: int, *, offset: int, limit: int, rank_style: str, segment: str | None = None
) -> str:
    within = "" if segment is None else f":{segment}"
    return season_key(season_id, f"top:{offset}:{limit}:{rank_style}{within}")


def _shared_answer(raw: str | None) -> SharedAnswer | None:
    if raw is None:
        return None
    built, expires, etag, body = raw.split(":", 3)
    return SharedAnswer(body, etag, int(built), int(expires))


def shared_answer_get(key: str) -> SharedAnswer | None:
    return _shared_answer(client().get(key))


def shared_answer_put(key: str, answer: SharedAnswer) -> None:
    """Share an answer until it goes stale (replacing the one before)."""
    ttl_ms = max(1, answer.expires_at_ms - answer.built_at_ms)
    raw = f"{answer.built_at_ms}:{answer.expires_at_ms}:{answer.etag}:{answer.body}"
    client().set(key, raw, px=ttl_ms)


# Player profiles for the boards' names: per player the entry [generation, display_name,
# avatar_url] (JSON) and the player's current generation (see leaderboards/selectors.py, which
# owns the rule; here are only the keys and the round trips).
def _profile_key(player_id: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}profile:{player_id}"


def _profile_generation_key(player_id: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}profile-generation:{player_id}"


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    generation: str | None  # the generation it was filed under
    display_name: str
    avatar_url: str


def _profiles_command(player_ids: Sequence[str]) -> list[str]:
    return [_profile_key(i) for i in player_ids] + [_profile_generation_key(i) for i in player_ids]


def _profiles_reply(
    player_ids: Sequence[str], values: Sequence[str | None]
) -> tuple[dict[str, ProfileEntry], dict[str, str | None]]:
    entries: dict[str, ProfileEntry] = {}
    for player_id, raw in zip(player_ids, values[: len(player_ids)], strict=True):
        if raw is not None:
            generation, display_name, avatar_url = json.loads(raw)
            entries[player_id] = ProfileEntry(generation, display_name, avatar_url)
    generations = dict(zip(player_ids, values[len(player_ids) :], strict=True))
    return entries, generations


def profiles_read(
    player_ids: Sequence[str],
) -> tuple[dict[str, ProfileEntry], dict[str, str | None]]:
    """The cached entries found and every player's current generation, in one MGET (one per
    node on a Redis Cluster: a player's keys are spread by their own slots)."""
    if not player_ids:
        return {}, {}
    return _profiles_reply(player_ids, mget(_profiles_command(player_ids)))


def profiles_file(entries: dict[str, ProfileEntry], *, ttl_seconds: int) -> None:
    pipe = client().pipeline(transaction=False)
    for player_id, entry in entries.items():
        raw = json.dumps([entry.generation, entry.display_name, entry.avatar_url])
        pipe.set(_profile_key(player_id), raw, ex=ttl_seconds)
    pipe.execute()


def profile_generations_renew(generations: dict[str, str], *, ttl_seconds: int) -> None:
    pipe = client().pipeline(transaction=False)
    for player_id, generation in generations.items():
        pipe.set(_profile_generation_key(player_id), generation, ex=ttl_seconds)
    pipe.execute()


async def aprofiles_read(
    player_ids: Sequence[str],
) -> tuple[dict[str, ProfileEntry], dict[str, str | None]]:
    """profiles_read from the event loop."""
    if not player_ids:
        return {}, {}
    return _profiles_reply(player_ids, await loop_mget(_profiles_command(player_ids)))


async def ashared_answer_get(key: str) -> SharedAnswer | None:
    """shared_answer_get from the event loop."""
    return _shared_answer(await loop_send("GET", key))
