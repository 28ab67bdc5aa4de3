"""`manage.py close_season --force` is an operator's close now from a shell: audited once (as
`system`), refused without a row for a season that has not started; a close that was due anyway
or is resumed is not an operator's action."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from audit.models import OperatorAction
from seasons.models import Season, SeasonState
from tests.factories import BoardFactory, SeasonFactory

pytestmark = pytest.mark.django_db


def logged() -> list[tuple]:
    return list(
        OperatorAction.objects.order_by("id").values_list(
            "actor", "actor_name", "action", "board", "season", "details"
        )
    )


def test_a_forced_close_from_the_command_line_is_audited_once(post_scores, season):
    assert post_scores({"player_id": "p1", "points": 5, "match_id": "m"}).status_code == 201
    ends_at = season.ends_at

    call_command("close_season", "--season", "s1", "--force", "--no-progress")
    call_command("close_season", "--season", "s1", "--force", "--no-progress")

    assert Season.objects.get(pk=season.pk).state == SeasonState.CLOSED
    assert logged() == [
        (
            None,
            "system",
            "close_now",
            "global",
            "s1",
            {"ends_at_before": ends_at.isoformat(), "command": "close_season --force"},
        )
    ]


def test_a_close_that_was_due_anyway_is_not_an_operators_action(db):
    ended = timezone.now().replace(microsecond=0) - timedelta(days=2)
    SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="past",
        starts_at=ended - timedelta(days=7),
        ends_at=ended,
    )

    call_command("close_season", "--season", "past", "--force", "--no-progress")

    assert Season.objects.get(slug="past").state == SeasonState.CLOSED
    assert logged() == []


def test_forcing_the_close_of_a_season_that_has_not_started_is_refused_with_no_row(db):
    start = timezone.now().replace(microsecond=0) + timedelta(days=3)
    planned = SeasonFactory(
        board=BoardFactory(slug="global"),
        slug="next",
        starts_at=start,
        ends_at=start + timedelta(days=7),
    )

    with pytest.raises(CommandError) as refused:
        call_command("close_season", "--season", "next", "--force", "--no-progress")

    assert str(refused.value) == (
        f"Season 'next' has not started (it starts at {start:%Y-%m-%d %H:%M} UTC): there is "
        "nothing to close. Delete it or move its window instead."
    )
    assert Season.objects.filter(pk=planned.pk).values_list("state", "ends_at")[0] == (
        SeasonState.OPEN,
        planned.ends_at,
    )
    assert logged() == []
