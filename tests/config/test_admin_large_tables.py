"""Admin changelists of the tables that grow without bound: no page counts a whole table, and
search goes through an index (an exact player id)."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from config.building_blocks import admin as admin_paging
from leaderboards import archive_partitions
from seasons.models import Season, SeasonState
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db

LARGE_TABLE_PAGES = [
    "/admin/matches/player/",
    "/admin/matches/matchresult/",
    "/admin/matches/playertotal/",
    "/admin/leaderboards/archivedstanding/",
    "/admin/leaderboards/seasonreward/",
    "/admin/leaderboards/reconciliationrun/",
    "/admin/webhooks/webhookevent/",
    "/admin/webhooks/webhookdelivery/",
]


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


@pytest.fixture
def played(post_scores, season):
    body = [{"player_id": f"p{i}", "points": 10 + i, "match_id": "m1"} for i in range(6)]
    assert post_scores(body).status_code == 200


@pytest.mark.parametrize("path", LARGE_TABLE_PAGES)
def test_a_changelist_never_counts_a_whole_table(operator, played, path, monkeypatch):
    monkeypatch.setattr(admin_paging, "EXACT_COUNT_LIMIT", 3)

    with CaptureQueriesContext(connection) as queries:
        page = operator.get(path)

    assert page.status_code == 200
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert counts, "the changelist counted nothing at all"
    assert all(re.search(r"\bLIMIT 4\b", sql) for sql in counts), counts


def test_players_are_found_by_their_exact_id_only(operator, played):
    exact = operator.get("/admin/matches/playertotal/", {"q": "p3"})
    part = operator.get("/admin/matches/playertotal/", {"q": "p"})

    assert exact.status_code == part.status_code == 200
    assert exact.context["cl"].result_count == 1
    assert [t.player_id for t in exact.context["cl"].result_list] == ["p3"]
    assert part.context["cl"].result_count == 0


def test_past_the_exact_limit_an_unfiltered_list_shows_the_tables_estimate(
    operator, played, monkeypatch
):
    monkeypatch.setattr(admin_paging, "EXACT_COUNT_LIMIT", 3)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE matches_playertotal")

    page = operator.get("/admin/matches/playertotal/")

    # the estimate, never less than what was counted (limit + 1)
    assert page.context["cl"].result_count >= 4


def test_the_archives_estimate_is_the_sum_of_its_seasons_partitions(operator, monkeypatch):
    # given: two seasons archived, 6 and 5 standings, in partitions of their own (analyzed)
    monkeypatch.setattr(admin_paging, "EXACT_COUNT_LIMIT", 3)
    now = timezone.now()
    for size in (6, 5):
        season = SeasonFactory(state=SeasonState.CLOSED)
        with connection.cursor() as cursor:
            name = archive_partitions.partition_create(cursor, season_id=season.pk)
            cursor.execute(
                f"INSERT INTO {name} (season_id, rank, competition_rank, player_id, points,"  # noqa: S608
                " reached_at) SELECT %s, i, i, 'p' || i, 100 - i, %s FROM generate_series(1, %s) i",
                [season.pk, now, size],
            )
            archive_partitions.partition_index(cursor, name=name)
            archive_partitions.partition_attach(cursor, season_id=season.pk)

    page = operator.get("/admin/leaderboards/archivedstanding/")

    # the partitioned table has no estimate of its own: its partitions' add up
    assert page.context["cl"].result_count == 11


def test_a_boards_page_lists_only_its_seasons_not_closed_yet(operator, db):
    # given: a board with many closed seasons and a running one
    board = BoardFactory(slug="hourly")
    start = timezone.now().replace(microsecond=0) - timedelta(hours=30)
    for hour in range(29):
        SeasonFactory(
            board=board,
            slug=f"h{hour}",
            starts_at=start + timedelta(hours=hour),
            ends_at=start + timedelta(hours=hour + 1),
            state=SeasonState.CLOSED,
        )
    running = SeasonFactory(
        board=board,
        slug="now",
        starts_at=start + timedelta(hours=29),
        ends_at=start + timedelta(hours=31),
    )

    page = operator.get(f"/admin/seasons/board/{board.pk}/change/")

    assert page.status_code == 200
    formset = next(f for f in page.context["inline_admin_formsets"] if f.opts.model is Season)
    assert [form.original for form in formset if form.original] == [running]
