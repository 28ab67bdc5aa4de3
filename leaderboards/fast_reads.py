"""The hottest public reads, answered on the event loop in front of Django.

A player's rank, around-me and the top pages are most of the service's traffic (20,000 reads a
second against 6,000 writes at the design peak). Through Django's middleware, DRF and a
thread per request, a rank read cost about 1 ms of CPU, of which the Redis read was a fifth.
Here, in the ASGI app itself, the same read is a path match, the shared query rules, a season
from memory, a local rate-limit decision and one Redis round trip shared with the other
requests of the moment (store's event-loop reads).

The contract is the API's, exactly: the same selectors build the answer, the same renderer
writes it, the same error bodies, the public rate limit's counts are the ones DRF's throttle
keeps, and the request metrics are django-prometheus' own families. Anything this route does
not answer itself is handed to Django, unchanged: other methods, a query or player id the
validation refuses (Django answers the 400), a season not yet in this process's memory's
reach or one that is closed (its archive is in PostgreSQL), and any failure of the read. The
OpenAPI schema keeps describing these endpoints from their DRF views (leaderboards/api.py),
which still answer them when Django is called directly (tests, a WSGI server).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Any
from urllib.parse import parse_qsl

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django_prometheus.middleware import Metrics
from rest_framework.exceptions import Throttled

from config.building_blocks.caching import RecentAnswers
from config.building_blocks.errors import DomainError, api_error
from config.building_blocks.minute_counts import process_counts
from config.building_blocks.player_ids import check_player_id
from config.building_blocks.renderers import json_bytes
from config.building_blocks.throttles import (
    Decision,
    arate_limit_add,
    public_read_take,
    scope_client_address,
    window_counts,
)
from seasons.models import DEFAULT_BOARD, Season, SeasonState
from seasons.selectors import season_get

from . import profiles, read_your_writes, selectors, store, top_answers
from .api import AROUND_RANGES, TOP_RANGES, not_in_segment, not_ranked, read_query, read_segment

logger = logging.getLogger(__name__)

ASGIApp = Callable[..., Awaitable[None]]

_PLAYER_PATH = re.compile(r"/api/v1/leaderboard/players/([^/]+)(/around)?")
_TOP_PATH = "/api/v1/leaderboard/top"

# URL names of the DRF views these answers stand in for: the metrics' `view` label.
_VIEW_NAMES = {
    "rank": "leaderboard-player",
    "around": "leaderboard-around",
    "top": "leaderboard-top",
}


class _NotHere(Exception):
    """This route does not answer the request: Django does."""


class FastReads:
    """ASGI middleware: answers GET rank, around-me and top of a live season; hands every other
    request to `django` unchanged."""

    def __init__(self, django: ASGIApp) -> None:
        self.django = django
        self.metrics = _RequestMetrics()
        self.counts = process_counts()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "GET":
            return await self.django(scope, receive, send)
        path = scope["path"]
        if path == _TOP_PATH:
            kind, player_id = "top", ""
        else:
            matched = _PLAYER_PATH.fullmatch(path)
            if matched is None:
                return await self.django(scope, receive, send)
            kind = "around" if matched.group(2) else "rank"
            player_id = matched.group(1)
        started = time.perf_counter()
        try:
            status, headers, body = await self._answer(scope, kind, player_id)
        except _NotHere:
            return await self.django(scope, receive, send)
        await _send(send, status, headers, body)
        self.metrics.record(_VIEW_NAMES[kind], status, time.perf_counter() - started)
        self.counts.response(status)
        return None

    async def _answer(
        self, scope: dict[str, Any], kind: str, player_id: str
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        headers = _Headers(scope)
        try:
            if kind != "top":
                check_player_id(player_id)
            query = read_query(
                _query_params(scope),
                **(TOP_RANGES if kind == "top" else AROUND_RANGES if kind == "around" else {}),
            )
        except DomainError as exc:
            raise _NotHere from exc  # Django answers the 400 with the field errors
        season = await _season(query["board"], query["season"])
        try:
            query["segment"] = read_segment(query, season)
        except DomainError as exc:
            raise _NotHere from exc
        if kind != "top" and not selectors.standings_whole_known(season):
            # A season not known here to have been marked whole: Django looks it up (the top
            # pages are built by the selectors on a thread, which do the same).
            raise _NotHere

        taken = public_read_take(scope_client_address(scope), now=time.time())
        if taken is not None and not taken[1].allowed:
            return _error(Throttled(wait=taken[1].wait))
        if taken is not None and taken[1].send:
            # Sent with the read below, in the same round trip; the count it answers serves
            # this client's next decisions.
            _count_settle(taken)
        try:
            return await _read(kind, season, player_id, query, headers)
        except Exception as exc:
            # Redis away or a read that failed: Django answers it (503 with its body).
            logger.warning("event-loop read failed, handing it to Django: %r", exc)
            raise _NotHere from exc


def _count_settle(taken: tuple[str, Decision]) -> None:
    key, decision = taken
    counted = arate_limit_add(decision.name, decision.send, ttl_seconds=decision.ttl_seconds)

    def settle(future: Any) -> None:
        count = None
        if not future.cancelled() and future.exception() is None:
            count = int(future.result())
        window_counts("public").sent(key, decision, count)

    counted.add_done_callback(settle)


async def _read(
    kind: str, season: Season, player_id: str, query: dict[str, Any], headers: _Headers
) -> tuple[int, list[tuple[str, str]], bytes]:
    rank_style, segment = query["rank_style"], query["segment"]
    competition = rank_style == "competition"
    if kind == "rank":
        total, standing = await store.aread_rank(
            season.pk,
            player_id,
            competition=competition,
            shared=read_your_writes.shared(season.pk, player_id),
            shards=season.shards,
            whole=True,
            segment=segment,
        )
        if standing is None:
            return _error(await _not_ranked(season, player_id, segment))
        data = selectors.standing_answer(season, player_id, total, standing, rank_style, segment)
        return 200, [], json_bytes(data)
    if kind == "around":
        total, me, standings = await store.aread_around(
            season.pk,
            player_id,
            n=query["n"],
            competition=competition,
            shared=read_your_writes.shared(season.pk, player_id),
            shards=season.shards,
            whole=True,
            segment=segment,
        )
        if me is None:
            return _error(await _not_ranked(season, player_id, segment))
        names = await _profiles([s.player_id for s in standings])
        data = selectors.around_answer(
            season, player_id, total, me, standings, rank_style, names, segment
        )
        return 200, [], json_bytes(data)
    answer = await _top(season, query)
    extra = top_answers.top_answer_headers(answer)
    if top_answers.top_answer_matches(answer, headers.get(b"if-none-match", "")):
        return 304, extra, b""
    return 200, extra, answer.body.encode()


async def _not_ranked(season: Season, player_id: str, segment: str | None) -> Exception:
    if segment is not None:
        return not_in_segment(player_id, season, segment)
    banned = await store.aplayer_banned_in(season.pk, player_id, shards=season.shards)
    return not_ranked(player_id, season, banned=banned)


def _on_a_thread(function: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """`function` run on a thread of the pool, with that thread's database connection looked
    after as Django does around a request (a connection past DB_CONN_MAX_AGE, or broken by a
    database restart, is replaced), since no request signals fire on these threads."""

    def as_a_request(*args: Any, **kwargs: Any) -> Any:
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return sync_to_async(as_a_request, thread_sensitive=False)


_top_answer = _on_a_thread(top_answers.top_answer)
_top_answer_renewed = _on_a_thread(top_answers.top_answer_renewed)
# Uncached: this route keeps its own seasons (below), renewed in the background.
_season_get = _on_a_thread(season_get)


# Tasks nobody awaits, held until they finish (the event loop keeps only weak references).
_background: set[asyncio.Future[Any]] = set()


def _in_background(awaitable: Awaitable[Any]) -> None:
    task = asyncio.ensure_future(awaitable)
    _background.add(task)
    task.add_done_callback(_background.discard)


class _OnePerKey:
    """Requests of the same moment that need the same slow answer (a season from PostgreSQL,
    a top page to build) wait for one computation of it, not one each: at the second a cached
    answer goes stale, every request in flight would otherwise go to a thread and the database
    at once, which showed as the reads' p99."""

    def __init__(self) -> None:
        self._running: dict[Hashable, asyncio.Future[Any]] = {}

    async def run(self, key: Hashable, compute: Callable[[], Awaitable[Any]]) -> Any:
        running = self._running.get(key)
        if running is None or running.get_loop() is not asyncio.get_running_loop():
            running = self._running[key] = asyncio.ensure_future(compute())
            running.add_done_callback(lambda done: self._finished(key, done))
        # One waiter that goes away (its client left) must not cancel the others' answer.
        return await asyncio.shield(running)

    def soon(self, key: Hashable, compute: Callable[[], Awaitable[Any]]) -> None:
        """Start computing unless it already runs; nobody waits for it."""
        _in_background(self.run(key, compute))

    def _finished(self, key: Hashable, done: asyncio.Future[Any]) -> None:
        if self._running.get(key) is done:
            del self._running[key]
        if not done.cancelled() and done.exception() is not None:
            logger.warning("event-loop read failed: %r", done.exception())


