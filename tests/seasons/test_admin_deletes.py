"""Delete is offered only where it can succeed: an unused future season and a board without
seasons are deleted; a season that started or holds results, a board with seasons, and any
player (the record of their results) offer no delete."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from matches.models import Player
from seasons.models import Board, Season
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator(client):
    client.force_login(User.objects.create_superuser("operator", "op@example.com", "pw"))
    return client


def test_an_unused_future_season_is_deleted(operator):
    later = timezone.now() + timedelta(days=30)
    board = BoardFactory(slug="cup")
    future = SeasonFactory(
        board=board, slug="next", starts_at=later, ends_at=later + timedelta(days=7)
    )

    asked = operator.get(f"/admin/seasons/season/{future.pk}/delete/")
    done = operator.post(f"/admin/seasons/season/{future.pk}/delete/", {"post": "yes"})

    assert asked.status_code == 200
    assert done.status_code == 302
    assert not Season.objects.filter(pk=future.pk).exists()


def test_a_running_season_with_results_offers_no_delete(operator, post_scores, season):
    assert post_scores({"player_id": "p1", "points": 5, "match_id": "m1"}).status_code == 201

    page = operator.get(f"/admin/seasons/season/{season.pk}/change/").content.decode()
    refused = operator.post(f"/admin/seasons/season/{season.pk}/delete/", {"post": "yes"})

    assert f"/admin/seasons/season/{season.pk}/delete/" not in page
    assert refused.status_code == 403
    assert Season.objects.filter(pk=season.pk).exists()


def test_a_board_without_seasons_is_deleted_and_one_with_seasons_offers_no_delete(operator, season):
    empty = BoardFactory(slug="empty")

    page = operator.get(f"/admin/seasons/board/{season.board.pk}/change/").content.decode()
    refused = operator.post(f"/admin/seasons/board/{season.board.pk}/delete/", {"post": "yes"})
    done = operator.post(f"/admin/seasons/board/{empty.pk}/delete/", {"post": "yes"})

    assert f"/admin/seasons/board/{season.board.pk}/delete/" not in page
    assert refused.status_code == 403
    assert done.status_code == 302
    left = Board.objects.filter(slug__in=["empty", season.board.slug]).values_list("slug")
    assert list(left) == [(season.board.slug,)]


def test_players_offer_no_delete(operator, post_scores, season):
    assert post_scores({"player_id": "p1", "points": 5, "match_id": "m1"}).status_code == 201

    page = operator.get("/admin/matches/player/p1/change/").content.decode()
    listing = operator.get("/admin/matches/player/").content.decode()
    refused = operator.post("/admin/matches/player/p1/delete/", {"post": "yes"})

    assert "/admin/matches/player/p1/delete/" not in page
    assert "delete_selected" not in listing
    assert refused.status_code == 403
    assert Player.objects.filter(player_id="p1").exists()
