"""Rate limits: DRF throttles whose counters live in Redis (one INCR per request), per game-server
key on writes and per client address on public reads and on the player pages.

DRF's stock throttles keep a list of request times per client in the cache, rewritten on every
request; a fixed-window counter costs one round trip whatever the rate. Each process also
counts locally (WindowCounts): it decides from what it knows and tells Redis its own count in
steps, so a busy client costs a round trip per step, not per request, and the event loop's reads
(leaderboards/fast_reads.py) send the step with the read itself. The counters are this module's
own keys, on the rate limits' Redis (config/building_blocks/redis.py's rate_limits:
CACHE_REDIS_URL).

A client's address is the connection's unless it comes from one of TRUSTED_PROXIES: only then is
X-Forwarded-For read (every line of it, joined in order, as HTTP reads a repeated header), from the
right, where each proxy of ours appended the address it saw. Everything to the left of the first
address that is not ours was written by the client, who could otherwise choose a new bucket for
every request. This is the one rule: Django's throttles and the console's lockouts
(client_address), the event loop's reads and the sockets (scope_client_address) all use it, and
uvicorn runs with --no-proxy-headers (Procfile), since its own rule trusts 127.0.0.1 whatever
TRUSTED_PROXIES says and would hand us a client address of the client's choosing.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Any

import redis
from cachetools import LRUCache
from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from config.building_blocks.redis import rate_limits

logger = logging.getLogger(__name__)


def _from_trusted_proxy(address: str) -> bool:
    try:
        parsed: IPv4Address | IPv6Address = ip_address(address)
    except ValueError:
        return False
    if isinstance(parsed, IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return any(parsed in network for network in settings.TRUSTED_PROXIES)


def client_address(request: HttpRequest | Request) -> str:
    """The address the request came from: REMOTE_ADDR or, when that is a trusted proxy, the
    right-most address of X-Forwarded-For that is not one (the left-most when all are). The
    WSGI server (a2wsgi) joins repeated X-Forwarded-For lines into one META entry."""
    return client_address_of(
        request.META.get("REMOTE_ADDR", ""), request.META.get("HTTP_X_FORWARDED_FOR", "")
    )


def scope_client_address(scope: dict[str, Any]) -> str:
    """client_address of an ASGI connection (HTTP or WebSocket): its peer and every
    X-Forwarded-For line, joined in order."""
    client = scope.get("client")
    forwarded_for = b",".join(
        value for name, value in scope.get("headers", ()) if name == b"x-forwarded-for"
    )
    return client_address_of(client[0] if client else "", forwarded_for.decode("latin-1"))


def client_address_of(remote_address: str, forwarded_for: str) -> str:
    """client_address from the connection's address and the X-Forwarded-For header."""
    client = remote_address
    if not settings.TRUSTED_PROXIES or not _from_trusted_proxy(client):
        return client
    for hop in reversed(forwarded_for.split(",")):
        hop = hop.strip()
        if hop:
            client = hop
            if not _from_trusted_proxy(hop):
                break
    return client


@dataclass(slots=True)
class _Window:
    number: int
    known: int = 0  # the window's count in Redis at its last answer (every process's requests)
    sending: int = 0  # requests of ours on their way to Redis
    unsent: int = 0  # requests of ours let through and not yet sent


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    wait: float  # seconds to the next window
    send: int  # requests to add to the Redis count now (0: nothing to send)
    window: int  # the window's number (seconds since the epoch // duration)
    name: str  # the Redis counter's name (client and window)
    ttl_seconds: int


