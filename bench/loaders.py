"""The HTTP load generators (bench/README.md, "wrk" and "h2load"): wrk, closed loop, a Lua script
per endpoint in bench/wrk/; h2load for reads at a constant arrival rate, durations from its log."""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.processes import Process

from .core import BenchError, latency_summary
from .environment import BenchEnvironment
from .machine import Window

SCRIPTS = Path(__file__).resolve().parent / "wrk"
_MARKER = "WRK_JSON "

CONNECTIONS_PER_LOADER = 16
MIN_RATE_PER_CONNECTION = 1.0
# Connections are made and answer a few requests before the measured window starts.
WARMUP_SECONDS = 1.0
_SUMMARY = re.compile(
    r"requests: (?P<total>\d+) total, (?P<started>\d+) started, (?P<done>\d+) done, "
    r"(?P<succeeded>\d+) succeeded, (?P<failed>\d+) failed, (?P<errored>\d+) errored, "
    r"(?P<timeout>\d+) timeout"
)


def tool_version(path: str, flag: str = "--version") -> str:
    """The first line a tool prints about its version (`wrk -v` exits non-zero)."""
    done = subprocess.run([path, flag], capture_output=True, text=True, timeout=10, check=False)
    return ((done.stdout or done.stderr).strip().splitlines() or [""])[0]


@dataclass(frozen=True)
class WrkLoad:
    """What wrk offers, apart from for how long: the same for a warm-up and a measured run."""

    wrk: str
    url: str
    script: str
    args: list[str]
    connections: int
    threads: int
    timeout_s: float = 5.0

    def run(self, seconds: float) -> dict[str, Any]:
        """wrk against `url` for `seconds`: the figures its done() hook reported (report.lua)."""
        load = [f"-t{self.threads}", f"-c{self.connections}", f"-d{max(1, round(seconds))}s"]
        script = ["-s", str(SCRIPTS / self.script), self.url, "--", *self.args]
        argv = [self.wrk, *load, f"--timeout={self.timeout_s:g}s", *script]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"wrk did not finish within {seconds + 60:.0f}s") from exc
        line = next((ln for ln in done.stdout.splitlines() if ln.startswith(_MARKER)), None)
        if done.returncode != 0 or line is None:
            output = (done.stderr or done.stdout).strip()[-2000:]
            raise BenchError(f"wrk failed (exit {done.returncode}): {output}")
        data = json.loads(line[len(_MARKER) :])
        seconds, latency = data["duration_us"] / 1e6, data["latency_us"]
        curve = {float(p): us / 1000 for p, us in data["percentiles_us"]}
        return {
            "requests": int(data["requests"]), "duration_s": round(seconds, 3),
            "requests_per_s": round(data["requests"] / seconds if seconds else 0.0, 1),
            **{f"p{p:g}_ms".replace(".", ""): round(curve[p], 3) for p in (50, 90, 99, 99.9)},
            "max_ms": round(latency["max"] / 1000, 3), "mean_ms": round(latency["mean"] / 1000, 3),
            "errors": {name: int(count) for name, count in data["errors"].items()},
            "curve_ms": [[p, round(value, 3)] for p, value in curve.items()],
        }  # fmt: skip

    def timed(
        self, seconds: float, warm: float, cpu: dict[str, int], env: BenchEnvironment | None = None
    ) -> dict[str, Any]:
        """`warm` seconds of unmeasured warm-up (none at 0), then the run measured in a window."""
        if warm > 0:
            self.run(warm)
        with Window(cpu, env) as window:
            figures = self.run(seconds)
        connections = {"connections": self.connections, "threads": self.threads}
        return figures | connections | window.figures()


