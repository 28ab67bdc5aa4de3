"""What the gateway caches beside the standings: answers shared by every process for a moment (the
top pages); synchronous and from the event loop."""

from __future__ import annotations

from dataclasses import dataclass

from config.building_blocks.redis import client, loop_send

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


async def ashared_answer_get(key: str) -> SharedAnswer | None:
    """shared_answer_get from the event loop."""
    return _shared_answer(await loop_send("GET", key))
