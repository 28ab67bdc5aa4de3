"""Reads at a constant arrival rate, evenly spaced, timed from each request's slot.

h2load's `--rps` starts the timers of all of a process's connections together, so its
requests arrive in bursts of a process's connection count; at half of the rank endpoint's
maximum rate that burst alone put the servers' p50 at 7 ms. Here every request has its own slot
on one schedule (slot i at start + i / rate), is sent at its slot over a pool of keep-alive
connections (a new connection when all are busy, so no request waits for another's answer),
and its latency runs from the slot, not from the send: a client that fell behind counts
against the server's figure, never for it (no coordinated omission). Requests whose slot came
while MAX_IN_FLIGHT were unanswered are not sent and are counted.

Several processes share the schedule (process k takes slots k, k + P, ...), each running the
asyncio client of bench/openloop.py (httptools; about a tenth of a millisecond of CPU a request).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from .openloop import HttpClient
from .stats import percentile

REQUEST_TIMEOUT_SECONDS = 10.0
MAX_IN_FLIGHT = 512
WARMUP_SECONDS = 1.0


def _sender(
    url: str,
    paths: list[str],
    rate: float,
    seconds: float,
    index: int,
    processes: int,
    start_at: float,
    out: Any,
) -> None:
    """One process's share of the schedule; puts its figures on `out`."""

    async def run() -> dict[str, Any]:
        client = HttpClient(url, headers={}, timeout=REQUEST_TIMEOUT_SECONDS)
        latencies_ms: list[float] = []
        statuses: Counter[str] = Counter()
        in_flight: set[asyncio.Task[None]] = set()
        skipped = 0
        interval = processes / rate
        total_slots = int((seconds + WARMUP_SECONDS) * rate / processes)
        warmup_slots = int(WARMUP_SECONDS * rate / processes)
        loop = asyncio.get_running_loop()
        origin = loop.time() + max(0.0, start_at - time.time()) + index / rate

        async def one(path: str, slot_time: float, counted: bool) -> None:
            try:
                status, _ = await client.request("GET", path)
            except (TimeoutError, OSError):
                status = 0
            if counted:
                statuses[str(status)] += 1
                if status:
                    latencies_ms.append((loop.time() - slot_time) * 1000.0)

        for slot in range(total_slots):
            slot_time = origin + slot * interval
            delay = slot_time - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            counted = slot >= warmup_slots
            if len(in_flight) >= MAX_IN_FLIGHT:
                skipped += counted
                continue
            task = asyncio.ensure_future(one(paths[slot % len(paths)], slot_time, counted))
            in_flight.add(task)
            task.add_done_callback(in_flight.discard)
        if in_flight:
            await asyncio.wait(in_flight, timeout=REQUEST_TIMEOUT_SECONDS)
        client.close()
        return {
            "latencies_ms": latencies_ms,
            "statuses": dict(statuses),
            "skipped": skipped,
            "offered": total_slots - warmup_slots,
        }

    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    out.put(json.dumps(asyncio.run(run())))


def open_loop_reads(
    *,
    url: str,
    path: Callable[[random.Random], str],
    rate: float,
    seconds: float,
    seed: int,
    processes: int = 2,
) -> dict[str, Any]:
    """Offer `rate` GETs a second for `seconds` (after a second of warm-up); `path(rng)` gives
    each request's path. Returns the offered and answered rates, the latency percentiles
    from the slots, and the statuses."""
    rng = random.Random(seed)
    paths = [path(rng) for _ in range(20_000)]
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    start_at = time.time() + 1.0  # every process started and connected by then
    workers = [
        context.Process(
            target=_sender,
            args=(url, paths[k::processes], rate, seconds, k, processes, start_at, out),
            daemon=True,
        )
        for k in range(processes)
    ]
    for worker in workers:
        worker.start()
    parts = [json.loads(out.get(timeout=seconds + WARMUP_SECONDS + 60)) for _ in workers]
    for worker in workers:
        worker.join(timeout=10)
    latencies = sorted(ms for part in parts for ms in part["latencies_ms"])
    statuses: Counter[str] = Counter()
    for part in parts:
        statuses.update(part["statuses"])
    answered = len(latencies)
    offered = sum(part["offered"] for part in parts)
    figures: dict[str, Any] = {
        "generator": "bench/openread.py (evenly spaced slots, latency from the slot)",
        "offered_per_s": round(rate, 1),
        "seconds": seconds,
        "connections": None,
        "loaders": processes,
        "requests": answered,
        "achieved_per_s": round(answered / seconds, 1),
        "achieved_share": round(answered / offered, 4) if offered else 0.0,
        "skipped_in_flight_limit": sum(part["skipped"] for part in parts),
        "statuses": dict(sorted(statuses.items())),
        "non_2xx": sum(n for status, n in statuses.items() if status[0] not in "02"),
        "throttled_429": statuses.get("429", 0),
        "errors": statuses.get("0", 0),
        "unanswered_at_end": 0,
    }
    if latencies:
        figures.update(
            p50_ms=round(percentile(latencies, 50), 3),
            p90_ms=round(percentile(latencies, 90), 3),
            p99_ms=round(percentile(latencies, 99), 3),
            p999_ms=round(percentile(latencies, 99.9), 3),
            max_ms=round(latencies[-1], 3),
            mean_ms=round(sum(latencies) / answered, 3),
        )
    return figures
