"""The benchmark's own PostgreSQL: a cluster under .run/bench-pg/ started with the project's
tuned settings (`postgres_settings` in scripts/devservices.py, the one place they live) on a
free loopback port, and stopped when the run ends; its data stays for the next run.
"""

from __future__ import annotations

import atexit
from dataclasses import dataclass
from pathlib import Path

from scripts.devservices import (
    ServiceError,
    machine_memory_bytes,
    pg_bindir,
    pg_cluster_init,
    pg_cluster_running,
    pg_cluster_start,
    pg_cluster_stop,
    postgres_settings,
)

from .errors import BenchError
from .processes import free_port

SUPERUSER = "postgres"


@dataclass(frozen=True)
class BenchCluster:
    data: Path
    port: int

    @property
    def url(self) -> str:
        return f"postgres://{SUPERUSER}@127.0.0.1:{self.port}/postgres"


def bench_cluster_start(home: Path) -> BenchCluster:
    """Start the bench's cluster in `home` (initdb first if there is none); it is stopped when
    this process exits, however the run ends short of a SIGKILL."""
    bindir = pg_bindir()
    if bindir is None:
        raise BenchError(
            "PostgreSQL's binaries are missing: `make setup` installs them (as root), or "
            "`sudo apt-get install postgresql`; or point --database-url at a running server"
        )
    settings = postgres_settings(memory_bytes=machine_memory_bytes(), bindir=bindir)
    try:
        data = pg_cluster_init(home, bindir=bindir, user=SUPERUSER)
        if pg_cluster_running(data, bindir=bindir):
            # Left behind by a run that was killed: restart it with this run's settings.
            pg_cluster_stop(data, bindir=bindir)
        port = free_port()
        pg_cluster_start(data, bindir=bindir, port=port, settings=settings)
    except ServiceError as exc:
        raise BenchError(str(exc)) from exc
    atexit.register(pg_cluster_stop, data, bindir=bindir)
    print(f"[bench] PostgreSQL of the bench's own on 127.0.0.1:{port} (data in {data})", flush=True)
    return BenchCluster(data=data, port=port)
