"""The TypeScript client (clients/typescript) against the running service: the package and its
example scenario (examples/scenario.ts, tests/clients/scenario.py) type-checked and compiled
with tsc, then run with node; it prints every answer as JSON."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from matches.models import MatchResult, PlayerTotal
from scripts import clients
from seasons.models import Season

from . import scenario
from .conftest import Service

# Bounds on the tools, not speed requirements.
TSC_SECONDS = 300
SCENARIO_SECONDS = 120


def _run(args: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=clients.TYPESCRIPT_CLIENT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_a_game_server_uses_the_typescript_client(
    service: Service, game_server_key: str, season: Season, typescript_tools: Path
) -> None:
    # given: the package and its scenario compiled, which type-checks them against the schema
    node = shutil.which("node")
    if node is None:
        pytest.fail(clients.NODE_MISSING, pytrace=False)
    compiled = _run([str(typescript_tools / ".bin" / "tsc"), "--project", "."], timeout=TSC_SECONDS)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr

    # when: node runs the scenario against the service with a game server's key
    played = _run(
        [node, "dist/examples/scenario.js", service.url, game_server_key, "ts"],
        timeout=SCENARIO_SECONDS,
    )

    # then: it ends well and prints the scenario's answers
    assert played.returncode == 0, played.stdout + played.stderr
    answers = json.loads(played.stdout)
    answers["top"].pop("as_of")
    retry_after = answers.pop("retry_after")
    assert answers == scenario.answers("ts", retry_after=retry_after)
    assert 1 <= retry_after <= 60
    # and: the conflict wrote nothing, nor did the duplicates
    ana = scenario.players("ts")[0]
    assert PlayerTotal.objects.get(season=season, player__player_id=ana).points == 50
    assert MatchResult.objects.filter(season=season, player__player_id=ana).count() == 1