class WindowCounts:
    """One scope's fixed-window request counts, per client: Redis holds the count every process
    adds to, and each process counts locally in between.

    A process decides from the window's count in Redis at its last answer plus the requests it
    has let through since. It adds its own to Redis on a client's first request of a window and
    then every `limit // 100` requests, so at the default 100/s every request is counted in Redis
    at once (exact), while a client making thousands a second costs one round trip per hundredth
    of its limit. Across P processes a client may get up to P * limit / 100 requests over its
    limit in a window (1% per process). Refused requests are not counted.
    """

    def __init__(self, maxsize: int = 100_000) -> None:
        self._lock = threading.Lock()
        # The clients seen recently; an evicted client starts again from Redis's count.
        self._windows: LRUCache[str, _Window] = LRUCache(maxsize=maxsize)

    def take(self, ident: str, *, limit: int, duration: int, now: float) -> Decision:
        number = int(now // duration)
        name = f"{ident}:{number}"
        wait = (number + 1) * duration - now
        with self._lock:
            window = self._windows.get(ident)
            if window is None or window.number != number:
                window = self._windows[ident] = _Window(number)
            if window.known + window.sending + window.unsent >= limit:
                return Decision(False, wait, 0, number, name, duration)
            window.unsent += 1
            first = window.known == 0 and window.sending == 0
            if first or window.unsent >= max(1, limit // 100):
                send, window.unsent = window.unsent, 0
                window.sending += send
            else:
                send = 0
        return Decision(True, wait, send, number, name, duration)

    def sent(self, ident: str, decision: Decision, count: int | None) -> None:
        """Redis answered `count` for the requests the decision sent (None: it did not answer,
        and they stay uncounted there)."""
        with self._lock:
            window = self._windows.get(ident)
            if window is None or window.number != decision.window:
                return
            window.sending -= decision.send
            if count is not None:
                window.known = max(window.known, count)

    def clear(self) -> None:
        with self._lock:
            self._windows.clear()


def _rate_key(name: str) -> str:
    return f"{settings.LEADERBOARD_KEY_PREFIX}rate:{name}"


def rate_limit_add(name: str, count: int, *, ttl_seconds: int) -> int:
    """Count `count` requests in a rate-limit window; returns the window's count so far."""
    key = _rate_key(name)
    pipe = rate_limits().client().pipeline(transaction=False)
    pipe.incrby(key, count)
    pipe.expire(key, ttl_seconds + 1, nx=True)
    hits, _ = pipe.execute()
    return int(hits)


def arate_limit_add(name: str, count: int, *, ttl_seconds: int) -> asyncio.Future[Any]:
    """rate_limit_add from the event loop, sent with the reads of the same moment (one round
    trip for both); the future's result is the window's count so far."""
    key = _rate_key(name)
    limits = rate_limits()
    counted = limits.loop_send("INCRBY", key, count)
    limits.loop_send("EXPIRE", key, ttl_seconds + 1, "NX")
    return counted


_counts: dict[str, WindowCounts] = {}


def window_counts(scope: str) -> WindowCounts:
    counts = _counts.get(scope)
    if counts is None:
        counts = _counts.setdefault(scope, WindowCounts())
    return counts


def window_counts_clear() -> None:
    for counts in list(_counts.values()):
        counts.clear()


class RedisRateThrottle(SimpleRateThrottle):
    cache_format = "%(scope)s:%(ident)s"

    def get_rate(self) -> str | None:
        # Read on every request, so a changed setting applies without a restart of the class.
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request: Request, view: Any) -> bool:
        self.rate = self.get_rate()
        if not self.rate:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        counts = window_counts(self.scope)
        decision = counts.take(
            key, limit=self.num_requests, duration=self.duration, now=time.time()
        )
        self.wait_seconds = decision.wait
        if decision.send:
            try:
                count = rate_limit_add(
                    decision.name, decision.send, ttl_seconds=decision.ttl_seconds
                )
            except redis.RedisError:
                # A rate limiter that fails closed would turn a Redis hiccup into an outage.
                logger.warning("rate limiter unavailable; letting the request through")
                count = None
            counts.sent(key, decision, count)
        return decision.allowed

    def wait(self) -> float | None:
        return getattr(self, "wait_seconds", None)


class GameServerThrottle(RedisRateThrottle):
    """Per game-server key, on writes."""

    scope = "game_server"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.auth is None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.prefix}


class PublicThrottle(RedisRateThrottle):
    """Per client address, on public reads."""

    scope = "public"

    def get_ident(self, request: Request) -> str:
        return client_address(request)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if getattr(request, "auth", None) is not None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class PagesThrottle(PublicThrottle):
    """Per client address, on the player pages (plain Django views: see pages_wait)."""

    scope = "pages"


def pages_wait(request: HttpRequest) -> float | None:
    """Seconds this address must wait before its next page, or None when it may have it now."""
    throttle = PagesThrottle()
    if throttle.allow_request(request, None):  # type: ignore[arg-type]
        return None
    return throttle.wait() or 1.0


@functools.lru_cache(maxsize=16)
def _parsed_rate(rate: str) -> tuple[int, int]:
    limit, duration = PublicThrottle().parse_rate(rate)
    return int(limit), int(duration)


def public_read_take(client: str, *, now: float) -> tuple[str, Decision] | None:
    """PublicThrottle's decision for a public read answered outside DRF (the event loop's
    reads) from `client` (scope_client_address): the same scope, client and counts; the caller
    sends `decision.send` to Redis and reports back with `window_counts("public").sent`. None
    when the scope has no limit."""
    rate = api_settings.DEFAULT_THROTTLE_RATES.get(PublicThrottle.scope)
    if not rate:
        return None
    limit, duration = _parsed_rate(rate)
    key = PublicThrottle.cache_format % {
        "scope": PublicThrottle.scope,
        "ident": client,
    }
    return key, window_counts(PublicThrottle.scope).take(
        key, limit=limit, duration=duration, now=now
    )