_once = _OnePerKey()

# Seasons the event loop has looked up, with when: reused for LEADERBOARD_SEASON_CACHE_SECONDS,
# then renewed in the background while the old one is served for as long again (a season's
# rows change a few times in its life; the sync path's cache has the same age bound).
season_lookups_on_loop: RecentAnswers[tuple[Season, float]] = RecentAnswers(
    seconds=lambda: 2 * settings.LEADERBOARD_SEASON_CACHE_SECONDS, maxsize=lambda: 1024
)


def seasons_forget() -> None:
    """Forget the seasons looked up (tests; a process otherwise renews them as they age)."""
    season_lookups_on_loop.clear()


async def _season(board_slug: str | None, season_slug: str | None) -> Season:
    key = (board_slug or DEFAULT_BOARD, season_slug or None)
    seconds = settings.LEADERBOARD_SEASON_CACHE_SECONDS
    known = season_lookups_on_loop.peek(key)
    if known is not None:
        if time.monotonic() - known[1] >= seconds:
            _once.soon(("season", key), lambda: _season_lookup(key))
        season = known[0]
    else:
        try:
            season = await _once.run(("season", key), lambda: _season_lookup(key))
        except Exception as exc:
            raise _NotHere from exc  # Django answers the unknown board or season
    if season.state == SeasonState.CLOSED:
        raise _NotHere  # read from the archive (or the kept key) by Django
    return season


