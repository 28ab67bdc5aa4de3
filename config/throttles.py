"""Rate limits: DRF throttles whose counters live in Redis (one INCR per request).

DRF's stock throttles keep a list of request times per client in the cache, rewritten on every
request; a fixed-window counter costs one round trip whatever the rate.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import redis
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from leaderboards import store

logger = logging.getLogger(__name__)


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

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if request.auth is not None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
