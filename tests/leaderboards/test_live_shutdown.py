"""A web process stops cleanly: the live ticker's waits on the channel layer end when cancelled.

When an event loop ends (a web process stopping, or each `async_to_sync` call in tests), every
task left is cancelled and the loop waits for them all. A task that swallows its cancellation
keeps the process from ever stopping. The ticker's tasks wait on the channel layer in loops, so
the layer, as configured, must let a wait be cancelled at any moment: on Python 3.11 a redis-py
connection with a socket timeout writes each command through `asyncio.wait_for`, which swallows
a cancellation that lands in the same turn of the loop as the write's end (CPython gh-86296), and
the task then waits on, its cancellation spent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import pytest
from channels.layers import channel_layers, get_channel_layer

WAIT = 5  # seconds; a bound for a hung wait, not a speed requirement
# Enough turns of the loop to land a cancellation at every step of a wait: connecting,
# subscribing, and reading the subscription's messages.
TURNS = 60


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> None:
    channel_layers.backends.clear()


async def _cancelled_after(turns: int, wait: Awaitable[object]) -> bool:
    """Start a wait, let the loop turn `turns` times, cancel it: did it end?"""
    task = asyncio.ensure_future(wait)
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=WAIT)
    return task in done


def test_a_wait_for_notices_ends_whenever_it_is_cancelled() -> None:
    async def scenario() -> list[int]:
        layer = get_channel_layer()
        channel = await layer.new_channel("live")
        hung = []
        for turns in range(TURNS):
            if not await _cancelled_after(turns, layer.receive(channel)):
                hung.append(turns)
                break
        return hung

    assert asyncio.run(scenario()) == []


def test_a_group_renewal_ends_whenever_it_is_cancelled() -> None:
    async def renew_forever(layer: object, channel: str) -> None:
        # As the ticker's refresh does, only with the shortest pause between renewals (a
        # renewal of a subscription held already sends nothing, so it never yields alone).
        while True:
            await layer.group_add("live-shutdown", channel)  # type: ignore[attr-defined]
            await asyncio.sleep(0)

    async def scenario() -> list[int]:
        layer = get_channel_layer()
        channel = await layer.new_channel("live")
        hung = []
        for turns in range(TURNS):
            if not await _cancelled_after(turns, renew_forever(layer, channel)):
                hung.append(turns)
                break
        await layer.group_discard("live-shutdown", channel)
        return hung

    assert asyncio.run(scenario()) == []
