"""The HTTP load generator: wrk (C, event loop, a Lua script per endpoint), found or installed."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .debian import debian_tool
from .errors import BenchError

SCRIPTS = Path(__file__).resolve().parent / "wrk"
_MARKER = "WRK_JSON "


def wrk_ensure() -> str:
    """The path of wrk; installed from Debian's packages when missing and running as root."""
    return debian_tool("wrk", "wrk")


def wrk_version(path: str) -> str:
    # `wrk -v` prints its version and exits non-zero.
    done = subprocess.run([path, "-v"], capture_output=True, text=True, timeout=10, check=False)
    return (
        (done.stdout or done.stderr).strip().splitlines()[0] if done.stdout or done.stderr else ""
    )


@dataclass(frozen=True)
class WrkResult:
    requests: int
    duration_s: float
    errors: dict[str, int]
    latency_us: dict[str, float]
    percentiles_us: list[tuple[float, float]]

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_s else 0.0

    def at(self, p: float) -> float:
        """Latency at percentile p in milliseconds."""
        return next(us for q, us in self.percentiles_us if q == p) / 1000.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "duration_s": round(self.duration_s, 3),
            "requests_per_s": round(self.requests_per_s, 1),
            "p50_ms": round(self.at(50), 3),
            "p90_ms": round(self.at(90), 3),
            "p99_ms": round(self.at(99), 3),
            "p999_ms": round(self.at(99.9), 3),
            "max_ms": round(self.latency_us["max"] / 1000.0, 3),
            "mean_ms": round(self.latency_us["mean"] / 1000.0, 3),
            "errors": self.errors,
            "curve_ms": [[p, round(us / 1000.0, 3)] for p, us in self.percentiles_us],
        }


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

    def run(self, seconds: float) -> WrkResult:
        """Run wrk against `url` for `seconds` and return what its done() hook reported."""
        argv = [
            self.wrk,
            f"-t{self.threads}",
            f"-c{self.connections}",
            f"-d{max(1, round(seconds))}s",
            f"--timeout={self.timeout_s:g}s",
            "-s",
            str(SCRIPTS / self.script),
            self.url,
            "--",
            *self.args,
        ]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=seconds + 60, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"wrk did not finish within {seconds + 60:.0f}s") from exc
        line = next((ln for ln in done.stdout.splitlines() if ln.startswith(_MARKER)), None)
        if done.returncode != 0 or line is None:
            raise BenchError(
                f"wrk failed (exit {done.returncode}): "
                f"{(done.stderr or done.stdout).strip()[-2000:]}"
            )
        data = json.loads(line[len(_MARKER) :])
        return WrkResult(
            requests=int(data["requests"]),
            duration_s=data["duration_us"] / 1e6,
            errors={name: int(count) for name, count in data["errors"].items()},
            latency_us=data["latency_us"],
            percentiles_us=[(float(p), float(us)) for p, us in data["percentiles_us"]],
        )
