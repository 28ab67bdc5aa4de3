"""Fixtures of the fault tests: a private PostgreSQL cluster per test process (with a migrated
template database) and, per test, a private deployment that is always torn down.

These tests never touch pytest-django's test database or the shared Redis: everything they
read and break is theirs, on free ports, so they run side by side under xdist.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .deployment import Deployment, template_create
from .procs import PostgresCluster

TEMPLATE = "lb_fault_template"


@dataclass(frozen=True, slots=True)
class Cluster:
    postgres: PostgresCluster
    template: str
    key: str  # a game-server key, valid in every database copied from the template


@pytest.fixture(autouse=True)
def _clean_redis() -> Iterator[None]:
    """Overrides the suite's cleanup of the shared Redis, which these tests never write to."""
    yield


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    postgres = PostgresCluster()
    try:
        postgres.init()
        postgres.start()
        key = template_create(postgres, TEMPLATE)
        yield Cluster(postgres=postgres, template=TEMPLATE, key=key)
    finally:
        postgres.destroy()


@pytest.fixture
def deployment(cluster: Cluster, tmp_path: Path) -> Iterator[Deployment]:
    if not cluster.postgres.running():
        cluster.postgres.start()  # a previous test failed while the server was down
    logs = tmp_path / "logs"
    logs.mkdir()
    deployed = Deployment(
        cluster=cluster.postgres, template=cluster.template, key=cluster.key, logs=logs
    )
    try:
        yield deployed
    finally:
        try:
            deployed.close()
        finally:
            # Shown by pytest only when the test failed.
            print(deployed.logs_tail())