async def _season_lookup(key: tuple[str, str | None]) -> Season:
    season = await _season_get(board_slug=key[0], season_slug=key[1])
    season_lookups_on_loop.put(key, (season, time.monotonic()))
    return season


async def _top(season: Season, query: dict[str, Any]) -> store.SharedAnswer:
    """The shared top page from this process's memory; half-way through its life a new one is
    fetched or built in the background, so readers wait for a build only when none is kept
    (the first read of a page, or with LEADERBOARD_TOP_CACHE_SECONDS 0: built every time)."""
    offset, limit, rank_style = query["offset"], query["limit"], query["rank_style"]
    page = {
        "season": season,
        "offset": offset,
        "limit": limit,
        "rank_style": rank_style,
        "segment": query["segment"],
    }
    if settings.LEADERBOARD_TOP_CACHE_SECONDS <= 0:
        return await _top_answer(**page)
    key = ("top", season.pk, offset, limit, rank_style, query["segment"])
    answer = top_answers.top_pages_cache.peek(key[1:])
    if answer is not None and answer.expires_at_ms > int(time.time() * 1000):
        if top_answers.top_answer_renewing_due(answer):
            _once.soon(key, lambda: _top_answer_renewed(**page))
        return answer
    return await _once.run(key, lambda: _top_answer_renewed(**page))


