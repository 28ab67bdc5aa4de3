"""How many live sockets each client address holds open in this web process, so that one client
cannot fill the process's memory with sockets (LIVE_SOCKETS_PER_ADDRESS; docs/websocket.md,
close code 4429).

Counted per process (per event loop, as the ticker is): a socket's memory is its own process's,
so that is the count that protects it. Across WEB_WORKERS processes one address may hold up to
WEB_WORKERS times the limit. No Redis round trip per connection, and nothing left counted in
Redis when a process dies. The address is found by the rate limits' rule (TRUSTED_PROXIES). The
process's total of open sockets is reported for the dashboard's charts
(config/building_blocks/minute_counts.py).
"""

from __future__ import annotations

import asyncio
import collections
import weakref

from django.conf import settings
from rest_framework import status

from config.building_blocks.errors import DomainError
from config.building_blocks.minute_counts import process_counts


class TooManySockets(DomainError):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    code = "too_many_sockets"


class AddressSockets:
    """The open sockets of each client address in this process."""

    def __init__(self) -> None:
        self._open: collections.Counter[str] = collections.Counter()

    def take(self, address: str) -> None:
        """Count one more socket of `address`, or raise TooManySockets, counting nothing."""
        limit = settings.LIVE_SOCKETS_PER_ADDRESS
        if limit and self._open[address] >= limit:
            raise TooManySockets(
                f"This address has {limit} live sockets open, the most allowed; close one first.",
                details={"limit": limit},
            )
        self._open[address] += 1
        process_counts().socket_opened()

    def release(self, address: str) -> None:
        process_counts().socket_closed()
        self._open[address] -= 1
        if self._open[address] <= 0:
            del self._open[address]


_per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AddressSockets] = (
    weakref.WeakKeyDictionary()
)


def address_sockets() -> AddressSockets:
    """This process's counts (one per event loop: uvicorn runs one loop per process)."""
    loop = asyncio.get_running_loop()
    found = _per_loop.get(loop)
    if found is None:
        found = _per_loop[loop] = AddressSockets()
    return found
