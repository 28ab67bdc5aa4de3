"""Clans and segment values: game servers make clans and set a player's clan and segments with
the profile write; bad ones are refused and write nothing."""

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from rest_framework.test import APIClient

from matches.models import Clan, GameServer, Player, PlayerSegment
from seasons.models import Board
from tests.factories import BoardFactory, MatchResultFactory, PlayerFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def dimensions(db):
    """A board with two segment dimensions, and one with a third."""
    BoardFactory(slug="ranked", segment_dimensions=["country", "platform"])
    BoardFactory(slug="casual", segment_dimensions=["mode"])


def _segments(player_id):
    return dict(PlayerSegment.objects.filter(player_id=player_id).values_list("dimension", "value"))


def test_a_game_server_makes_a_clan_and_anyone_reads_it(server, client):
    created = server.put("/api/v1/clans/red-team", {"name": "Red Team"}, format="json")
    renamed = server.put("/api/v1/clans/red-team", {"name": "The Reds"}, format="json")

    assert created.status_code == 201
    assert created.json() == {"clan_id": "red-team", "name": "Red Team", "members": 0}
    assert renamed.status_code == 200
    assert client.get("/api/v1/clans/red-team").json()["name"] == "The Reds"
    unknown = client.get("/api/v1/clans/blue")
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "clan_not_found")


def test_a_player_joins_a_clan_and_gets_segment_values_with_the_profile_write(
    server, client, dimensions
):
    server.put("/api/v1/clans/red", {}, format="json")

    joined = server.put(
        "/api/v1/players/p1",
        {"display_name": "Ada", "clan": "red", "segments": {"country": "DE", "platform": "pc"}},
        format="json",
    )
    moved = server.put(
        "/api/v1/players/p1", {"segments": {"country": "FR", "platform": None}}, format="json"
    )

    assert joined.status_code == 201
    assert joined.json() == {
        "player_id": "p1",
        "display_name": "Ada",
        "avatar_url": "",
        "clan": "red",
        "segments": {"country": "DE", "platform": "pc"},
    }
    assert moved.json()["segments"] == {"country": "FR"}
    assert moved.json()["clan"] == "red"
    assert client.get("/api/v1/players/p1").json()["segments"] == {"country": "FR"}
    assert client.get("/api/v1/clans/red").json()["members"] == 1
    left = server.put("/api/v1/players/p1", {"clan": None}, format="json")
    assert left.json()["clan"] is None
    assert Player.objects.get(player_id="p1").clan_id is None


def test_a_player_without_clan_or_segments_reads_as_before(server, client):
    server.put("/api/v1/players/p1", {"display_name": "Ada"}, format="json")

    assert client.get("/api/v1/players/p1").json() == {
        "player_id": "p1",
        "display_name": "Ada",
        "avatar_url": "",
    }


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"clan": "nobody-made-it"}, "clan_not_found"),
        ({"clan": "bad id"}, "validation_error"),
        ({"clan": 5}, "validation_error"),
        ({"segments": {"galaxy": "andromeda"}}, "unknown_segment_dimension"),
        ({"segments": {"Country": "DE"}}, "validation_error"),
        ({"segments": {"country": "D E"}}, "validation_error"),
        ({"segments": {"country": ""}}, "validation_error"),
        ({"segments": {"country": "x" * 33}}, "validation_error"),
        ({"segments": {"country": 49}}, "validation_error"),
        ({"segments": ["country", "DE"]}, "validation_error"),
        ({"segments": {f"d{i}": "x" for i in range(17)}}, "validation_error"),
    ],
)
def test_bad_clans_and_segments_are_refused_and_write_nothing(server, dimensions, body, code):
    response = server.put("/api/v1/players/p1", {"display_name": "Ada", **body}, format="json")

    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]
    assert not Player.objects.exists()
    assert not PlayerSegment.objects.exists()


def test_an_unknown_dimension_names_the_declared_ones(server, dimensions):
    body = server.put("/api/v1/players/p1", {"segments": {"galaxy": "x"}}, format="json").json()

    assert body["error"]["details"] == {
        "unknown": ["galaxy"],
        "declared": ["country", "mode", "platform"],
    }


def test_a_key_limited_to_boards_sets_only_their_dimensions(dimensions):
    ranked = SeasonFactory(board=BoardFactory(slug="ranked-2", segment_dimensions=["country"]))
    MatchResultFactory(season=ranked, board=ranked.board, player=PlayerFactory(player_id="p1"))
    _, key = GameServer.objects.create_key(name="scoped")
    GameServer.objects.get(name="scoped").boards.add(ranked.board)
    scoped = APIClient()
    scoped.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")

    allowed = scoped.put("/api/v1/players/p1", {"segments": {"country": "DE"}}, format="json")
    refused = scoped.put("/api/v1/players/p1", {"segments": {"mode": "duo"}}, format="json")

    assert allowed.status_code == 200
    assert refused.json()["error"]["code"] == "unknown_segment_dimension"
    assert _segments("p1") == {"country": "DE"}


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        ("/api/v1/clans/bad%20id", {}, 400, "invalid_clan_id"),
        ("/api/v1/clans/red", {"name": "x" * 101}, 400, "validation_error"),
        ("/api/v1/clans/red", {"motto": "x"}, 400, "validation_error"),
    ],
)
def test_bad_clans_are_refused(server, path, body, status, code):
    response = server.put(path, body, format="json")

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert not Clan.objects.exists()


def test_clans_need_a_game_server_key_to_write(client, db):
    response = client.put("/api/v1/clans/red", {}, format="json")

    assert response.status_code in (401, 403)
    assert not Clan.objects.exists()


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        (PlayerSegment, {"dimension": "Country", "value": "DE"}),
        (PlayerSegment, {"dimension": "country", "value": "D E"}),
        (Clan, {"clan_id": "bad id"}),
    ],
)
def test_postgresql_keeps_the_rules_itself(model, fields):
    if model is PlayerSegment:
        fields = {**fields, "player": PlayerFactory(player_id="p1")}

    with pytest.raises(IntegrityError), transaction.atomic():
        model.objects.create(**fields)


def test_one_value_per_dimension_and_a_clan_with_members_stays(db):
    clan = Clan.objects.create(clan_id="red")
    player = PlayerFactory(player_id="p1", clan=clan)
    PlayerSegment.objects.create(player=player, dimension="country", value="DE")
    with pytest.raises(IntegrityError), transaction.atomic():
        PlayerSegment.objects.create(player=player, dimension="country", value="FR")
    with pytest.raises(ProtectedError):
        clan.delete()


def test_boards_declare_at_most_four_well_named_dimensions(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        BoardFactory(slug="many", segment_dimensions=["a", "b", "c", "d", "e"])
    with pytest.raises(IntegrityError), transaction.atomic():
        BoardFactory(slug="caps", segment_dimensions=["Country"])


def test_the_admin_shows_clans_with_members_and_a_players_segments(client, server, dimensions):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    server.put("/api/v1/clans/red", {"name": "Red"}, format="json")
    server.put("/api/v1/players/p1", {"clan": "red", "segments": {"country": "DE"}}, format="json")

    clans = client.get("/admin/matches/clan/").content.decode()
    clan = client.get("/admin/matches/clan/red/change/").content.decode()
    player = client.get("/admin/matches/player/p1/change/").content.decode()
    board_id = Board.objects.get(slug="ranked").pk
    board = client.get(f"/admin/seasons/board/{board_id}/change/").content.decode()

    assert "red" in clans
    assert "p1" in clan
    assert "country: DE" in player
    assert 'name="segment_dimensions" value="country,platform"' in board
