"""The campaign's faults: what can be broken in a deployment, and a seeded injector that breaks
it at random, several at once. Each fault takes one target down (kill -9, a restart that loses
its data) and brings it back after a few seconds, as a supervisor would; a target is broken by
one fault at a time, and a restart that fails is tried again until its deadline. Like a
supervisor, the injector also restarts a process that exited on its own, and records the crash."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.redis_cluster import LocalRedisCluster

from .deployment import Deployment
from .procs import CeleryBeat, CeleryWorker, Timeout, tail

RESTART_DEADLINE = 90.0


@dataclass(frozen=True, slots=True)
class Target:
    """One thing to break: `down` breaks it, `up` brings it back (and raises if it cannot),
    `alive` says whether it runs, `log` where it writes."""

    kind: str
    name: str
    down: Callable[[], None]
    up: Callable[[], None]
    alive: Callable[[], bool]
    log: Callable[[], Path | None]


def targets(deployment: Deployment, cluster: LocalRedisCluster | None) -> list[Target]:
    """Every target of the deployment as `make run` lays it out (the cluster variant's nodes
    in place of the leaderboard Redis)."""
    found: list[Target] = []
    for index, web in enumerate(deployment.web_servers):
        found.append(
            Target(
                "kill_web",
                f"web-{index}",
                web.kill,
                web.start,
                web.process.running,
                lambda web=web: web.process.log,
            )
        )
    for kind, name, role, start in (
        ("kill_mirror_worker", "worker", "worker", deployment.start_worker),
        ("kill_jobs_worker", "jobs", "jobs_worker", deployment.start_jobs_worker),
        ("kill_rebuilds_worker", "rebuilds", "rebuilds_worker", deployment.start_rebuilds_worker),
        ("kill_beat", "beat", "beat", deployment.start_beat),
    ):

        def process(role: str = role) -> CeleryWorker | CeleryBeat:
            started = getattr(deployment, role)
            assert started is not None, f"no {role} started"
            return started

        found.append(
            Target(
                kind,
                name,
                lambda process=process: process().kill(),
                start,
                lambda process=process: process().process.running(),
                lambda process=process: process().log,
            )
        )
    servers = [] if cluster is not None else [("redis_restarted_empty", deployment.redis)]
    servers += [("replica_killed", replica) for replica in deployment.replicas]
    if deployment.broker is not None:
        servers.append(("broker_restarted", deployment.broker))
    for kind, server in servers:
        found.append(
            Target(
                kind,
                server.name,
                server.kill,
                server.start,
                lambda server=server: server.process is not None and server.process.running(),
                lambda server=server: server.process.log if server.process else None,
            )
        )
    if cluster is not None:
        for index, port in enumerate(cluster.ports):
            found.append(
                Target(
                    "cluster_node_restarted_empty",
                    f"node-{port}",
                    lambda port=port: cluster.kill_node(port),
                    lambda port=port: cluster.restart_empty(port),
                    lambda index=index: cluster.servers[index].process.running(),
                    lambda index=index: cluster.servers[index].process.log,
                )
            )

    def postgres_down() -> None:
        deployment.cluster.stop(mode="immediate")

    found.append(
        Target(
            "postgres_restarted",
            "postgres",
            postgres_down,
            deployment.cluster.start,
            deployment.cluster.running,
            lambda: deployment.cluster.log,
        )
    )
    return found


@dataclass
class Injected:
    kind: str
    target: str
    at: float  # seconds since the campaign began
    down_for: float
    back_at: float | None = None  # None: never came back
    restart_attempts: int = 0
    error: str = ""


@dataclass
class Crash:
    """A process that exited with no fault aimed at it; the supervisor restarted it."""

    target: str
    at: float
    last_lines: str
    back_at: float | None = None


@dataclass
class FaultLog:
    injected: list[Injected] = field(default_factory=list)
    crashes: list[Crash] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def by_kind(self) -> dict[str, dict[str, int]]:
        with self.lock:
            kinds: dict[str, Counter[str]] = {}
            for fault in self.injected:
                tally = kinds.setdefault(fault.kind, Counter())
                tally["injected"] += 1
                tally["recovered"] += fault.back_at is not None
            return {kind: dict(tally) for kind, tally in sorted(kinds.items())}

    def last_back(self) -> float | None:
        with self.lock:
            backs = [f.back_at for f in self.injected if f.back_at is not None]
            return max(backs, default=None)


class Injector:
    """Breaks a random free target every `mean_gap` seconds on average (exponential gaps, so
    faults overlap), keeps it down `down` seconds (a random span), then brings it back. The
    kinds in `first` are injected first, in that order, a `mean_gap` apart: a short run is
    sure to see each of them. Seeded: the same seed, the same choices."""

    def __init__(
        self,
        *,
        targets: Sequence[Target],
        seed: int,
        mean_gap: float,
        down: tuple[float, float],
        began: float,
        first: Sequence[str] = (),
        weights: dict[str, float] | None = None,
    ) -> None:
        self.targets = list(targets)
        self.random = random.Random(seed)
        self.mean_gap = mean_gap
        self.down = down
        self.began = began
        self.first = list(first)
        self.weights = weights or {}
        self.log = FaultLog()
        self.busy: set[str] = set()
        self.busy_lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="injector", daemon=True)
        self.watching = threading.Event()
        # Set when the campaign ends early: nothing is brought back any more (the deployment
        # is being stopped).
        self.halted = threading.Event()
        self.watcher = threading.Thread(target=self._watch, name="supervisor", daemon=True)
        self.breakers: list[threading.Thread] = []
        self.errors: list[BaseException] = []

    def start(self) -> Injector:
        self.watching.set()
        self.thread.start()
        self.watcher.start()
        return self

    def _watch(self) -> None:
        """The supervisor: a target not under a fault that stopped running is restarted."""
        try:
            while self.watching.is_set():
                time.sleep(1.0)
                for target in self._free():
                    if target.alive():
                        continue
                    with self.busy_lock:
                        if target.name in self.busy:
                            continue
                        self.busy.add(target.name)
                    log = target.log()
                    crash = Crash(
                        target.name,
                        time.monotonic() - self.began,
                        _last_errors(tail(log, 200)) if log else "",
                    )
                    with self.log.lock:
                        self.log.crashes.append(crash)
                    if self._bring_up(target, Injected(target.kind, target.name, crash.at, 0)):
                        crash.back_at = time.monotonic() - self.began
                    with self.busy_lock:
                        self.busy.discard(target.name)
        except BaseException as exc:  # reported by finish()
            self.errors.append(exc)

    def _free(self, kind: str | None = None) -> list[Target]:
        with self.busy_lock:
            return [
                t
                for t in self.targets
                if t.name not in self.busy and (kind is None or t.kind == kind)
            ]

    def _pick(self) -> Target | None:
        while self.first:
            kind = self.first.pop(0)
            free = self._free(kind)
            if free:
                return self.random.choice(free)
        free = self._free()
        if not free:
            return None
        return self.random.choices(free, [self.weights.get(t.kind, 1.0) for t in free])[0]

    def _run(self) -> None:
        try:
            while not self.stopping.is_set():
                target = self._pick()
                if target is not None:
                    with self.busy_lock:
                        self.busy.add(target.name)
                    down_for = self.random.uniform(*self.down)
                    breaker = threading.Thread(
                        target=self._break,
                        args=(target, down_for),
                        name=f"fault-{target.name}",
                        daemon=True,
                    )
                    self.breakers.append(breaker)
                    breaker.start()
                gap = self.mean_gap if self.first else self.random.expovariate(1 / self.mean_gap)
                self.stopping.wait(gap)
        except BaseException as exc:  # reported by finish()
            self.errors.append(exc)

    def _break(self, target: Target, down_for: float) -> None:
        fault = Injected(target.kind, target.name, time.monotonic() - self.began, down_for)
        with self.log.lock:
            self.log.injected.append(fault)
        try:
            target.down()
        except BaseException as exc:  # a fault that could not even be injected is reported
            fault.error = f"down: {exc!r}"
        self.halted.wait(down_for)
        self._bring_up(target, fault)
        with self.busy_lock:
            self.busy.discard(target.name)

    def _bring_up(self, target: Target, fault: Injected) -> bool:
        deadline = time.monotonic() + RESTART_DEADLINE
        while not self.halted.is_set():
            fault.restart_attempts += 1
            try:
                target.up()
            except (AssertionError, Timeout, OSError) as exc:
                fault.error = f"up: {str(exc)[:500]}"
                if time.monotonic() > deadline:
                    return False
                self.halted.wait(2.0)
                continue
            fault.back_at = time.monotonic() - self.began
            fault.error = ""
            return True
        return False

    def finish(self, timeout: float = RESTART_DEADLINE + 60) -> list[str]:
        """Inject no more and wait for every broken target to be back; returns problems."""
        self.stopping.set()
        deadline = time.monotonic() + timeout
        self.thread.join(max(0.0, deadline - time.monotonic()))
        for breaker in self.breakers:
            breaker.join(max(0.0, deadline - time.monotonic()))
        problems = [f"the injector failed: {exc!r}" for exc in self.errors]
        problems += [f"{b.name} still restarting its target" for b in self.breakers if b.is_alive()]
        with self.log.lock:
            problems += [
                f"{f.kind} of {f.target} at {f.at:.0f} s: never came back ({f.error})"
                for f in self.log.injected
                if f.back_at is None
            ]
        return problems

    def halt(self) -> None:
        """Inject, watch and bring back nothing more, at once (the campaign is ending early);
        a restart under way finishes first."""
        self.halted.set()
        self.stopping.set()
        self.watching.clear()
        for thread in [self.thread, self.watcher, *self.breakers]:
            if thread.is_alive():
                thread.join(60)

    def stop_watching(self) -> list[str]:
        """Stop the supervisor; returns the crashes it saw, each a violation (a process that
        exits on its own takes down a deployment run by `make run`: honcho stops them all)."""
        self.watching.clear()
        self.watcher.join(RESTART_DEADLINE + 10)
        with self.log.lock:
            return [
                f"{c.target} exited on its own at {c.at:.0f} s "
                f"({'restarted' if c.back_at else 'not restarted'}): {c.last_lines}"
                for c in self.log.crashes
            ]


def _last_errors(text: str) -> str:
    """The last lines of a log that say why it ended (CRITICAL, FATAL, an exception)."""
    lines = [
        line.strip()
        for line in text.splitlines()
        if any(word in line for word in ("CRITICAL", "FATAL", "Error:", "Error(", "rror: "))
    ]
    return " | ".join(lines[-3:])[:600]
