"""Rebuilding a season's sorted set: a long read of PostgreSQL before the first chunk loses
nothing, and a closed season is rebuilt from its archive, never from today's totals."""

import threading
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from audit.models import OperatorAction, OperatorActionKind
from leaderboards import closing, services, store
from leaderboards.models import ArchivedStanding
from leaderboards.store import writes
from matches.services import player_ban
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def test_a_rebuild_whose_first_chunk_comes_after_the_markers_ttl_keeps_the_writes_meanwhile(
    monkeypatch,
):
    # given: a rebuild's marker that would live one second (600 in production)
    monkeypatch.setattr(writes, "REBUILD_TTL_SECONDS", 1)
    store.write_standings([store.StandingWrite(7, "old", 100)])

    def chunks():
        # PostgreSQL sorts for longer than the marker's TTL before the first row, and the
        # mirror writes a new result meanwhile
        time.sleep(1.6)
        store.write_standings([store.StandingWrite(7, "new", 300)])
        time.sleep(1.0)
        yield [("old", 100), ("more", 200)]

    # when
    size = store.rebuild_standings(7, chunks, worsening=False)

    # then: the swap happened and the write made during the sort is in the set
    assert size == 3
    assert store.scores_of(7, ["old", "more", "new"]) == [100, 200, 300]


def test_the_rebuilds_heartbeat_stops_with_it():
    def chunks():
        yield [("a", 1)]

    before = threading.active_count()

    store.rebuild_standings(8, chunks, worsening=False)

    assert threading.active_count() == before


def test_a_segment_set_the_first_chunk_wrote_outlives_a_rebuild_longer_than_its_ttl(monkeypatch):
    # The TTL of a build's keys, 3 s here, renewed every second by the heartbeat: a chunk
    # renews only the segment sets it wrote, so the first chunk's must be kept alive by it.
    monkeypatch.setattr(writes, "REBUILD_TTL_SECONDS", 3)

    def chunks():
        yield [("a", 2, "1|country:DE")]
        time.sleep(4.5)
        yield [("b", 1, "1|country:FR")]

    size = store.rebuild_standings(9, chunks, worsening=False, segmented=True)

    standings = store.season_keys(9).standings
    assert size == 2
    assert store.client().zrange(f"{standings}:country:DE", 0, -1) == ["a"]
    assert store.client().zrange(f"{standings}:country:FR", 0, -1) == ["b"]
    assert store.client().ttl(f"{standings}:country:DE") == -1  # the swap made it live for good


@pytest.fixture
def closed(post_scores):
    """A season closed with three players; p1 first."""
    now = timezone.now().replace(microsecond=0)
    season = SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="past",
        starts_at=now - timedelta(days=7),
        ends_at=now + timedelta(hours=1),
    )
    for player, points in (("p1", 30), ("p2", 20), ("p3", 10)):
        answer = post_scores({"player_id": player, "points": points, "match_id": "m"})
        assert answer.status_code == 201
    return closing.season_close(season=season, force=True)


def test_an_operator_rebuild_of_a_closed_season_rebuilds_it_from_its_archive(
    closed, django_capture_on_commit_callbacks
):
    # given: the leader banned after the close (the archive keeps them first, as given)
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p1", reason="found cheating later")

    # when
    size = services.season_rebuild_by_operator(season=closed, actor=None)

    # then: Redis holds the archive, which the closed season's reads answer from
    archived = list(
        ArchivedStanding.objects.filter(season=closed).order_by("rank").values_list("player_id")
    )
    _, page = store.read_page(closed.pk, offset=0, limit=10)
    assert size == 3
    assert [(s.player_id,) for s in page] == archived == [("p1",), ("p2",), ("p3",)]
    assert store.standings_whole(closed.pk)
    assert list(
        OperatorAction.objects.filter(action=OperatorActionKind.REBUILD).values_list("details")
    ) == [({"players": 3, "from": "archive"},)]


def test_the_rebuild_commands_progress_counts_only_the_players_it_writes(
    post_scores, season, capsys, django_capture_on_commit_callbacks
):
    for player, points in (("p1", 30), ("p2", 20), ("p3", 10)):
        assert (
            post_scores({"player_id": player, "points": points, "match_id": "m"}).status_code == 201
        )
    with django_capture_on_commit_callbacks(execute=True):
        player_ban(player_id="p1", reason="cheat")

    call_command("rebuild_leaderboard", board=season.board.slug, season=season.slug)

    progress = capsys.readouterr().err
    assert "2/2" in progress
    assert "100%" in progress
