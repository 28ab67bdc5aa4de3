"""The top pages' shared answers: the body of a page of the top, built about once a second for
every process (shared in Redis, kept in each process's memory), with the HTTP validators and
freshness that let any cache in front keep it as long.

The rank, around-me and friends' reads are not kept: each player has their own (selectors.py).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.http import http_date

from config.building_blocks.caching import RecentAnswers
from seasons.models import Season

from . import store
from .selectors import json_body, standing_entries, standings_source, top_page

# Top pages each process reuses until they go stale (LEADERBOARD_TOP_CACHE_SECONDS, at most a
# second): built once for every process (see top_answer), then read from memory. At most
# LEADERBOARD_TOP_CACHE_ENTRIES, so a crawler of deep pages only turns the oldest out.
top_pages_cache: RecentAnswers[store.SharedAnswer] = RecentAnswers(
    seconds=lambda: settings.LEADERBOARD_TOP_CACHE_SECONDS,
    maxsize=lambda: settings.LEADERBOARD_TOP_CACHE_ENTRIES,
)


def _now_ms() -> int:
    return int(timezone.now().timestamp() * 1000)


def top_answer(
    *,
    season: Season,
    offset: int = 0,
    limit: int = 10,
    rank_style: str = "ordinal",
    segment: str | None = None,
) -> store.SharedAnswer:
    """Ranks offset+1 .. offset+limit as the API's JSON body, with its validator.

    Built about once per LEADERBOARD_TOP_CACHE_SECONDS for every process: shared in Redis
    (top_answer_renewed) and kept in each process's memory until it goes stale. So millions of
    readers of the top 100 cost a build a second in all and a Redis read a second per process,
    and any HTTP cache in front can keep the answer for the same window (top_answer_headers)."""
    if settings.LEADERBOARD_TOP_CACHE_SECONDS <= 0:
        return _top_build(season, offset, limit, rank_style, segment, seconds=0)
    answer = top_pages_cache.peek((season.pk, offset, limit, rank_style, segment))
    if answer is not None and answer.expires_at_ms > _now_ms():
        return answer
    return top_answer_renewed(
        season=season, offset=offset, limit=limit, rank_style=rank_style, segment=segment
    )


def top_answer_renewing_due(answer: store.SharedAnswer) -> bool:
    """Past half its life: time to renew it, so a new one is ready before this one is stale."""
    return answer.expires_at_ms - _now_ms() <= (answer.expires_at_ms - answer.built_at_ms) // 2


def top_answer_renewed(
    *, season: Season, offset: int, limit: int, rank_style: str, segment: str | None = None
) -> store.SharedAnswer:
    """The shared answer while it has more than half its life left, else a new one built and
    shared in its place (a process builds when its own copy is half-way: readers never wait
    for one; two processes half-way at the same moment may both build, the later one stays);
    kept in this process's memory either way."""
    shared_key = store.top_answer_key(
        season.pk, offset=offset, limit=limit, rank_style=rank_style, segment=segment
    )
    answer = store.shared_answer_get(shared_key)
    if answer is None or top_answer_renewing_due(answer):
        answer = _top_build(
            season,
            offset,
            limit,
            rank_style,
            segment,
            seconds=settings.LEADERBOARD_TOP_CACHE_SECONDS,
        )
        store.shared_answer_put(shared_key, answer)
    top_pages_cache.put((season.pk, offset, limit, rank_style, segment), answer)
    return answer


def _top_build(
    season: Season,
    offset: int,
    limit: int,
    rank_style: str,
    segment: str | None,
    *,
    seconds: float,
) -> store.SharedAnswer:
    total, standings = standings_source(season).read_page(
        offset=offset, limit=limit, competition=rank_style == "competition", segment=segment
    )
    now = timezone.now()
    body = json_body(
        top_page(
            season,
            as_of=now,
            total_players=total,
            entries=standing_entries(season, standings, rank_style),
            segment=segment,
        )
    )
    built_at_ms = int(now.timestamp() * 1000)
    return store.SharedAnswer(
        body=body,
        etag='"' + hashlib.blake2b(body.encode(), digest_size=12).hexdigest() + '"',
        built_at_ms=built_at_ms,
        expires_at_ms=built_at_ms + int(seconds * 1000),
    )


def top_answer_headers(answer: store.SharedAnswer) -> list[tuple[str, str]]:
    """Cache-Control and validators that let any HTTP cache keep the answer while it is fresh
    here (a stale-by-then answer gets max-age=0) and revalidate it with If-None-Match."""
    left_ms = answer.expires_at_ms - _now_ms()
    max_age = max(0, -(-left_ms // 1000))
    return [
        ("Cache-Control", f"public, max-age={max_age}"),
        ("ETag", answer.etag),
        ("Last-Modified", http_date(answer.built_at_ms / 1000)),
    ]


def top_answer_matches(answer: store.SharedAnswer, if_none_match: str | None) -> bool:
    """Whether the client's If-None-Match names this answer (answered 304, no body)."""
    if not if_none_match:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match.split(",")}
    return answer.etag in tags or "*" in tags


def leaderboard_top(
    *,
    season: Season,
    offset: int = 0,
    limit: int = 10,
    rank_style: str = "ordinal",
    segment: str | None = None,
) -> dict[str, Any]:
    """The top page as data (the player pages), read from the same shared answer as the API."""
    answer = top_answer(
        season=season, offset=offset, limit=limit, rank_style=rank_style, segment=segment
    )
    return json.loads(answer.body)
