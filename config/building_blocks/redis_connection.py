"""The Redis driver every role shares (config/building_blocks/redis.py): a client per process
and one per event loop, Lua scripts called by SHA-1 (loaded again into a Redis that forgot them),
and pipelines, with the commands of one turn of the event loop sent as one round trip. It knows
no role, names no key and holds no script."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import weakref
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster

logger = logging.getLogger(__name__)


def _options() -> dict[str, Any]:
    return {
        "decode_responses": True,
        "socket_timeout": 2,
        "socket_connect_timeout": 2,
        "health_check_interval": 30,
    }


@dataclass(frozen=True, slots=True)
class ScriptCall:
    """One script call: the same for a synchronous caller and for the event loop's."""

    source: str
    keys: list[str]
    args: list[Any]


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


def _forgotten(commands: list[tuple[Any, ...]], replies: list[Any]) -> tuple[list[int], set[str]]:
    """The script calls a restarted Redis did not know, and their scripts' sources: the caller
    loads those and runs only these calls again (the pipeline's other commands, counts among
    them, already ran)."""
    again = [
        i for i, reply in enumerate(replies) if isinstance(reply, redis.exceptions.NoScriptError)
    ]
    return again, {_SOURCES[commands[i][1]] for i in again}


class Connection:
    """One Redis, or one Redis Cluster (`cluster`: the URL names a seed node), with a client per
    process and one per event loop. On a cluster, redis-py routes each command by its keys'
    slot, pipelines go to each node in parallel, and SCRIPT LOAD goes to every primary, so a
    node that forgot a script gets it back like a single Redis does."""

    def __init__(self, url: str, *, cluster: bool = False) -> None:
        self.url = url
        self.cluster = cluster
        self._lock = threading.Lock()
        self._client: redis.Redis | redis.cluster.RedisCluster | None = None
        self._scripts: dict[str, Any] = {}
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopCommands] = (
            weakref.WeakKeyDictionary()
        )

    def client(self) -> Any:
        """This process's client (thread-safe; its pool opens a connection per thread in use)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    if self.cluster:
                        self._client = redis.cluster.RedisCluster.from_url(self.url, **_options())
                    else:
                        self._client = redis.Redis.from_url(self.url, **_options())
        return self._client

    def async_client(self) -> Any:
        """A new client for the running event loop."""
        if self.cluster:
            return redis.asyncio.cluster.RedisCluster.from_url(self.url, **_options())
        return redis.asyncio.Redis.from_url(self.url, **_options())

    def script(self, source: str) -> Any:
        """The Lua script, registered once per process (redis-py's Script: called by SHA-1)."""
        registered = self._scripts.get(source)
        if registered is None:
            registered = self.client().register_script(source)
            self._scripts[source] = registered
        return registered

    def script_run(self, call: ScriptCall) -> Any:
        return self.script(call.source)(keys=call.keys, args=call.args)

    def scripts_run(self, calls: Sequence[ScriptCall]) -> list[Any]:
        """Script calls in one round trip, named by their SHA-1. (redis-py's registered scripts
        ask SCRIPT EXISTS before every pipeline they are in, a second round trip on every mirror
        task, and a cluster pipeline refuses them.) Scripts a restarted Redis forgot are loaded,
        and only the calls that failed for it run again; any other error is raised."""
        return self.commands_run([evalsha(call) for call in calls])

    def commands_run(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        """Commands in one pipeline, script calls among them by SHA-1 (see scripts_run)."""
        replies = self._pipeline_run(commands)
        again, sources = _forgotten(commands, replies)
        if again:
            for source in sources:
                self.client().script_load(source)
            for i, reply in zip(
                again, self._pipeline_run([commands[i] for i in again]), strict=True
            ):
                replies[i] = reply
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    def _pipeline_run(self, commands: list[tuple[Any, ...]]) -> list[Any]:
        client = self.client()
        pipe = client.pipeline(transaction=False)
        for command in commands:
            if self.cluster and command[0] == "EVALSHA":
                # A script call names the node of its keys (they share a slot): redis-py's
                # cluster pipeline would ask its default node for them (COMMAND GETKEYS), a
                # round trip per call, and fail every call while that one node is down.
                node = client.get_node_from_key(command[3])
                pipe.execute_command(*command, target_nodes=node)
            else:
                pipe.execute_command(*command)
        return pipe.execute(raise_on_error=False)

    def mget(self, keys: Sequence[str]) -> list[Any]:
        """Values of keys that may lie in different slots (on a cluster, one MGET per node)."""
        if self.cluster:
            return self.client().mget_nonatomic(list(keys))
        return self.client().mget(list(keys))

    def loop_send(self, *command: Any) -> asyncio.Future[Any]:
        """Send a command from the running event loop, with the others of this turn of the loop."""
        loop = asyncio.get_running_loop()
        commands = self._loops.get(loop)
        if commands is None:
            commands = self._loops[loop] = _LoopCommands(loop, self.async_client())
        return commands.send(*command)

    def loop_script_run(self, call: ScriptCall) -> asyncio.Future[Any]:
        return self.loop_send(*evalsha(call))

    def loop_commands_run(self, commands: Sequence[tuple[Any, ...]]) -> Awaitable[list[Any]]:
        """Several commands from the event loop, all in this turn's round trip."""
        return asyncio.gather(*(self.loop_send(*command) for command in commands))

    def loop_mget(self, keys: Sequence[str]) -> Awaitable[list[Any]]:
        """mget from the event loop (on a cluster, a GET per key in the same batch)."""
        if self.cluster:
            return asyncio.gather(*(self.loop_send("GET", key) for key in keys))
        return self.loop_send("MGET", *keys)


# --- Commands from an event loop --------------------------------------------------------------
# The hottest public reads are answered on the event loop (leaderboards/fast_reads.py) through
# redis.asyncio. A client's connections belong to the loop that opened them, so each loop has
# its own. Commands asked for during one turn of the loop leave together, as one pipeline: under
# load many handlers each want one script call at about the same moment, and one round trip for
# all of them costs the event loop a fraction of one each (on the benchmark's machine a rank read
# served about 50% more requests a second this way). A lone request waits no longer than before.


class _LoopCommands:
    def __init__(self, loop: asyncio.AbstractEventLoop, client: Any) -> None:
        self.loop = loop
        self.client = client
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
