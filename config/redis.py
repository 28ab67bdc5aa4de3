"""Redis connections and the machinery every user of Redis here shares: a client per process and
one per event loop, Lua scripts called by SHA-1 (loaded again into a Redis that forgot them), and
pipelines. It names no key and holds no script: each user owns its own (leaderboards/store.py the
leaderboards', config/throttles.py the rate limits')."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio
from django.conf import settings

_lock = threading.Lock()
_client: redis.Redis | None = None
_scripts: dict[str, Any] = {}


def _options() -> dict[str, Any]:
    return {
        "decode_responses": True,
        "socket_timeout": 2,
        "socket_connect_timeout": 2,
        "health_check_interval": 30,
    }


def client() -> redis.Redis:
    """This process's client (thread-safe; its pool opens a connection per thread in use)."""
    global _client
    if _client is None:
        with _lock:
            if _client is None:
                _client = redis.Redis.from_url(settings.REDIS_URL, **_options())
    return _client


def script(source: str) -> Any:
    """The Lua script, registered once per process (redis-py's Script: called by SHA-1)."""
    registered = _scripts.get(source)
    if registered is None:
        registered = client().register_script(source)
        _scripts[source] = registered
    return registered


@dataclass(frozen=True, slots=True)
class ScriptCall:
    """One script call: the same for a synchronous caller and for the event loop's."""

    source: str
    keys: list[str]
    args: list[Any]


def script_run(call: ScriptCall) -> Any:
    return script(call.source)(keys=call.keys, args=call.args)


# Each script's SHA-1, computed once per source, and the source of each SHA-1 (to load it again
# into a Redis that forgot it). Redis names a script by its SHA-1: an identifier, not security.
_SHAS: dict[str, str] = {}
_SOURCES: dict[str, str] = {}


def evalsha(call: ScriptCall) -> tuple[Any, ...]:
    """The EVALSHA command of a script call."""
    sha = _SHAS.get(call.source)
    if sha is None:
        sha = hashlib.sha1(call.source.encode(), usedforsecurity=False).hexdigest()
        _SOURCES[sha] = call.source
        _SHAS[call.source] = sha
    return ("EVALSHA", sha, len(call.keys), *call.keys, *call.args)


def scripts_run(calls: Sequence[ScriptCall]) -> list[Any]:
    """Script calls in one round trip, named by their SHA-1. (redis-py's registered scripts ask
    SCRIPT EXISTS before every pipeline they are in, a second round trip on every mirror task,
    and a cluster pipeline refuses them.) Scripts a restarted Redis forgot are loaded, and only
    the calls that failed for it run again; any other error is raised."""
    return commands_run([evalsha(call) for call in calls])


def commands_run(commands: list[tuple[Any, ...]]) -> list[Any]:
    """Commands in one pipeline, script calls among them by SHA-1 (see scripts_run)."""
    replies = _pipeline_run(commands)
    again, sources = _forgotten(commands, replies)
    if again:
        for source in sources:
            client().script_load(source)
        for i, reply in zip(again, _pipeline_run([commands[i] for i in again]), strict=True):
            replies[i] = reply
    for reply in replies:
        if isinstance(reply, Exception):
            raise reply
    return replies


def _forgotten(commands: list[tuple[Any, ...]], replies: list[Any]) -> tuple[list[int], set[str]]:
    """The script calls a restarted Redis did not know, and their scripts' sources: the caller
    loads those and runs only these calls again (the pipeline's other commands, counts among
    them, already ran)."""
    again = [
        i for i, reply in enumerate(replies) if isinstance(reply, redis.exceptions.NoScriptError)
    ]
    return again, {_SOURCES[commands[i][1]] for i in again}


def _pipeline_run(commands: list[tuple[Any, ...]]) -> list[Any]:
    pipe = client().pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return pipe.execute(raise_on_error=False)


# --- Commands from an event loop --------------------------------------------------------------
# The hottest public reads are answered on the event loop (leaderboards/fast_reads.py) through
# redis.asyncio. A client's connections belong to the loop that opened them, so each loop has
# its own. Commands asked for during one turn of the loop leave together, as one pipeline: under
# load many handlers each want one script call at about the same moment, and one round trip for
# all of them costs the event loop a fraction of one each (on the benchmark's machine a rank read
# served about 50% more requests a second this way). A lone request waits no longer than before.


class _LoopCommands:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.client = redis.asyncio.Redis.from_url(settings.REDIS_URL, **_options())
        self.waiting: list[tuple[tuple[Any, ...], asyncio.Future[Any]]] = []
        self.sending: set[asyncio.Task[None]] = set()

    def send(self, *command: Any) -> asyncio.Future[Any]:
        future = self.loop.create_future()
        if not self.waiting:
            # Once the handlers running in this turn of the loop have added their commands.
            self.loop.call_soon(self._flush)
        self.waiting.append((command, future))
        return future

    def _flush(self) -> None:
        batch, self.waiting = self.waiting, []
        task = self.loop.create_task(self._execute(batch))
        self.sending.add(task)
        task.add_done_callback(self.sending.discard)

    async def _execute(self, batch: list[tuple[tuple[Any, ...], asyncio.Future[Any]]]) -> None:
        try:
            commands = [command for command, _ in batch]
            replies = await self._pipeline(commands)
            again, sources = _forgotten(commands, replies)
            if again:
                for source in sources:
                    await self.client.script_load(source)
                retried = await self._pipeline([commands[i] for i in again])
                for i, reply in zip(again, retried, strict=True):
                    replies[i] = reply
        except Exception as exc:  # the connection failed: every caller of the batch hears it
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        for (_, future), reply in zip(batch, replies, strict=True):
            if future.done():
                continue  # its request went away
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def _pipeline(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        return await pipe.execute(raise_on_error=False)


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopCommands] = (
    weakref.WeakKeyDictionary()
)


def loop_send(*command: Any) -> asyncio.Future[Any]:
    """Send a command from the running event loop, with the others of this turn of the loop."""
    loop = asyncio.get_running_loop()
    commands = _loops.get(loop)
    if commands is None:
        commands = _loops[loop] = _LoopCommands(loop)
    return commands.send(*command)


def loop_script_run(call: ScriptCall) -> asyncio.Future[Any]:
    return loop_send(*evalsha(call))
