"""Abuse: oversized bodies, rate limits, keys limited to boards, cheaters banned, point caps."""

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from config.building_blocks.minute_counts import MinuteCounts, minutes_read, process_counts
from leaderboards import closing, store
from leaderboards.models import ArchivedStanding
from matches.models import Clan, GameServer, MatchResult, Player, PlayerTotal
from matches.services import player_ban, player_unban
from matches.services import statements as result_statements
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def test_a_body_over_the_size_limit_is_413(server, season, settings):
    settings.MAX_REQUEST_BODY_BYTES = 1000
    body = [{"player_id": f"p{i}", "points": 1, "match_id": "m"} for i in range(40)]

    response = server.post("/api/v1/scores", body, format="json")

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"
    assert MatchResult.objects.count() == 0


RANKS = "/api/v1/leaderboard/ranks"


def asgi_post(path: str, chunks: list[bytes], headers: list[tuple[bytes, bytes]]):
    """POST through the ASGI application as a server would: the body arrives in chunks, and
    the answer says how many of them the application read."""
    from server.asgi import application

    messages = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    read = 0
    sent = []

    async def receive():
        nonlocal read
        if read < len(messages):
            read += 1
            return messages[read - 1]
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    asyncio.run(asyncio.wait_for(application(scope, receive, send), timeout=30))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), json.loads(body), read


def test_a_body_declared_too_large_is_refused_before_it_is_read(db, settings):
    settings.MAX_REQUEST_BODY_BYTES = 1000
    chunks = [b"x" * 100] * 50

    status, headers, body, read = asgi_post(
        "/api/v1/scores", chunks, [(b"content-length", b"5000"), (b"authorization", b"Api-Key k")]
    )

    assert (status, read) == (413, 0)
    assert body["error"]["code"] == "payload_too_large"
    assert headers[b"content-type"] == b"application/json"
    assert MatchResult.objects.count() == 0


def test_a_body_refused_before_django_is_counted_once_in_its_minute(db, settings):
    settings.MAX_REQUEST_BODY_BYTES = 1000
    minute = datetime(2031, 1, 2, 3, 8, tzinfo=UTC)  # no other test counts in it

    with time_machine.travel(minute.replace(second=20), tick=False):
        status, *_ = asgi_post("/api/v1/scores", [b"x" * 2000], [(b"content-length", b"2000")])
        process_counts().flush()

    assert status == 413
    assert minutes_read([minute]) == [
        MinuteCounts(minute=minute, responses_4xx=1, responses_5xx=0, sockets=0)
    ]


def test_a_body_without_a_length_is_read_only_up_to_the_limit(db, settings):
    settings.MAX_REQUEST_BODY_BYTES = 1000
    chunks = [b"x" * 100] * 50

    status, _, body, read = asgi_post("/api/v1/scores", chunks, [(b"authorization", b"Api-Key k")])

    assert status == 413
    assert read == 11  # 1,100 bytes: one chunk past the limit, then no more
    assert body == {
        "error": {
            "code": "payload_too_large",
            "message": "The request body may be at most 1000 bytes.",
            "details": None,
        }
    }
    assert MatchResult.objects.count() == 0


def test_a_body_within_the_limit_reaches_the_view_whole(settings):
    settings.MAX_REQUEST_BODY_BYTES = 1000
    raw = json.dumps({"player_ids": [], "unknown": 1}).encode()

    status, _, body, read = asgi_post(RANKS, [raw[:10], raw[10:]], [])

    assert (status, read) == (400, 2)
    assert body["error"]["code"] == "validation_error"
    assert body["error"]["details"] == {"fields": {"unknown": ["Unknown field."]}}


def test_deeply_nested_json_is_a_clean_400(server, season):
    response = server.post(
        "/api/v1/scores", "[" * 100_000 + "]" * 100_000, content_type="application/json"
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"


def test_public_reads_are_rate_limited_per_address(client, season, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"public": "3/m", "game_server": "1000/s"},
    }

    codes = [client.get("/api/v1/leaderboard/top").status_code for _ in range(4)]
    other = client.get("/api/v1/leaderboard/top", REMOTE_ADDR="10.1.2.3")

    assert codes == [200, 200, 200, 429]
    limited = client.get("/api/v1/leaderboard/top")
    assert limited.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(limited["Retry-After"]) <= 60
    assert other.status_code == 200


def test_writes_are_rate_limited_per_game_server_key(post_scores, season, settings):
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"public": "1000/s", "game_server": "2/m"},
    }

    codes = [
        post_scores({"player_id": "p", "points": 1, "match_id": f"m{i}"}).status_code
        for i in range(3)
    ]

    assert codes == [201, 201, 429]
    assert MatchResult.objects.count() == 2


