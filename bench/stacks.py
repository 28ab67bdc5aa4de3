"""Serving stacks side by side: a trivial answer served by a bare ASGI app under uvicorn and
under granian, by Django's own ASGI handler, by Django's WSGI app through a2wsgi and under
granian, and by the service's own `server.asgi:application`, each with the same worker count
and measured by wrk at the same concurrency as the read endpoints, so a serving stack is chosen
from figures taken on this machine in the same run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import BenchError
from .options import Options
from .processes import Processes, server_available, server_start
from .reads import fixed_load
from .window import wrk_timed


@dataclass(frozen=True)
class Stack:
    key: str
    app_label: str
    server: str
    interface: str
    app: str
    paths: tuple[str, ...]


BARE = "bench.apps.bare:application"
STACKS = (
    Stack("bare_asgi_uvicorn", "bare ASGI app", "uvicorn", "asgi", BARE, ("/",)),
    Stack("bare_asgi_granian", "bare ASGI app", "granian", "asgi", BARE, ("/",)),
    Stack(
        "django_asgi_uvicorn",
        "Django's ASGI handler",
        "uvicorn",
        "asgi",
        "bench.apps.django_asgi:application",
        ("/healthz",),
    ),
    Stack(
        "django_a2wsgi_uvicorn",
        "Django's WSGI app through a2wsgi",
        "uvicorn",
        "asgi",
        "bench.apps.django_a2wsgi:application",
        ("/healthz",),
    ),
    Stack(
        "django_wsgi_granian",
        "Django's WSGI app",
        "granian",
        "wsgi",
        "config.wsgi:application",
        ("/healthz",),
    ),
    Stack(
        "service_uvicorn",
        "the service (`server.asgi:application`)",
        "uvicorn",
        "asgi",
        "server.asgi:application",
        ("/api/v1/ping", "/healthz"),
    ),
)


def stacks_measure(
    *, wrk: str, processes: Processes, env: dict[str, str], options: Options
) -> dict[str, Any]:
    """Every stack in turn, started, measured on each of its paths and stopped. A stack whose
    server is not installed, or that fails, is a row with a note; the others are measured."""
    rows: list[dict[str, Any]] = []
    for stack in STACKS:
        row = {
            "stack": stack.key,
            "app": stack.app_label,
            "server": stack.server,
            "interface": stack.interface,
            "module": stack.app,
        }
        if not server_available(stack.server):
            rows += [
                {**row, "path": path, "skipped": f"{stack.server} is not installed"}
                for path in stack.paths
            ]
            continue
        try:
            server = server_start(
                processes,
                env,
                name=f"stack-{stack.key}",
                app=stack.app,
                workers=options.web_workers,
                server=stack.server,
                interface=stack.interface,
                ready_path=stack.paths[0],
            )
        except BenchError as exc:
            note = f"did not start: {exc}"
            rows += [{**row, "path": path, "skipped": note} for path in stack.paths]
            continue
        with processes.running(server):
            for path in stack.paths:
                figures = _measure(wrk, server.url + path, server.pid, options)
                rows.append({**row, "path": path, **figures})
    return {
        "seconds": options.stacks_seconds,
        "workers": options.web_workers,
        "connections": options.connections,
        "threads": options.threads,
        "rows": rows,
    }


def _measure(wrk: str, url: str, pid: int, options: Options) -> dict[str, Any]:
    result, window = wrk_timed(
        fixed_load(wrk=wrk, url=url, options=options),
        seconds=options.stacks_seconds,
        warmup_seconds=1,
        cpu_groups={"web": pid},
    )
    figures = result.as_dict()
    figures.pop("curve_ms")
    return {**figures, **window}
