"""Fixtures of the clients' tests: the TypeScript package's tools."""

from __future__ import annotations

import fcntl
import tempfile
from pathlib import Path

import pytest

from scripts import clients
from scripts.processes import ServiceError


@pytest.fixture(scope="session")
def typescript_tools() -> Path:
    """clients/typescript/node_modules, installed from the lock file once per machine (the
    xdist workers wait for each other)."""
    lock_path = Path(tempfile.gettempdir()) / "leaderboard-clients-npm-ci.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            clients.typescript_install()
        except ServiceError as exc:
            pytest.fail(str(exc), pytrace=False)
    return clients.NODE_MODULES
