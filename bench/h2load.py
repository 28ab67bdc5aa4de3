"""Load at a constant arrival rate (open loop) from h2load (Debian's nghttp2-client), with each
request's duration read from its log, so the percentiles are the harness's own.

h2load's `--rps` mode gives every connection a timer that makes one request due every 1/rps
seconds; over HTTP/1.1 a connection carries one request at a time, so a request that comes due
while the connection still waits for an answer is held and sent the moment that answer arrives,
and its latency is counted from that send, not from when it was due. The queueing it suffered is
lost (coordinated omission), but only on that one connection: with many connections each at a
low rate (an answer must take longer than the connection's interval, 1/rps, to delay anything)
the schedule as a whole is kept, and the achieved rate says when it was not.

Every connection of one h2load process walks its URI list in the same order and their timers
start together, so a process's connections ask for the same player at the same moment. The load
therefore comes from many small processes, `CONNECTIONS_PER_LOADER` connections each, each with a
URI list of its own (random players) and started a fraction of an interval after the previous
one, so arrivals are spread over the interval and a player is asked for by at most that many
connections at once. Each process costs the machine CPU and scheduling that it takes from the
servers it measures (32 processes of 4 connections put tens of ms on the servers' p99 at 2,800
requests a second that 8 processes of 16 did not), so processes are few.
"""

from __future__ import annotations

import math
import random
import re
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .debian import debian_tool
from .errors import BenchError
from .stats import percentile

CONNECTIONS_PER_LOADER = 16
# Connections are made and answer a few requests before the measured window starts.
WARMUP_SECONDS = 1.0
_SUMMARY = re.compile(
    r"requests: (?P<total>\d+) total, (?P<started>\d+) started, (?P<done>\d+) done, "
    r"(?P<succeeded>\d+) succeeded, (?P<failed>\d+) failed, (?P<errored>\d+) errored, "
    r"(?P<timeout>\d+) timeout"
)


def h2load_ensure() -> str:
    """The path of h2load; installed from Debian's packages when missing and running as root."""
    return debian_tool("h2load", "nghttp2-client")


def h2load_version(path: str) -> str:
    done = subprocess.run(
        [path, "--version"], capture_output=True, text=True, timeout=10, check=False
    )
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.stdout else ""


def h2load_open_loop(
    *,
    h2load: str,
    uris: Callable[[random.Random, int], list[str]],
    rate: float,
    connections: int,
    seconds: float,
    work_dir: Path,
    label: str,
    seed: int,
) -> dict[str, Any]:
    """Offer `rate` requests a second for `seconds` over about `connections` connections.

    `uris(rng, count)` gives one loader's URI list (one URI for a fixed endpoint). Returns the
    offered and achieved rates, latency percentiles over every answer of the window, status
    counts, transport errors and the requests still unanswered when the window closed.
    """
    loaders = max(1, math.ceil(connections / CONNECTIONS_PER_LOADER))
    connections = loaders * CONNECTIONS_PER_LOADER
    per_connection = rate / connections
    interval = 1.0 / per_connection
    work_dir.mkdir(parents=True, exist_ok=True)
    # Each connection asks for at most this many URIs over warm-up and window.
    wanted = math.ceil(per_connection * (seconds + WARMUP_SECONDS + interval)) + 10
    # Each loader's process, log, output, and the wall time its measured window starts.
    running: list[tuple[subprocess.Popen[bytes], Path, Path, float]] = []
    try:
        for index in range(loaders):
            rng = random.Random(f"{seed}:{label}:{index}")
            listed = uris(rng, wanted)
            log = work_dir / f"{label}-{index}.log"
            out = work_dir / f"{label}-{index}.out"
            log.unlink(missing_ok=True)  # h2load appends to its log
            target = [listed[0]]
            if len(listed) > 1:
                uri_file = work_dir / f"{label}-{index}.uris"
                uri_file.write_text("\n".join(listed) + "\n")
                target = ["-i", str(uri_file)]
            argv = [
                h2load,
                "--h1",
                "-t",
                "1",
                "-c",
                str(CONNECTIONS_PER_LOADER),
                f"--rps={per_connection:.6f}",
                f"--duration={seconds:g}",
                f"--warm-up-time={WARMUP_SECONDS:g}",
                f"--log-file={log}",
                *target,
            ]
            window_starts = time.time() + WARMUP_SECONDS
            with out.open("wb") as sink:
                process = subprocess.Popen(  # noqa: S603 - argv is built here
                    argv, stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            running.append((process, log, out, window_starts))
            # Loaders start a fraction of an interval apart: arrivals spread over it.
            time.sleep(min(interval, 1.0) / loaders)
        deadline = time.monotonic() + seconds + WARMUP_SECONDS + 60
        for process, *_ in running:
            try:
                process.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired as exc:
                raise BenchError(f"h2load did not finish within {seconds + 60:.0f}s") from exc
    finally:
        for process, *_ in running:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
    return _figures(running, rate=rate, seconds=seconds, connections=connections, loaders=loaders)


def _figures(
    running: list[tuple[subprocess.Popen[bytes], Path, Path, float]],
    *,
    rate: float,
    seconds: float,
    connections: int,
    loaders: int,
) -> dict[str, Any]:
    summary: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    durations_ms: list[float] = []
    for process, log, out, window_starts in running:
        text = out.read_text(errors="replace")
        found = _SUMMARY.search(text)
        if process.returncode != 0 or found is None:
            raise BenchError(f"h2load failed (exit {process.returncode}): {text.strip()[-2000:]}")
        summary.update({name: int(value) for name, value in found.groupdict().items()})
        for line in log.read_text().splitlines():
            started_us, status, micros = line.split("\t")[:3]
            # h2load logs the answers of its window, some to requests sent in the warm-up.
            if int(started_us) / 1e6 < window_starts:
                continue
            statuses[status] += 1
            if status != "0":  # 0: no HTTP answer (the connection failed or timed out)
                durations_ms.append(int(micros) / 1000.0)
    durations_ms.sort()
    answered = len(durations_ms)
    non_2xx = sum(n for status, n in statuses.items() if status[0] not in "02")
    figures: dict[str, Any] = {
        "offered_per_s": round(rate, 1),
        "seconds": seconds,
        "connections": connections,
        "loaders": loaders,
        "rate_per_connection": round(rate / connections, 3),
        "requests": answered,
        "achieved_per_s": round(answered / seconds, 1),
        "achieved_share": round(answered / (rate * seconds), 4) if rate else 0.0,
        "started": summary["started"],
        # Sent in the window, still waiting when it closed (h2load counts as done some
        # answers to requests sent in the warm-up, hence the floor).
        "unanswered_at_end": max(0, summary["started"] - summary["done"]),
        "statuses": dict(sorted(statuses.items())),
        "non_2xx": non_2xx,
        "throttled_429": statuses.get("429", 0),
        # Requests that got no HTTP answer at all (connection errors, timeouts).
        "errors": max(summary["errored"], statuses.get("0", 0)),
    }
    if durations_ms:
        figures.update(
            p50_ms=round(percentile(durations_ms, 50), 3),
            p90_ms=round(percentile(durations_ms, 90), 3),
            p99_ms=round(percentile(durations_ms, 99), 3),
            p999_ms=round(percentile(durations_ms, 99.9), 3),
            max_ms=round(durations_ms[-1], 3),
            mean_ms=round(sum(durations_ms) / answered, 3),
        )
    return figures
