"""The live notices' transport (the channel layer over Redis pub/sub, config/settings/base.py): a
ticker's subscription outlives a restart of the layer's Redis, so notices flow again without the
web process doing anything; those sent while Redis was away are lost, which the tickers' refresh
makes good (leaderboards/live/ticker.py)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from pathlib import Path
from typing import Any

import pytest
from channels.layers import channel_layers, get_channel_layer
from redis.exceptions import RedisError

from scripts.processes import RedisServer

WAIT = 20  # seconds; a bound for a hung wait, not a speed requirement
GROUP = "season-1"


@pytest.fixture
def layer_redis(tmp_path: Path, settings) -> Any:
    """A Redis of the test's own for the channel layer, which the test may stop and start."""
    server = RedisServer(tmp_path, name="layer").start()
    layers = copy.deepcopy(settings.CHANNEL_LAYERS)
    layers["default"]["CONFIG"]["hosts"][0]["address"] = server.url()
    settings.CHANNEL_LAYERS = layers
    channel_layers.backends.clear()
    try:
        yield server
    finally:
        server.stop()
        channel_layers.backends.clear()


async def _notice_until_heard(layer: Any, channel: str, number: int) -> dict[str, Any]:
    """Send notice `number` every half second until the channel hears one of at least it."""
    async with asyncio.timeout(WAIT):
        while True:
            # Redis not back yet: the next round tries again.
            with contextlib.suppress(RedisError):
                await layer.group_send(GROUP, {"type": "season.changed", "number": number})
            try:
                async with asyncio.timeout(0.5):
                    heard = await layer.receive(channel)
            except TimeoutError:
                continue
            if heard["number"] >= number:
                return heard


def test_notices_flow_again_after_the_layers_redis_restarts(layer_redis: RedisServer) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        layer = get_channel_layer()
        channel = await layer.new_channel("live")
        await layer.group_add(GROUP, channel)
        before = await _notice_until_heard(layer, channel, 1)

        layer_redis.stop()
        layer_redis.start()
        after = await _notice_until_heard(layer, channel, 2)

        await layer.group_discard(GROUP, channel)
        return before, after

    before, after = asyncio.run(scenario())

    assert before == {"type": "season.changed", "number": 1}
    assert after == {"type": "season.changed", "number": 2}
    assert layer_redis.starts == 2
