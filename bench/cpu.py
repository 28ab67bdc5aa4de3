"""Where the machine's CPU went during a phase: web, worker, Redis, PostgreSQL, wrk, the harness
itself, and everything else on the machine (other tenants of a shared box show up there)."""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass, field

_TICKS = os.sysconf("SC_CLK_TCK")


def _process_ticks() -> dict[int, tuple[str, int, int]]:
    """pid -> (command name, process group, user+system ticks) for every live process."""
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        # Fields after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt
        # cmajflt utime stime ...
        found[int(entry.name)] = (name, int(fields[2]), int(fields[11]) + int(fields[12]))
    return found


def _machine_busy_ticks() -> int:
    with open("/proc/stat") as stat:
        cpu = [int(v) for v in stat.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal: everything but idle and iowait is busy.
    return sum(cpu[:3]) + sum(cpu[5:8])


def _own_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuMeter:
    """Snapshot at start(), then stop() returns each part's CPU in cores (1.0 = one core busy)."""

    groups: dict[str, int] = field(default_factory=dict)  # name -> process group id
    _start: float = 0.0
    _ticks: dict[int, tuple[str, int, int]] = field(default_factory=dict)
    _busy: int = 0
    _self: float = 0.0
    _children: float = 0.0

    def start(self) -> CpuMeter:
        self._start = time.monotonic()
        self._ticks = _process_ticks()
        self._busy = _machine_busy_ticks()
        self._self = _own_seconds(resource.RUSAGE_SELF)
        self._children = _own_seconds(resource.RUSAGE_CHILDREN)
        return self

    def _part(self, name: str, pgrp: int) -> str | None:
        for group, pgid in self.groups.items():
            if pgrp == pgid:
                return group
        if name == "redis-server":
            return "redis"
        if name == "postgres":
            return "postgres"
        return None

    def stop(self) -> dict[str, float]:
        seconds = max(time.monotonic() - self._start, 1e-6)
        parts: dict[str, float] = {name: 0.0 for name in self.groups}
        parts.update(redis=0.0, postgres=0.0)
        for pid, (name, pgrp, ticks) in _process_ticks().items():
            part = self._part(name, pgrp)
            if part is None or pid == os.getpid():
                continue
            before = self._ticks.get(pid)
            used = ticks - (before[2] if before and before[0] == name else 0)
            parts[part] += used / _TICKS
        # wrk (and py-spy) are waited-for children of the harness: their rusage says it exactly.
        parts["wrk"] = _own_seconds(resource.RUSAGE_CHILDREN) - self._children
        parts["harness"] = _own_seconds(resource.RUSAGE_SELF) - self._self
        busy = (_machine_busy_ticks() - self._busy) / _TICKS
        cores = {name: used / seconds for name, used in parts.items()}
        cores["other"] = max(0.0, busy / seconds - sum(cores.values()))
        cores["machine_busy"] = busy / seconds
        return {name: round(value, 3) for name, value in cores.items()}
