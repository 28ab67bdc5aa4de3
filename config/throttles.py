"""Rate limits: DRF throttles whose counters live in Redis (one INCR per request), per game-server
key on writes and per client address on public reads and on the player pages.

DRF's stock throttles keep a list of request times per client in the cache, rewritten on every
request; a fixed-window counter costs one round trip whatever the rate.

A client's address is the connection's unless it comes from one of TRUSTED_PROXIES: only then is
X-Forwarded-For read, from the right, where each proxy of ours appended the address it saw.
Everything to the left of the first address that is not ours was written by the client, who
could otherwise choose a new bucket for every request.
"""

from __future__ import annotations

import logging
import time
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Any

import redis
from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from leaderboards import store

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
    right-most address of X-Forwarded-For that is not one (the left-most when all are)."""
    client = request.META.get("REMOTE_ADDR", "")
    if not settings.TRUSTED_PROXIES or not _from_trusted_proxy(client):
        return client
    for hop in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        hop = hop.strip()
        if hop:
            client = hop
            if not _from_trusted_proxy(hop):
                break
    return client


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
        now = time.time()
        window = int(now // self.duration)
        try:
            hits = store.rate_limit_hit(f"{key}:{window}", ttl_seconds=self.duration)
        except redis.RedisError:
            # A rate limiter that fails closed would turn a Redis hiccup into an outage.
            logger.warning("rate limiter unavailable; letting the request through")
            return True
        self.wait_seconds = (window + 1) * self.duration - now
        return hits <= self.num_requests

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
