"""One way to time a phase, whatever load it offers (wrk, h2load, the open-loop sender, the push
probe): a window opens as the load starts and closes when it stops, and the CPU of each part of
the machine (bench/cpu.py) and, given the bench's environment, the bench database's connections
are taken over exactly that window."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from .cpu import CpuMeter
from .environment import BenchEnvironment, database_connections
from .wrk import WrkLoad, WrkResult


@dataclass
class Window:
    """`with Window(...)` around a load, or start() and load_stopped() where more follows the
    load in the same phase (a drain, answers still in flight)."""

    cpu_groups: dict[str, int]  # part name -> pid of its leader (see CpuMeter)
    env: BenchEnvironment | None = None
    cpu: dict[str, float] = field(default_factory=dict)
    stopped: bool = False
    _meter: CpuMeter = field(init=False)
    _sessions_before: int = 0
    _connections: dict[str, int] = field(default_factory=dict)

    def start(self) -> Window:
        if self.env is not None:
            self._sessions_before = database_connections(self.env)["sessions"]
        self._meter = CpuMeter(groups=self.cpu_groups).start()
        return self

    def load_stopped(self) -> None:
        self.cpu = self._meter.stop()
        self.stopped = True
        if self.env is not None:
            self._connections = database_connections(self.env)

    def __enter__(self) -> Window:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None and not self.stopped:
            self.load_stopped()

    def figures(self) -> dict[str, Any]:
        """The CPU in cores by part and, with the environment, the connections open when the
        load stopped and the sessions opened meanwhile (churn)."""
        figures: dict[str, Any] = {"cpu_cores": self.cpu}
        if self.env is not None:
            figures["database_connections_after"] = self._connections["open"]
            figures["database_sessions_opened"] = (
                self._connections["sessions"] - self._sessions_before
            )
        return figures


def wrk_timed(
    load: WrkLoad,
    *,
    seconds: float,
    warmup_seconds: float,
    cpu_groups: dict[str, int],
    env: BenchEnvironment | None = None,
) -> tuple[WrkResult, dict[str, Any]]:
    """wrk's unmeasured warm-up (none at 0 s), then its measured run in a window: wrk's result
    and the window's figures."""
    if warmup_seconds > 0:
        load.run(warmup_seconds)
    with Window(cpu_groups=cpu_groups, env=env) as window:
        result = load.run(seconds)
    return result, window.figures()