class _ProfileLoads:
    """Names the profile directory lacks, loaded from PostgreSQL for all the requests of the
    same moment in one query on one thread (after a Redis that kept nothing came back, an
    around-me read misses most of its 2n+1 names, and a thread and a query per request was most
    of its cost)."""

    def __init__(self) -> None:
        self._waiting: set[str] = set()
        self._loaded: asyncio.Future[dict[str, tuple[str, str]]] | None = None
        self._load = _on_a_thread(profiles.profiles_load)

    async def get(self, player_ids: list[str]) -> dict[str, tuple[str, str]]:
        loop = asyncio.get_running_loop()
        if self._loaded is None or self._loaded.get_loop() is not loop:
            self._loaded = loop.create_future()
            self._waiting = set()
            loop.call_soon(self._start)
        self._waiting.update(player_ids)
        loaded = await asyncio.shield(self._loaded)
        return {i: loaded[i] for i in player_ids}

    def _start(self) -> None:
        waiting, future = self._waiting, self._loaded
        self._waiting, self._loaded = {}, None
        assert future is not None

        async def load() -> None:
            try:
                future.set_result(await self._load(list(waiting)))
            except Exception as exc:
                future.set_exception(exc)

        _in_background(load())


_profile_loads = _ProfileLoads()


async def _profiles(player_ids: list[str]) -> dict[str, tuple[str, str]]:
    """profiles_get on the event loop: the directory in one round trip; the names it lacks from
    PostgreSQL (filed there on the way)."""
    names = profiles.names_of(await store.aprofiles_read(player_ids))
    missing = [i for i in player_ids if i not in names]
    if missing:
        names.update(await _profile_loads.get(missing))
    return names


def _error(exc: Exception) -> tuple[int, list[tuple[str, str]], bytes]:
    status, body, headers = api_error(exc)
    return status, list(headers.items()), json_bytes(body)


def _query_params(scope: dict[str, Any]) -> dict[str, str]:
    # As Django's QueryDict.get reads them: UTF-8, and the last of repeated names.
    raw = scope.get("query_string", b"").decode("latin-1")
    return dict(parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="replace"))


class _Headers:
    def __init__(self, scope: dict[str, Any]) -> None:
        self._headers = scope["headers"]

    def get(self, name: bytes, default: str) -> str:
        for key, value in self._headers:
            if key == name:
                return value.decode("latin-1")
        return default


def _static_headers() -> list[tuple[bytes, bytes]]:
    """What Django's middleware adds to every API answer (SecurityMiddleware, the clickjacking
    middleware) and what DRF's views say they allow, from the same settings."""
    headers = [(b"allow", b"GET, HEAD, OPTIONS")]
    if settings.X_FRAME_OPTIONS:
        headers.append((b"x-frame-options", settings.X_FRAME_OPTIONS.encode()))
    if settings.SECURE_CONTENT_TYPE_NOSNIFF:
        headers.append((b"x-content-type-options", b"nosniff"))
    if settings.SECURE_REFERRER_POLICY:
        headers.append((b"referrer-policy", settings.SECURE_REFERRER_POLICY.encode()))
    if settings.SECURE_CROSS_ORIGIN_OPENER_POLICY:
        headers.append(
            (b"cross-origin-opener-policy", settings.SECURE_CROSS_ORIGIN_OPENER_POLICY.encode())
        )
    return headers


async def _send(send: Any, status: int, extra: list[tuple[str, str]], body: bytes) -> None:
    headers = [
        *_static_headers(),
        *((name.lower().encode(), value.encode("latin-1")) for name, value in extra),
    ]
    if status != 304:
        headers.append((b"content-type", b"application/json"))
        headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _RequestMetrics:
    """django-prometheus' request families for the answers given here, so dashboards see one
    series per endpoint whichever server answered. The labelled children are looked up once
    per (view, status): a request costs a few increments and one histogram observation."""

    def __init__(self) -> None:
        self._metrics = Metrics.get_instance()
        self._children: dict[tuple[str, int], tuple[Any, ...]] = {}

    def record(self, view: str, status: int, seconds: float) -> None:
        children = self._children.get((view, status))
        if children is None:
            m = self._metrics
            children = self._children[(view, status)] = (
                m.requests_total,
                m.responses_total,
                m.requests_by_method.labels(method="GET"),
                m.requests_by_transport.labels(transport="http"),
                m.requests_by_view_transport_method.labels(
                    view=view, transport="http", method="GET"
                ),
                m.responses_by_status.labels(status=str(status)),
                m.responses_by_status_view_method.labels(
                    status=str(status), view=view, method="GET"
                ),
                m.requests_latency_by_view_method.labels(view=view, method="GET"),
            )
        *counters, latency = children
        for counter in counters:
            counter.inc()
        latency.observe(seconds)
