"""Where the machine's CPU went during a phase: web, worker, Redis, PostgreSQL, wrk, the harness
itself, and everything else on the machine (other tenants of a shared box show up there).

A part is named by the pid of the process that leads it: that process, its process group (a
server the harness started leads its own) and its children (PostgreSQL's backends are children
of the postmaster, each in a session of its own). Processes come and go within a phase (a backend
per connection, a Celery pool child), and a process's time vanishes from /proc with it. So each
part is measured as the time of its live processes plus what they have reaped from children
that exited (cutime and cstime): a backend's time moves into the postmaster's reaped total when
it ends, and the part's sum stays whole. The difference of two such sums is the part's CPU in
between.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass, field

from .machine import cpu_times
from .processes import proc_stats

_TICKS = os.sysconf("SC_CLK_TCK")
# Parts not led by a known process are found by their command name.
_NAMED_PARTS = {"redis-server": "redis", "postgres": "postgres"}


def _machine_busy_ticks() -> int:
    cpu = cpu_times()
    # Everything but idle and iowait is busy.
    return sum(cpu[:3]) + sum(cpu[5:8])


def _own_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@dataclass
class CpuMeter:
    """Snapshot at start(), then stop() returns each part's CPU in cores (1.0 = one core busy)."""

    groups: dict[str, int] = field(default_factory=dict)  # name -> pid of the part's leader
    _start: float = 0.0
    _parts: dict[str, int] = field(default_factory=dict)
    _busy: int = 0
    _self: float = 0.0
    _children: float = 0.0

    def start(self) -> CpuMeter:
        self._start = time.monotonic()
        self._parts = self._part_ticks()
        self._busy = _machine_busy_ticks()
        self._self = _own_seconds(resource.RUSAGE_SELF)
        self._children = _own_seconds(resource.RUSAGE_CHILDREN)
        return self

    def _part_ticks(self) -> dict[str, int]:
        """Ticks of each part's live processes and their reaped children, now."""
        leaders = {pid: name for name, pid in self.groups.items()}
        named = {command: part for command, part in _NAMED_PARTS.items() if part not in self.groups}
        totals = dict.fromkeys([*self.groups, *_NAMED_PARTS.values()], 0)
        me = os.getpid()
        for pid, process in proc_stats().items():
            part = (
                leaders.get(pid)
                or leaders.get(process.pgrp)
                or leaders.get(process.ppid)
                or named.get(process.name)
            )
            if part is not None and pid != me:
                totals[part] += process.ticks
        return totals

    def stop(self) -> dict[str, float]:
        seconds = max(time.monotonic() - self._start, 1e-6)
        now = self._part_ticks()
        # A part can only lose time if one of its processes was reaped by an outsider.
        parts = {
            name: max(0, ticks - self._parts.get(name, 0)) / _TICKS for name, ticks in now.items()
        }
        # wrk (and py-spy) are waited-for children of the harness: their rusage says it exactly.
        parts["wrk"] = _own_seconds(resource.RUSAGE_CHILDREN) - self._children
        parts["harness"] = _own_seconds(resource.RUSAGE_SELF) - self._self
        busy = (_machine_busy_ticks() - self._busy) / _TICKS
        cores = {name: used / seconds for name, used in parts.items()}
        cores["other"] = max(0.0, busy / seconds - sum(cores.values()))
        cores["machine_busy"] = busy / seconds
        return {name: round(value, 3) for name, value in cores.items()}
