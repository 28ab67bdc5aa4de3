"""The fan-out budget: how many messages a season's ticker may spend on other players' results.

A followed player's own new score is pushed at the next tick. What merely follows from other
players' results (the top changed, the player was passed) is paid from a budget of
LIVE_FANOUT_PER_SECOND messages per season and process, a token bucket holding a second's
worth, and goes first to the sockets that have waited longest: a few sockets hear every change
at the next tick, thousands each in turn (5,000 sockets following the top of a board that
changes all the time: each every 10 s at 500 a second), at a steady rate rather than in bursts.
At peak nearly every rank moves on every tick; sending each change to every socket took the
web processes' CPU from the results themselves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings


@dataclass(eq=False)
class FanoutBudget:
    credit: float = 0.0
    refilled_at: float = float("-inf")

    @staticmethod
    def capacity() -> float:
        """What the budget holds at most: a second's worth, and at least one message."""
        return max(1.0, settings.LIVE_FANOUT_PER_SECOND)

    def available(self) -> float:
        """The credit now, refilled for the time since it was last asked."""
        now = time.monotonic()
        refill = (now - self.refilled_at) * settings.LIVE_FANOUT_PER_SECOND
        self.credit = min(self.capacity(), self.credit + refill)
        self.refilled_at = now
        return self.credit

    def spend(self, messages: int) -> None:
        self.credit -= messages
