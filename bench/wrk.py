"""The closed-loop HTTP load generator: wrk (C, an event loop a thread, a Lua script per endpoint
in bench/wrk/), Debian's package, found or installed."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.processes import debian_tool

from .core import BenchError
from .environment import BenchEnvironment
from .machine import Window

SCRIPTS = Path(__file__).resolve().parent / "wrk"
_MARKER = "WRK_JSON "


def wrk_ensure() -> str:
    return debian_tool("wrk", "wrk")


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
        argv = [
            self.wrk,
            f"-t{self.threads}",
            f"-c{self.connections}",
            f"-d{max(1, round(seconds))}s",
        ]
        argv += [f"--timeout={self.timeout_s:g}s", "-s", str(SCRIPTS / self.script), self.url, "--"]
        try:
            done = subprocess.run(
                [*argv, *self.args], capture_output=True, text=True, timeout=seconds + 60
            )
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
            "requests": int(data["requests"]),
            "duration_s": round(seconds, 3),
            "requests_per_s": round(data["requests"] / seconds if seconds else 0.0, 1),
            **{f"p{p:g}_ms".replace(".", ""): round(curve[p], 3) for p in (50, 90, 99, 99.9)},
            "max_ms": round(latency["max"] / 1000.0, 3),
            "mean_ms": round(latency["mean"] / 1000.0, 3),
            "errors": {name: int(count) for name, count in data["errors"].items()},
            "curve_ms": [[p, round(value, 3)] for p, value in curve.items()],
        }

    def timed(
        self,
        seconds: float,
        warmup: float,
        cpu: dict[str, int],
        env: BenchEnvironment | None = None,
    ) -> dict[str, Any]:
        """An unmeasured warm-up (none at 0 s), then the measured run in a CPU window."""
        if warmup > 0:
            self.run(warmup)
        with Window(cpu, env) as window:
            figures = self.run(seconds)
        connections = {"connections": self.connections, "threads": self.threads}
        return figures | connections | window.figures()
