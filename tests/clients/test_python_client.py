"""The generated Python client (clients/python) against the running service: the scenario of
tests/clients/scenario.py, with the answers parsed into the client's types."""

from __future__ import annotations

from typing import Any

from leaderboard_client import AuthenticatedClient, Client
from leaderboard_client.api.leaderboard import (
    leaderboard_players_around_retrieve,
    leaderboard_players_friends_retrieve,
    leaderboard_players_retrieve,
    leaderboard_top_retrieve,
)
from leaderboard_client.api.players import players_friends_update
from leaderboard_client.api.scores import scores_create
from leaderboard_client.models import Error, FriendsInRequest, ResultInRequest

from matches.models import MatchResult, PlayerTotal
from seasons.models import Season
from tests.fault.procs import wait_until

from . import scenario
from .conftest import GAME_SERVER_RATE, Service


def test_a_game_server_uses_the_python_client(
    service: Service, game_server_key: str, season: Season
) -> None:
    # given: a game server's client (its key in `Authorization: Api-Key <key>`) and a reader's
    api = AuthenticatedClient(base_url=service.url, token=game_server_key, prefix="Api-Key")
    public = Client(base_url=service.url)
    ana, bo, _ = scenario.players("py")
    answers: dict[str, Any] = {}

    # when: it posts a batch, then reads the standings once the mirror has them
    posted = scores_create.sync_detailed(
        client=api, body=[ResultInRequest.from_dict(item) for item in scenario.batch("py")]
    )
    assert posted.status_code == 200, posted.content
    assert isinstance(posted.parsed, list)
    answers["batch"] = [result.to_dict() for result in posted.parsed]

    def top_of_three() -> dict[str, Any] | None:
        top = leaderboard_top_retrieve.sync(client=public, limit=10)
        return top.to_dict() if top is not None and top.total_players == 3 else None

    answers["top"] = wait_until(
        top_of_three, timeout=scenario.MIRROR_SECONDS, what="the batch in the top"
    )
    answers["top"].pop("as_of")
    answers["rank"] = leaderboard_players_retrieve.sync(ana, client=public).to_dict()
    answers["around"] = leaderboard_players_around_retrieve.sync(ana, client=public, n=1).to_dict()

    # and: it stores ana's friends and reads ana's friends view
    answers["friends"] = players_friends_update.sync(
        ana,
        client=api,
        body=FriendsInRequest.from_dict({"friends": [bo, "py-not-played-yet"]}),
    ).to_dict()
    answers["friends_view"] = leaderboard_players_friends_retrieve.sync(
        ana, client=public
    ).to_dict()

    # and: it posts ana's result again with other points: a conflict, as the client's Error
    conflict = scores_create.sync_detailed(
        client=api, body=ResultInRequest.from_dict({**scenario.batch("py")[0], "points": 99})
    )
    assert isinstance(conflict.parsed, Error)
    answers["conflict"] = {"status": conflict.status_code, "body": conflict.parsed.to_dict()}

    # and: it posts the same result until the key's rate runs out
    for _ in range(scenario.MAX_POSTS):
        again = scores_create.sync_detailed(
            client=api, body=ResultInRequest.from_dict(scenario.batch("py")[0])
        )
        if again.status_code != 200:
            break
    assert isinstance(again.parsed, Error), again.content
    retry_after = int(again.headers["Retry-After"])
    answers["rate_limited"] = {"status": again.status_code, "body": again.parsed.to_dict()}

    # then: every answer is the scenario's, the key told to come back within the rate's window
    assert answers == scenario.answers("py", retry_after=retry_after)
    assert GAME_SERVER_RATE.endswith("/m")
    assert 1 <= retry_after <= 60
    # and: the conflict wrote nothing, nor did the duplicates
    assert PlayerTotal.objects.get(season=season, player__player_id=ana).points == 50
    assert MatchResult.objects.filter(season=season, player__player_id=ana).count() == 1
