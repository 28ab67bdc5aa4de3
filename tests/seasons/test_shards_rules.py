"""A board's number of shards: chosen on the board, taken by each new season, fixed once a season
has started (its keys in Redis are named by it), kept in range by PostgreSQL itself."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from seasons.models import MAX_SHARDS, Board, Season
from seasons.services import season_create
from tests.factories import BoardFactory, SeasonFactory
from tests.seasons.test_admin_console import board_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def _upcoming(board, slug, days=60):
    now = timezone.now().replace(microsecond=0)
    return season_create(
        board=board,
        slug=slug,
        name=slug,
        starts_at=now + timedelta(days=days),
        ends_at=now + timedelta(days=days + 7),
    )


def test_a_new_season_takes_its_boards_number_of_shards_however_it_is_created():
    board = BoardFactory(slug="big", shards=3)

    assert SeasonFactory(board=board, slug="made-by-the-orm").shards == 3
    assert _upcoming(board, "made-by-the-service").shards == 3
    assert Season.objects.filter(board=board, shards=3).count() == 2


def test_a_change_on_the_board_applies_from_the_next_season_and_the_running_one_keeps_its_own():
    board = BoardFactory(slug="growing", shards=1)
    running = SeasonFactory(board=board, slug="now")

    board.shards = 3
    board.full_clean()  # allowed while a season runs: it changes the next seasons only
    board.save()

    assert Season.objects.get(pk=running.pk).shards == 1
    assert _upcoming(board, "next").shards == 3


def test_the_number_of_a_running_season_cannot_change():
    running = SeasonFactory(board=BoardFactory(slug="live"), slug="now")
    running.shards = 3

    with pytest.raises(ValidationError) as refused:
        running.full_clean()

    assert "shards" in refused.value.message_dict
    assert "has started (shards: 1)" in refused.value.message_dict["shards"][0]
    assert Season.objects.get(pk=running.pk).shards == 1


def test_the_number_of_a_season_not_started_yet_may_change():
    upcoming = _upcoming(BoardFactory(slug="later"), "soon")
    upcoming.shards = 4

    upcoming.full_clean()
    upcoming.save()

    assert Season.objects.get(pk=upcoming.pk).shards == 4


@pytest.mark.parametrize("model", ["board", "season"])
@pytest.mark.parametrize("shards", [0, MAX_SHARDS + 1])
def test_postgresql_refuses_a_number_out_of_range(model, shards):
    board = BoardFactory(slug="checked")
    season = SeasonFactory(board=board, slug="s")
    table = Board if model == "board" else Season
    row = board if model == "board" else season

    with pytest.raises(IntegrityError), transaction.atomic():
        table.objects.filter(pk=row.pk).update(shards=shards)

    assert table.objects.get(pk=row.pk).shards == 1


def test_the_board_form_refuses_a_number_out_of_range_and_writes_nothing(operator):
    board = BoardFactory(slug="form-board", name="Form board")
    data = {**board_form(board, []), "shards": str(MAX_SHARDS + 1)}

    refused = operator.post(f"/admin/seasons/board/{board.pk}/change/", data)

    assert refused.status_code == 200  # the form again, with the error
    assert f"less than or equal to {MAX_SHARDS}" in refused.content.decode()
    assert Board.objects.get(pk=board.pk).shards == 1

    accepted = operator.post(f"/admin/seasons/board/{board.pk}/change/", {**data, "shards": "3"})

    assert accepted.status_code == 302
    assert Board.objects.get(pk=board.pk).shards == 3


def test_a_running_seasons_number_is_read_only_in_the_admin(operator):
    board = BoardFactory(slug="admin-board", shards=2)
    running = SeasonFactory(board=board, slug="now")
    upcoming = _upcoming(board, "soon")

    running_page = operator.get(f"/admin/seasons/season/{running.pk}/change/").content.decode()
    upcoming_page = operator.get(f"/admin/seasons/season/{upcoming.pk}/change/").content.decode()

    assert 'name="shards"' not in running_page
    assert 'name="shards"' in upcoming_page