def h2load_open_loop(
    *, h2load: str, uris: Callable[[random.Random, int], list[str]], rate: float,
    connections: int, seconds: float, work_dir: Path, label: str, seed: int,
) -> dict[str, Any]:  # fmt: skip
    """Offer `rate` requests a second for `seconds` over about `connections` connections;
    `uris(rng, count)` gives one loader's URI list (one URI for a fixed endpoint)."""
    # At least MIN_RATE_PER_CONNECTION a connection: below that h2load sends little or nothing in
    # a short window. A slow endpoint's few dozen a second go over fewer connections.
    connections = min(connections, max(1, math.floor(rate / MIN_RATE_PER_CONNECTION)))
    loaders = max(1, connections // CONNECTIONS_PER_LOADER)
    connections = loaders * CONNECTIONS_PER_LOADER
    per_connection = rate / connections
    interval = 1.0 / per_connection
    work_dir.mkdir(parents=True, exist_ok=True)
    work_dir = work_dir.resolve()  # the loaders run in the project's directory
    wanted = math.ceil(per_connection * (seconds + WARMUP_SECONDS + interval)) + 10
    # Each loader's process, log, output, and the wall time its measured window starts.
    running: list[tuple[Process, Path, Path, float]] = []
    try:
        for index in range(loaders):
            listed = uris(random.Random(f"{seed}:{label}:{index}"), wanted)
            log, out, uri_file = (work_dir / f"{label}-{index}.{e}" for e in ("log", "out", "uris"))
            for appended in (log, out):  # h2load appends to its log, Process to its output
                appended.unlink(missing_ok=True)
            uri_file.write_text("\n".join(listed) + "\n")
            target = ["-i", str(uri_file)] if len(listed) > 1 else listed
            argv = [h2load, "--h1", "-t", "1", "-c", str(CONNECTIONS_PER_LOADER)]
            argv += [f"--rps={per_connection:.6f}", f"--duration={seconds:g}"]
            argv += [f"--warm-up-time={WARMUP_SECONDS:g}", f"--log-file={log}", *target]
            running.append((Process(argv, log=out).start(), log, out, time.time() + WARMUP_SECONDS))
            # Loaders start a fraction of an interval apart: arrivals spread over it.
            time.sleep(min(interval, 1.0) / loaders)
        deadline = time.monotonic() + seconds + WARMUP_SECONDS + 60
        codes = [process.wait(max(1.0, deadline - time.monotonic())) for process, *_ in running]
    finally:
        for process, *_ in running:
            process.stop()
    summary, statuses, durations_ms = Counter[str](), Counter[str](), list[float]()
    for code, (_, log, out, window_starts) in zip(codes, running, strict=True):
        text = out.read_text(errors="replace")
        if code != 0 or (found := _SUMMARY.search(text)) is None:
            raise BenchError(f"h2load failed (exit {code}): {text.strip()[-2000:]}")
        summary.update({name: int(value) for name, value in found.groupdict().items()})
        for line in log.read_text().splitlines():
            started_us, status, micros = line.split("\t")[:3]
            # h2load logs the answers of its window, some to requests sent in the warm-up.
            if int(started_us) / 1e6 >= window_starts:
                statuses[status] += 1
                if status != "0":  # 0: no HTTP answer (the connection failed or timed out)
                    durations_ms.append(int(micros) / 1000.0)
    answered = len(durations_ms)
    return {
        "offered_per_s": round(rate, 1), "seconds": seconds, "connections": connections,
        "loaders": loaders, "rate_per_connection": round(rate / connections, 3),
        "requests": answered, "achieved_per_s": round(answered / seconds, 1),
        "achieved_share": round(answered / (rate * seconds), 4) if rate else 0.0,
        "started": summary["started"],
        # Sent in the window, still waiting when it closed (h2load counts as done some answers
        # to requests sent in the warm-up, hence the floor).
        "unanswered_at_end": max(0, summary["started"] - summary["done"]),
        "statuses": dict(sorted(statuses.items())),
        "non_2xx": sum(n for status, n in statuses.items() if status[0] not in "02"),
        "throttled_429": statuses.get("429", 0),
        # Requests that got no HTTP answer at all (connection errors, timeouts).
        "errors": max(summary["errored"], statuses.get("0", 0)),
        **latency_summary(durations_ms, curve=False),
    }  # fmt: skip