def test_a_key_limited_to_boards_cannot_post_elsewhere(client, season):
    SeasonFactory(board=BoardFactory(slug="ranked"))
    server, key = GameServer.objects.create_key(name="ranked only")
    server.boards.add(season.board)
    headers = {"HTTP_AUTHORIZATION": f"Api-Key {key}"}

    allowed = client.post(
        "/api/v1/scores", {"player_id": "p", "points": 1, "match_id": "a"}, format="json", **headers
    )
    refused = client.post(
        "/api/v1/scores",
        {"player_id": "p", "points": 1, "match_id": "b", "board": "ranked"},
        format="json",
        **headers,
    )

    assert allowed.status_code == 201
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "board_not_allowed"
    assert MatchResult.objects.count() == 1


def test_a_result_over_the_boards_cap_is_rejected(post_scores, season):
    season.board.max_points_per_result = 100
    season.board.save()

    response = post_scores(
        [
            {"player_id": "p", "points": 100, "match_id": "a"},
            {"player_id": "p", "points": 101, "match_id": "b"},
        ]
    )

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "points_over_limit"
    assert response.json()["error"]["details"]["index"] == 1
    assert MatchResult.objects.count() == 0


def test_a_banned_player_disappears_and_their_new_results_do_not_count(
    client, post_scores, season, django_capture_on_commit_callbacks
):
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "fair", "points": 10, "match_id": "m1"})

    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")
    during = post_scores({"player_id": "cheat", "points": 500, "match_id": "m2"})

    assert during.status_code == 201
    assert during.json()["total_points"] == 90
    assert MatchResult.objects.get(match_id="m2").counted is False
    assert PlayerTotal.objects.get(player_id="cheat").points == 90
    assert [e["player_id"] for e in client.get("/api/v1/leaderboard/top").json()["entries"]] == [
        "fair"
    ]
    assert client.get("/api/v1/leaderboard/players/cheat").status_code == 404

    with django_capture_on_commit_callbacks(execute=True):
        player_unban(player_id="cheat")

    entries = client.get("/api/v1/leaderboard/top").json()["entries"]
    assert [(e["player_id"], e["points"]) for e in entries] == [("cheat", 90), ("fair", 10)]


def test_a_banned_player_is_left_out_of_archived_standings(
    post_scores, db, django_capture_on_commit_callbacks
):
    now = timezone.now()
    season = SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="old",
        starts_at=now - timedelta(days=3),
        ends_at=now + timedelta(days=1),
    )
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    post_scores({"player_id": "fair", "points": 10, "match_id": "m1"})
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="cheat", reason="aimbot")

    closed = closing.season_close(season=season, force=True)

    assert list(
        ArchivedStanding.objects.filter(season=closed).values_list("player_id", "rank")
    ) == [("fair", 1)]
    assert closed.snapshot_attempts == 1


def test_a_ban_that_missed_redis_is_caught_before_archiving(post_scores, db):
    now = timezone.now()
    season = SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="old",
        starts_at=now - timedelta(days=3),
        ends_at=now + timedelta(days=1),
    )
    post_scores({"player_id": "cheat", "points": 90, "match_id": "m1"})
    Player.objects.filter(player_id="cheat").update(banned_at=now)  # the refresh task was lost
    assert store.board_size(season.pk) == 1

    closed = closing.season_close(season=season, force=True)

    assert ArchivedStanding.objects.filter(season=closed).count() == 0
    # The close makes Redis's banned players PostgreSQL's before its first snapshot.
    assert closed.snapshot_attempts == 1


def test_the_banned_check_reads_only_the_banned_players_index(season):
    Player.objects.bulk_create(Player(player_id=f"p{i}") for i in range(5000))
    Player.objects.filter(player_id="p7").update(banned_at=timezone.now())
    rows = [
        {"b": season.board_id, "s": season.id, "m": "m1", "p": f"p{i}", "pts": 1, "e": None}
        for i in range(100)
    ]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE matches_player")
        cursor.execute(
            "EXPLAIN " + result_statements._INSERT_RESULTS_SQL,
            {"now": timezone.now(), "results": json.dumps(rows)},
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "player_banned" in plan
    assert "matches_player_pkey" not in plan


def test_the_players_table_has_only_the_indexes_a_query_uses(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'matches_player'")
        indexes = sorted(row[0] for row in cursor.fetchall())

    # player_name_prefix: the search by name (leaderboards/search.py), over named players only.
    assert indexes == ["matches_player_pkey", "player_banned", "player_clan", "player_name_prefix"]


def test_a_clans_members_are_found_through_the_clan_members_index(db):
    clan = Clan.objects.create(clan_id="red")
    Player.objects.bulk_create(Player(player_id=f"p{i}") for i in range(5000))
    Player.objects.filter(player_id__in=["p1", "p2"]).update(clan=clan)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE matches_player")
        sql, params = clan.members.values("player_id").query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "player_clan" in plan
